/** Polls `predicate` until it returns a truthy value, sleeping between polls; throws on time-out. */
export async function waitFor<T>(
  predicate: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  {
    timeout = 10_000,
    interval = 50,
    message = 'condition',
  }: { timeout?: number; interval?: number; message?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeout;
  let last: unknown;
  for (;;) {
    try {
      const v = await predicate();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `waitFor timed out after ${timeout} ms waiting for ${message}${last instanceof Error ? `: ${last.message}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}
