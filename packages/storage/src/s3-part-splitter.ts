/**
 * Cuts a byte stream into parts of exactly `partBytes`, uploading each as soon as it is full
 * while the next one fills: at most one upload in flight, so memory stays about two parts per
 * append and the socket keeps flowing while a part travels. What is left at the end (less than
 * a part) is handed back to the caller, which keeps it as the trailing remainder.
 */
export class PartSplitter {
  private bufs: Buffer[];
  private bufBytes: number;
  private inFlight: Promise<void> = Promise.resolve();
  private error: unknown = null;

  /**
   * @param nextPart the S3 part number the first full part gets (1-based)
   * @param head bytes already stored as the previous remainder; they open the first part
   */
  constructor(
    private nextPart: number,
    private readonly partBytes: number,
    private readonly upload: (partNumber: number, body: Buffer) => Promise<void>,
    head: Buffer,
  ) {
    this.bufs = head.length > 0 ? [head] : [];
    this.bufBytes = head.length;
  }

  async push(chunk: Buffer): Promise<void> {
    this.bufs.push(chunk);
    this.bufBytes += chunk.length;
    while (this.bufBytes >= this.partBytes) {
      const all = Buffer.concat(this.bufs, this.bufBytes);
      const part = all.subarray(0, this.partBytes);
      const rest = all.subarray(this.partBytes);
      this.bufs = rest.length > 0 ? [rest] : [];
      this.bufBytes = rest.length;
      await this.inFlight;
      this.throwIfFailed();
      const n = this.nextPart++;
      this.inFlight = this.upload(n, part).catch((e: unknown) => void (this.error ??= e));
    }
  }

  /** Waits for the last part; resolves with the remainder (shorter than a part, maybe empty). */
  async finish(): Promise<Buffer> {
    await this.inFlight;
    this.throwIfFailed();
    return Buffer.concat(this.bufs, this.bufBytes);
  }

  /** Waits for the upload in flight, whatever its outcome. */
  async settle(): Promise<void> {
    await this.inFlight;
  }

  private throwIfFailed(): void {
    if (this.error) throw this.error;
  }
}
