import type { Span } from '@hark/diarization';
import { mergeIntervals } from './der';
import type { Turn } from './rttm';

export interface EdgeScore {
  /** Reference onsets (speech after `silence` seconds of nobody) with a word to time them by. */
  onsets: number;
  /** Word start minus reference onset, seconds, per onset (negative: the word starts early). */
  onsetErrors: number[];
  /** Reference ends (speech followed by `silence` seconds of nobody) with a word. */
  ends: number;
  /** Word end minus reference end, per end (positive: the word runs on into the silence). */
  endErrors: number[];
}

/** Union of the reference turns (anyone speaking), sorted, touching spans merged. */
export function speechOf(reference: readonly Turn[]): Span[] {
  return mergeIntervals(reference.map((t) => [t.start, t.end])).map(([start, end]) => ({ start, end }));
}

export const noEdges = (): EdgeScore => ({ onsets: 0, onsetErrors: [], ends: 0, endErrors: [] });

/** Adds `e`'s onsets and ends to `sum`. */
export function addEdges(sum: EdgeScore, e: EdgeScore): void {
  sum.onsets += e.onsets;
  sum.onsetErrors.push(...e.onsetErrors);
  sum.ends += e.ends;
  sum.endErrors.push(...e.endErrors);
}

/**
 * How well words mark where speech starts and stops after silence: for every reference onset
 * (someone starts speaking after at least `silence` seconds in which nobody does), the first word
 * ending after it, when that word starts within `reach` seconds of it and the word before it ended
 * at least `silence` before the onset (the transcript, too, was silent there); symmetrically for
 * ends. Onsets and ends inside `[from, to]` only (the scored region), and at least `silence` from
 * its edges: what came before the region's start or after its end is not known to be silence.
 */
export function edgeErrors(
  words: readonly Span[],
  reference: readonly Turn[],
  [from, to]: [number, number],
  { silence = 0.5, reach = 1.5 }: { silence?: number; reach?: number } = {},
): EdgeScore {
  const speech = speechOf(reference);
  const sorted = [...words].sort((a, b) => a.start - b.start);
  const out: EdgeScore = { onsets: 0, onsetErrors: [], ends: 0, endErrors: [] };
  speech.forEach((s, i) => {
    const before = i > 0 ? speech[i - 1]!.end : -Infinity;
    const after = i + 1 < speech.length ? speech[i + 1]!.start : Infinity;
    if (s.start - before >= silence && s.start - from >= silence && s.start <= to) {
      const k = sorted.findIndex((w) => w.end > s.start);
      const w = sorted[k];
      const prevEnd = k > 0 ? sorted[k - 1]!.end : -Infinity;
      if (w && Math.abs(w.start - s.start) <= reach && prevEnd <= s.start - silence) {
        out.onsets++;
        out.onsetErrors.push(w.start - s.start);
      }
    }
    if (after - s.end >= silence && to - s.end >= silence && s.end >= from) {
      let k = -1;
      for (let j = 0; j < sorted.length; j++) if (sorted[j]!.start < s.end) k = j;
      const w = sorted[k];
      const nextStart = k >= 0 && k + 1 < sorted.length ? sorted[k + 1]!.start : Infinity;
      if (w && Math.abs(w.end - s.end) <= reach && nextStart >= s.end + silence) {
        out.ends++;
        out.endErrors.push(w.end - s.end);
      }
    }
  });
  return out;
}

/** Median, mean absolute value, and the shares below -0.2 s and above +0.2 s, as a line. */
export function describeErrors(errors: readonly number[]): string {
  if (errors.length === 0) return 'none';
  const sorted = [...errors].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const meanAbs = errors.reduce((s, e) => s + Math.abs(e), 0) / errors.length;
  const share = (n: number) => `${Math.round((100 * n) / errors.length)}%`;
  return `median ${median.toFixed(2)} s, mean |error| ${meanAbs.toFixed(2)} s, ${share(errors.filter((e) => e < -0.2).length)} early by over 0.2 s, ${share(errors.filter((e) => e > 0.2).length)} late by over 0.2 s`;
}
