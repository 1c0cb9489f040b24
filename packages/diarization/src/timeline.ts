import type { TimeWindow } from './embedding/embedding-extractor';
import type { SpeechRegion } from './vad/vad';

/** A stretch of the timeline; more than one speaker means overlapping speech. */
export interface Segment<S = string> {
  start: number;
  end: number;
  speakers: S[];
}

export interface TimelineOptions {
  /** Frame step of the vote, in seconds. Default 0.01. */
  resolution?: number;
  /** A speaker run shorter than this inside one speech region is absorbed by its neighbours. Default 0.5 s. */
  minTurn?: number;
}

/**
 * Turns per-window cluster labels into contiguous single-speaker segments inside the speech
 * regions. Each frame takes the label with the largest vote of the windows covering it, weighted
 * by closeness to the window centre (window edges see the neighbouring turn too). Runs shorter
 * than `minTurn` are flips of one or two windows, not turns, and are absorbed.
 */
export function buildTimeline(
  regions: SpeechRegion[],
  windows: TimeWindow[],
  labels: number[],
  options: TimelineOptions = {},
): Segment<number>[] {
  const step = options.resolution ?? 0.01;
  const minTurn = options.minTurn ?? 0.5;
  const out: Segment<number>[] = [];
  // Windows are sorted by start and, inside a region, by end too: a moving lower bound keeps
  // the vote linear in the number of frames.
  let lo = 0;
  for (const region of regions) {
    const frames = Math.max(1, Math.round((region.end - region.start) / step));
    const frameLabel = new Int32Array(frames).fill(-1);
    for (let f = 0; f < frames; f++) {
      const t = region.start + (f + 0.5) * step;
      while (lo < windows.length && windows[lo]!.end <= t) lo++;
      const votes = new Map<number, number>();
      for (let w = lo; w < windows.length && windows[w]!.start <= t; w++) {
        const { start, end } = windows[w]!;
        if (t >= end) continue;
        const half = (end - start) / 2;
        const weight = 1 - Math.abs(t - (start + half)) / (half + step);
        votes.set(labels[w]!, (votes.get(labels[w]!) ?? 0) + weight);
      }
      let best = -1;
      let bestVote = -Infinity;
      for (const [label, vote] of votes) if (vote > bestVote) [best, bestVote] = [label, vote];
      frameLabel[f] = best;
    }
    const runs = toRuns(frameLabel, region.start, step, region.end);
    out.push(...absorbShortRuns(runs, minTurn));
  }
  return out;
}

function toRuns(frameLabel: Int32Array, origin: number, step: number, end: number): Segment<number>[] {
  const runs: Segment<number>[] = [];
  for (let f = 0; f < frameLabel.length; f++) {
    const label = frameLabel[f]!;
    const last = runs[runs.length - 1];
    if (last && last.speakers[0] === label) last.end = origin + (f + 1) * step;
    else runs.push({ start: origin + f * step, end: origin + (f + 1) * step, speakers: [label] });
  }
  if (runs.length) runs[runs.length - 1]!.end = end;
  // Frames no window covered (cannot happen with speechWindows, but a custom window plan may do it).
  return runs.filter((r) => r.speakers[0]! >= 0);
}

/** Repeatedly gives the shortest too-short run to its longer neighbour, then joins equal neighbours. */
export function absorbShortRuns(runs: Segment<number>[], minTurn: number): Segment<number>[] {
  const list = runs.map((r) => ({ ...r, speakers: [...r.speakers] }));
  for (;;) {
    let shortest = -1;
    for (let i = 0; i < list.length; i++) {
      const d = list[i]!.end - list[i]!.start;
      if (d < minTurn && list.length > 1 && (shortest < 0 || d < list[shortest]!.end - list[shortest]!.start))
        shortest = i;
    }
    if (shortest < 0) return list;
    const prev = list[shortest - 1];
    const next = list[shortest + 1];
    const into = !next || (prev && prev.end - prev.start >= next.end - next.start) ? prev! : next;
    into.start = Math.min(into.start, list[shortest]!.start);
    into.end = Math.max(into.end, list[shortest]!.end);
    list.splice(shortest, 1);
    for (let i = list.length - 1; i > 0; i--) {
      const [a, b] = [list[i - 1]!, list[i]!];
      if (sameSpeakers(a.speakers, b.speakers) && a.end >= b.start) {
        a.end = b.end;
        list.splice(i, 1);
      }
    }
  }
}

export const sameSpeakers = (a: number[], b: number[]): boolean =>
  a.length === b.length && a.every((s, i) => s === b[i]);

/** Appends a copy of `seg` to `runs`, or extends the last run when it touches `seg` with the same speakers. */
export function appendJoined(runs: Segment<number>[], seg: Segment<number>): void {
  const last = runs[runs.length - 1];
  if (last && last.end >= seg.start - 1e-6 && sameSpeakers(last.speakers, seg.speakers)) last.end = seg.end;
  else runs.push({ ...seg, speakers: [...seg.speakers] });
}

/** Speaker names A, B, ..., Z, AA, AB... */
export function speakerName(index: number): string {
  let name = '';
  for (let i = index + 1; i > 0; i = Math.floor((i - 1) / 26))
    name = String.fromCharCode(65 + ((i - 1) % 26)) + name;
  return name;
}

/** Renames cluster ids to A, B, ... in order of first appearance; names in a segment are sorted. */
export function relabel(segments: Segment<number>[]): Segment<string>[] {
  const sorted = [...segments].sort((a, b) => a.start - b.start || a.end - b.end);
  const names = new Map<number, string>();
  for (const s of sorted)
    for (const id of s.speakers) if (!names.has(id)) names.set(id, speakerName(names.size));
  return sorted.map((s) => ({
    start: s.start,
    end: s.end,
    speakers: s.speakers.map((id) => names.get(id)!).sort(),
  }));
}
