/** Nearest-rank percentile (p in 0..100) of unsorted samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

export interface LatencySummary {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export function summarize(samplesMs: readonly number[]): LatencySummary {
  return {
    n: samplesMs.length,
    p50: percentile(samplesMs, 50),
    p99: percentile(samplesMs, 99),
    max: samplesMs.length ? Math.max(...samplesMs) : Number.NaN,
  };
}
