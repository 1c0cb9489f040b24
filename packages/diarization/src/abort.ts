/**
 * Throws the signal's reason (an `AbortError` DOMException unless the caller gave one), so a
 * canceled transcript stops diarizing between steps instead of running to the end.
 */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  signal?.throwIfAborted();
}
