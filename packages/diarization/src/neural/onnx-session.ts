import { Worker } from 'node:worker_threads';

// Runs in a worker thread, so plain JavaScript: segmentation-3.0 and CAM++ through
// onnxruntime-node, one request at a time. A canceled request is skipped if not yet started.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ortPath);
// No memory patterns: CAM++ sees a different frame count on nearly every call, and a pattern
// cached per input shape would grow without bound on long files.
const opts = { intraOpNumThreads: workerData.threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', enableMemPattern: false };
const seg = ort.InferenceSession.create(workerData.segmentationPath, opts);
// CAM++ only when first asked for: the speech pass (segmentation alone) never loads it.
let emb = null;
const embedding = () => (emb ??= ort.InferenceSession.create(workerData.embeddingPath, opts));
const canceled = new Set();
let queue = Promise.resolve();
parentPort.on('message', (msg) => {
  if (msg.type === 'cancel') canceled.add(msg.id);
  else if (msg.type === 'close') queue = queue.then(release);
  else queue = queue.then(() => run(msg));
});
// After the run in progress (native code must not be torn down mid-run: the process aborts).
async function release() {
  for (const s of [seg, emb]) if (s) await s.then((x) => x.release()).catch(() => undefined);
  process.exit(0);
}
async function run(msg) {
  try {
    if (canceled.has(msg.id)) throw new Error('canceled');
    let out;
    if (msg.type === 'segment') {
      const s = await seg;
      const r = await s.run({ waveform: new ort.Tensor('float32', msg.data, [msg.batch, 1, msg.data.length / msg.batch]) });
      out = r.log_probs.data;
    } else {
      const s = await embedding();
      const r = await s.run({ fbank: new ort.Tensor('float32', msg.data, [1, msg.data.length / 80, 80]) });
      out = r.embedding.data;
    }
    const copy = Float32Array.from(out);
    parentPort.postMessage({ id: msg.id, data: copy }, [copy.buffer]);
  } catch (e) {
    parentPort.postMessage({ id: msg.id, error: e && e.message ? e.message : String(e) });
  } finally {
    canceled.delete(msg.id);
  }
}
`;

export interface NeuralModelPaths {
  segmentation: string;
  embedding: string;
}

interface Pending {
  resolve: (data: Float32Array) => void;
  reject: (err: Error) => void;
}

/**
 * segmentation-3.0 and CAM++ in a worker thread (onnxruntime-node runs a model synchronously:
 * on the main thread it would stall the job's lock renewals). Starts on first use; unref'd while
 * idle. An abort rejects at once with the signal's reason; the worker drops the request if it
 * has not started it.
 */
export class NeuralSession {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private closed = false;
  private nextId = 1;

  constructor(
    private readonly paths: NeuralModelPaths,
    private readonly threads: number,
  ) {}

  /** `batch` windows of equal length, concatenated: powerset log-probabilities [batch, frames, 7]. */
  segment(windows: Float32Array, batch: number, signal?: AbortSignal): Promise<Float32Array> {
    return this.request('segment', windows, batch, signal);
  }

  /** Mean-normalised fbank frames (frames x 80): one 192-dim CAM++ embedding. */
  embed(features: Float32Array, signal?: AbortSignal): Promise<Float32Array> {
    return this.request('embed', features, 1, signal);
  }

  /**
   * Stops the thread once the model run in progress ends (at most `graceMs`, then it is
   * terminated): tearing onnxruntime down in the middle of a run or of loading a model aborts
   * the whole process (a worker stopped with SIGTERM exited SIGABRT). Requests sent before run
   * first; those sent after are rejected.
   */
  async close(graceMs = 10_000): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close' });
    worker.ref();
    const timer = setTimeout(() => void worker.terminate(), graceMs);
    await exited;
    clearTimeout(timer);
  }

  private request(
    type: string,
    data: Float32Array,
    batch: number,
    signal?: AbortSignal,
  ): Promise<Float32Array> {
    signal?.throwIfAborted();
    // A thread started now would be torn down mid-load when the process exits.
    if (this.closed) return Promise.reject(new Error('neural diarization: the session is closed'));
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<Float32Array>((resolve, reject) => {
      const settle = () => {
        signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
        if (this.pending.size === 0) worker.unref();
      };
      const onAbort = () => {
        worker.postMessage({ type: 'cancel', id });
        settle();
        reject(signal!.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve: (d) => (settle(), resolve(d)),
        reject: (e) => (settle(), reject(e)),
      });
      worker.ref();
      const copy = Float32Array.from(data); // transferred: the caller keeps its buffer
      worker.postMessage({ type, id, data: copy, batch }, [copy.buffer]);
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        ortPath: require.resolve('onnxruntime-node'),
        segmentationPath: this.paths.segmentation,
        embeddingPath: this.paths.embedding,
        threads: this.threads,
      },
    });
    worker.on('message', (msg: { id: number; data?: Float32Array; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (msg.data) p?.resolve(msg.data);
      else p?.reject(new Error(`neural diarization: ${msg.error}`));
    });
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const p of [...this.pending.values()]) p.reject(err);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`neural diarization worker exited with code ${code}`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }
}
