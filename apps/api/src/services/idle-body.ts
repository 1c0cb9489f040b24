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
 * Node's 300 s request time-out. Only while the body waits for its client: bytes it holds that
 * its reader has not taken yet (the blob store still writing the last ones), or a body received
 * in full, are no silence of the client's. The body is destroyed with 408 `request_timeout`,
 * which is what its reader then throws; Node closes the connection with it, so the client
 * (gone, as a rule) gets no answer.
 */
export function watchIdle(body: Readable, ms: number): IdleWatch {
  const timer = setTimeout(() => {
    if (body.readableLength > 0 || receivedInFull(body)) {
      timer.refresh();
      return;
    }
    body.destroy(new HarkError('request_timeout', `No byte of the body arrived for ${ms / 1000} s.`));
  }, ms);
  return { touch: () => timer.refresh(), stop: () => clearTimeout(timer) };
}

/**
 * A request whose message ended (`complete`), or a stream whose source pushed its end (a form's
 * file part once its closing boundary came): its reader may still be storing the last bytes.
 * `readableEnded` turns true only when the reader takes the end, which a reader busy storing the
 * last chunk has not done yet, so the stream's own state says when the source ended.
 */
function receivedInFull(body: Readable): boolean {
  if ((body as { complete?: boolean }).complete === true || body.readableEnded) return true;
  return (body as { _readableState?: { ended?: boolean } })._readableState?.ended === true;
}
