import type { Readable } from 'node:stream';
import { HarkError } from '@hark/core';

/** A request body's watch for silence: `touch` on every byte received, `stop` once it is read. */
export interface IdleWatch {
  touch(): void;
  stop(): void;
}

/**
 * Drops a request body that receives no byte for `ms`: a client gone without FIN or RST would
 * otherwise keep its upload's lock, or its Idempotency-Key's, and the bytes they reserve, until
 * Node's 300 s request time-out. The body is destroyed with 408 `request_timeout` (retryable),
 * which is what its reader then throws.
 */
export function watchIdle(body: Readable, ms: number): IdleWatch {
  const timer = setTimeout(
    () => body.destroy(new HarkError('request_timeout', `No byte of the body arrived for ${ms / 1000} s.`)),
    ms,
  );
  return { touch: () => timer.refresh(), stop: () => clearTimeout(timer) };
}
