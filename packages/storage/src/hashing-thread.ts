import { Worker } from 'node:worker_threads';
import type { RunningHash, UploadHashing } from './upload-hashing';

/**
 * Resumable SHA-256 (the state saved in Postgres between chunks, see ResumableSha256) computed on
 * a worker thread, so an upload's hashing runs beside the receiving and the disk writes instead
 * of taking turns with them on the event loop. One thread per process serves every upload.
 */

// The thread's code: plain CommonJS, loading hash-wasm from the path the parent resolved (the
// apps are bundled, so there is no source file next to this one to point a Worker at).
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createSHA256 } = require(workerData.hashWasm);
const sessions = new Map();
parentPort.on('message', async (m) => {
  try {
    if (m.op === 'start') {
      const h = await createSHA256();
      h.init();
      if (m.state && m.state.length > 0) h.load(m.state);
      sessions.set(m.id, h);
    } else if (m.op === 'update') {
      sessions.get(m.id).update(m.data);
    } else if (m.op === 'save') {
      const state = sessions.get(m.id).save();
      parentPort.postMessage({ id: m.id, seq: m.seq, state });
      return;
    } else if (m.op === 'end') {
      sessions.delete(m.id);
    }
    if (m.seq !== undefined) parentPort.postMessage({ id: m.id, seq: m.seq });
  } catch (e) {
    parentPort.postMessage({ id: m.id, seq: m.seq, error: String(e && e.message || e) });
  }
});
`;

interface Reply {
  id: number;
  seq?: number;
  state?: Uint8Array;
  error?: string;
}

type Pending = { resolve: (r: Reply) => void; reject: (e: Error) => void };

/** Bytes an upload may have sent to the thread and not yet seen hashed before `update` waits. */
const MAX_UNHASHED_BYTES = 4 * 1024 * 1024;

export class HashingThread implements UploadHashing {
  private worker: Worker | null = null;
  private nextId = 1;
  private nextSeq = 1;
  private readonly pending = new Map<number, Pending>();

  /** Starts a hash at `saved` (a state from ResumableSha256/HashSession.save, or none). */
  async start(saved?: Uint8Array | null): Promise<HashSession> {
    const id = this.nextId++;
    await this.call({ op: 'start', id, state: saved && saved.length > 0 ? saved : undefined });
    return new HashSession(this, id);
  }

  /** Stops the thread (tests, shutdown); a later `start` makes a new one. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }

  /** @internal Posts without waiting. */
  post(msg: { op: 'end'; id: number }): void {
    this.thread().postMessage(msg);
  }

  /**
   * @internal Hands the thread its own exact-size copy of `chunk`, transferred rather than
   * cloned: a cloned view of a pooled socket buffer would copy the whole pool.
   */
  postBytes(id: number, chunk: Uint8Array): void {
    const copy = new Uint8Array(chunk);
    this.thread().postMessage({ op: 'update', id, data: copy }, [copy.buffer]);
  }

  /** @internal Posts and resolves with the thread's answer. */
  call(msg: Record<string, unknown> & { id: number }): Promise<Reply> {
    const seq = this.nextSeq++;
    const w = this.thread();
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      w.ref(); // an answer is awaited: keep the process alive for it
      w.postMessage({ ...msg, seq });
    }).then((r) => {
      if (r.error) throw new Error(`hashing thread: ${r.error}`);
      return r;
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { hashWasm: require.resolve('hash-wasm') },
      // It holds a few hash states and the bytes in flight: keep its heap small.
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 32 },
    });
    w.on('message', (r: Reply) => {
      if (r.seq === undefined) return;
      const p = this.pending.get(r.seq);
      this.pending.delete(r.seq);
      if (this.pending.size === 0) w.unref();
      p?.resolve(r);
    });
    const fail = (e: Error) => {
      if (this.worker === w) this.worker = null;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`hashing thread exited (${code})`)));
    // Referenced only while an answer is awaited (see `call`): an idle thread must not keep the
    // process alive. After the listeners, since adding a 'message' listener refs it again.
    w.unref();
    this.worker = w;
    return w;
  }
}

/** One running hash on the thread. Call `end` when done with it (also after a failure). */
export class HashSession implements RunningHash {
  private unacked = 0;
  private ended = false;

  constructor(
    private readonly thread: HashingThread,
    private readonly id: number,
  ) {}

  /**
   * Queues `chunk` for hashing. Returns a promise only when too many bytes are queued: the
   * caller awaits it, so a slow thread slows the upload instead of piling up memory.
   */
  update(chunk: Uint8Array): Promise<void> | undefined {
    this.thread.postBytes(this.id, chunk);
    this.unacked += chunk.length;
    if (this.unacked < MAX_UNHASHED_BYTES) return undefined;
    this.unacked = 0;
    return this.thread.call({ op: 'ack', id: this.id }).then(() => undefined);
  }

  /** The state after every byte passed to `update` so far. */
  async save(): Promise<Uint8Array> {
    const r = await this.thread.call({ op: 'save', id: this.id });
    return r.state!;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.thread.post({ op: 'end', id: this.id });
  }
}
