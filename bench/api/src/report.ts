// Formats the bench's figures next to its targets. Targets are printed, never asserted: the
// figures depend on the machine and on what else runs on it.
import type { LoadResult } from './load';
import type { ServerKind } from './server';

export interface Measured {
  kind: ServerKind;
  result: LoadResult;
  notes: string[];
  /** 1-minute load average just before the measured run (includes the warm-up's load). */
  loadBefore: number;
}

export const TARGETS = { minRatio: 0.3, maxP99Ms: 50 } as const;

const f = (n: number, digits = 1) => n.toFixed(digits);
const pad = (s: string, n: number) => s.padStart(n);

export function formatReport(hark: Measured, bare: Measured): string {
  const ratio = bare.result.rps > 0 ? hark.result.rps / bare.result.rps : 0;
  const row = (label: string, m: Measured) =>
    [
      label.padEnd(14),
      pad(f(m.result.rps), 10),
      pad(f(m.result.p50Ms, 2), 9),
      pad(f(m.result.p90Ms, 2), 9),
      pad(f(m.result.p99Ms, 2), 9),
      pad(f(m.result.maxMs, 2), 9),
      pad(String(m.result.errors), 7),
      pad(f(m.loadBefore, 2), 9),
    ].join(' ');
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const lines = [
    [
      'target'.padEnd(14),
      pad('req/s', 10),
      pad('p50 ms', 9),
      pad('p90 ms', 9),
      pad('p99 ms', 9),
      pad('max ms', 9),
      pad('errors', 7),
      pad('load1', 9),
    ].join(' '),
    row('hark api', hark),
    row('bare express', bare),
    '',
    `ratio hark/bare req/s: ${f(ratio, 3)}   (target >= ${TARGETS.minRatio}: ${verdict(ratio >= TARGETS.minRatio)})`,
    `hark p99: ${f(hark.result.p99Ms, 2)} ms   (target < ${TARGETS.maxP99Ms} ms: ${verdict(hark.result.p99Ms < TARGETS.maxP99Ms)})`,
    `hark api: ${hark.notes.join(', ')}`,
    `bare: ${bare.notes.join(', ')}`,
  ];
  if (hark.result.errors > 0 || bare.result.errors > 0) {
    lines.push('WARNING: some responses were errors or non-2xx; the figures above are not comparable.');
  }
  return lines.join('\n');
}
