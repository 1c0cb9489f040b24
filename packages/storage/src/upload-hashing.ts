/**
 * How the API hashes upload bytes as they arrive. A running hash starts from the state saved in
 * Postgres after the previous chunk (`uploads.hash_state`, in ResumableSha256's format) and
 * saves the state after this one, so any replica can take the next chunk and no byte is read
 * twice.
 */
export interface RunningHash {
  /**
   * Hashes `chunk`. Returns a promise only when the caller must wait before passing more
   * (backpressure); it never keeps a reference to `chunk` after returning or settling.
   */
  update(chunk: Uint8Array): Promise<void> | undefined;
  /** The state after every byte passed to `update` so far (ResumableSha256's format). */
  save(): Promise<Uint8Array>;
  /** Releases the session (also after a failure). */
  end(): void;
}

export interface UploadHashing {
  start(saved?: Uint8Array | null): Promise<RunningHash>;
}

export type UploadHasherKind = 'auto' | 'native' | 'thread';
