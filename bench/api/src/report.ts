// Formats the bench's figures next to its targets. Targets are printed, never asserted: the
// figures depend on the machine and on what else runs on it.
import type { LoadResult } from './load';
import type { ServerKind } from './server';

export interface Measured {
  kind: ServerKind;
  result: LoadResult;
  notes: string[];
  /** 1-minute load average just before the measured run. */
  loadBefore: number;
  /** CPU time (user + system) the server process spent during the measured run. */
  serverCpuSeconds: number;
}

/** One round: each target measured once, back to back. */
export interface Round {
  hark: Measured;
  bare: Measured;
}

export const TARGETS = { minRatio: 0.3, maxP99Ms: 50 } as const;

const f = (n: number, digits = 1) => n.toFixed(digits);
const pad = (s: string, n: number) => s.padStart(n);

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length === 0 ? 0 : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const ratioOf = (r: Round) => (r.bare.result.rps > 0 ? r.hark.result.rps / r.bare.result.rps : 0);
const cpuPerRequestUs = (ms: Measured[]) => {
  const requests = ms.reduce((n, m) => n + m.result.requests, 0);
  return requests > 0 ? (ms.reduce((n, m) => n + m.serverCpuSeconds, 0) * 1e6) / requests : 0;
};

const HEADER = [
  'round target'.padEnd(19),
  pad('req/s', 9),
  pad('p50 ms', 8),
  pad('p90 ms', 8),
  pad('p99 ms', 8),
  pad('max ms', 8),
  pad('errors', 7),
  pad('load1', 6),
  pad('cpu µs/req', 11),
].join(' ');

function row(label: string, m: Measured): string {
  return [
    label.padEnd(19),
    pad(f(m.result.rps), 9),
    pad(f(m.result.p50Ms, 2), 8),
    pad(f(m.result.p90Ms, 2), 8),
    pad(f(m.result.p99Ms, 2), 8),
    pad(f(m.result.maxMs, 2), 8),
    pad(String(m.result.errors), 7),
    pad(f(m.loadBefore, 2), 6),
    pad(f(cpuPerRequestUs([m]), 0), 11),
  ].join(' ');
}

/**
 * Every round's figures, then the verdicts on the medians across rounds: the ratio of hark's
 * req/s to bare's within each round, and hark's p99.
 */
export function formatReport(rounds: Round[]): string {
  const ratios = rounds.map(ratioOf);
  const ratio = median(ratios);
  const p99 = median(rounds.map((r) => r.hark.result.p99Ms));
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const lines = [HEADER];
  rounds.forEach((r, i) => {
    lines.push(row(`${i + 1} hark api`, r.hark), row(`${i + 1} bare express`, r.bare));
  });
  const harks = rounds.map((r) => r.hark);
  const bares = rounds.map((r) => r.bare);
  lines.push(
    '',
    `per-round ratio hark/bare req/s: ${ratios.map((x) => f(x, 3)).join(' ')}`,
    `median req/s: hark ${f(median(harks.map((m) => m.result.rps)))}, bare ${f(median(bares.map((m) => m.result.rps)))}; ` +
      `server CPU per request: hark ${f(cpuPerRequestUs(harks), 0)} µs, bare ${f(cpuPerRequestUs(bares), 0)} µs`,
    `ratio hark/bare req/s (median of rounds): ${f(ratio, 3)}   (target >= ${TARGETS.minRatio}: ${verdict(ratio >= TARGETS.minRatio)})`,
    `hark p99 (median of rounds): ${f(p99, 2)} ms   (target < ${TARGETS.maxP99Ms} ms: ${verdict(p99 < TARGETS.maxP99Ms)})`,
    `hark api: ${rounds[0]?.hark.notes.join(', ') ?? ''}`,
    `bare: ${rounds[0]?.bare.notes.join(', ') ?? ''}`,
  );
  if ([...harks, ...bares].some((m) => m.result.errors > 0)) {
    lines.push('WARNING: some responses were errors or non-2xx; the figures above are not comparable.');
  }
  return lines.join('\n');
}
