/**
 * Turns many small calls into few batched ones (the DataLoader pattern, for hot reads and
 * Redis scripts). Calls made during one turn of the event loop (the I/O callbacks of one poll
 * phase and their promise continuations) are handed to `run` together when that turn ends
 * (`setImmediate`), so a busy process sends one query where it would have sent dozens, and an
 * idle one adds no delay beyond the current turn.
 *
 * Every batch starts after each of its calls was made, so a batched read sees every write that
 * finished before its call (never a result fetched earlier on someone else's behalf).
 */
export interface CallBatcherOptions {
  /** Most calls in one batch; the rest go out in further batches at the same time. */
  maxBatch: number;
}

interface Waiting<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (err: unknown) => void;
}

export class CallBatcher<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private scheduled = false;
  private readonly maxBatch: number;

  /** `run` answers every input, in order (an output per input); a rejection fails the whole batch. */
  constructor(
    private readonly run: (inputs: readonly I[]) => Promise<readonly O[]>,
    options: CallBatcherOptions,
  ) {
    if (!(options.maxBatch >= 1)) throw new RangeError('maxBatch must be at least 1');
    this.maxBatch = options.maxBatch;
  }

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.waiting.length > 0) void this.runBatch(this.waiting.splice(0, this.maxBatch));
    });
  }

  private async runBatch(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const outputs = await this.run(batch.map((w) => w.input));
      if (outputs.length !== batch.length) {
        throw new Error(`batch answered ${outputs.length} of ${batch.length} calls`);
      }
      batch.forEach((w, i) => w.resolve(outputs[i] as O));
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
