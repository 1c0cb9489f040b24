/**
 * The transcript failure codes (api-spec "Transcript failure codes") that media work can produce.
 * The others (`audio_too_long`, `insufficient_balance`, ...) are decided by the worker from the
 * values this package returns.
 */
export type MediaErrorCode = 'audio_invalid' | 'engine_failed';

export interface MediaErrorOptions {
  /** True when a retry may succeed (engine crashed, killed by the OS, disk full). */
  transient: boolean;
  /** Last ~8 KB of the process's stderr, when a process was involved. */
  stderr?: string;
  cause?: unknown;
}

/**
 * A media operation failed in a way the worker maps onto a transcript failure: `transient`
 * errors are retried, the others become a permanent failure (BullMQ `UnrecoverableError`).
 */
export class MediaError extends Error {
  override readonly name = 'MediaError';
  readonly code: MediaErrorCode;
  readonly transient: boolean;
  readonly stderr: string | null;

  constructor(code: MediaErrorCode, message: string, options: MediaErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.transient = options.transient;
    this.stderr = options.stderr ?? null;
  }
}

/**
 * The caller aborted the operation (transcript canceled, worker shutting down). Not a failure:
 * a canceled transcript has no error code. `name` is 'AbortError' like the platform's own.
 */
export class MediaAbortError extends Error {
  override readonly name = 'AbortError';
  readonly code = 'ABORT_ERR';

  constructor(message = 'The operation was aborted', cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

/** True for this package's abort error and for the platform's (`signal.reason` by default). */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}
