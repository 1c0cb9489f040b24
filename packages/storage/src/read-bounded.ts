import type { AppendOptions } from './blob-store';

/**
 * The reading side of every driver's `appendAt`: counts the body against `opts.maxBytes`
 * (throwing `opts.tooLarge()` at the first chunk past it, before it is seen or stored), shows
 * each chunk to `opts.onData` (waiting when it returns a promise: backpressure), then hands it
 * to `store`. Resolves with the bytes read.
 */
export async function readBounded(
  body: AsyncIterable<Buffer>,
  opts: AppendOptions,
  store: (chunk: Buffer) => Promise<void>,
): Promise<number> {
  let received = 0;
  for await (const chunk of body) {
    received += chunk.length;
    if (received > opts.maxBytes) throw opts.tooLarge();
    const hashed = opts.onData?.(chunk);
    if (hashed) await hashed;
    await store(chunk);
  }
  return received;
}
