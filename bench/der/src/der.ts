import { maxWeightAssignment } from './hungarian';
import type { Turn } from './rttm';

/** Error times in seconds; `der` is (missed + falseAlarm + confusion) / scored reference speech. */
export interface DerResult {
  /** Scored reference speaker time (overlap counts once per speaker). */
  total: number;
  missed: number;
  /** The part of `missed` where the system hears nobody. */
  missedUnheard: number;
  /** The part of `missed` where the system hears fewer voices than the reference (under-counted overlap). */
  missedOverlap: number;
  /**
   * Reference time beyond two voices at once (a region with n > 2 speakers counts n - 2): missed
   * by any system that labels at most two at a time, as one built on segmentation-3.0's powerset.
   */
  beyondTwo: number;
  falseAlarm: number;
  confusion: number;
  der: number;
  /** Reference speaker -> system speaker; unmapped reference speakers are absent. */
  mapping: Record<string, string>;
}

export interface DerOptions {
  /** No-score half-width around every reference turn boundary, in seconds. Default 0.25. */
  collar?: number;
}

/**
 * Diarization error rate of one file, following NIST md-eval conventions: turns of one speaker
 * that touch or overlap are merged; +-collar around each reference boundary is not scored;
 * overlapping speech is scored (each region counts max(ref, sys) speakers of possible error);
 * reference and system speakers are mapped one-to-one to maximise their overlap in time.
 */
export function fileDer(reference: Turn[], system: Turn[], options: DerOptions = {}): DerResult {
  const collar = options.collar ?? 0.25;
  const ref = mergeBySpeaker(reference);
  const sys = mergeBySpeaker(system);
  const noScore =
    collar > 0
      ? mergeIntervals(
          ref.flatMap((t): [number, number][] => [
            [t.start - collar, t.start + collar],
            [t.end - collar, t.end + collar],
          ]),
        )
      : [];

  const cuts = new Set<number>();
  for (const t of [...ref, ...sys]) cuts.add(t.start).add(t.end);
  for (const [a, b] of noScore) cuts.add(a).add(b);
  const points = [...cuts].sort((a, b) => a - b);

  // Elementary intervals: within each, the sets of active speakers are constant.
  const regions: { dur: number; ref: string[]; sys: string[] }[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const [a, b] = [points[i]!, points[i + 1]!];
    const mid = (a + b) / 2;
    if (noScore.some(([x, y]) => mid > x && mid < y)) continue;
    const active = (turns: Turn[]) => [
      ...new Set(turns.filter((t) => t.start < mid && t.end > mid).map((t) => t.speaker)),
    ];
    const r = active(ref);
    const s = active(sys);
    if (r.length || s.length) regions.push({ dur: b - a, ref: r, sys: s });
  }

  const refNames = [...new Set(ref.map((t) => t.speaker))];
  const sysNames = [...new Set(sys.map((t) => t.speaker))];
  const overlap = refNames.map(() => sysNames.map(() => 0));
  for (const { dur, ref: r, sys: s } of regions) {
    for (const a of r) for (const b of s) overlap[refNames.indexOf(a)]![sysNames.indexOf(b)]! += dur;
  }
  const assignment = maxWeightAssignment(overlap);
  const mapping: Record<string, string> = {};
  assignment.forEach((j, i) => {
    if (j >= 0) mapping[refNames[i]!] = sysNames[j]!;
  });

  let total = 0;
  let missed = 0;
  let missedUnheard = 0;
  let beyondTwo = 0;
  let falseAlarm = 0;
  let confusion = 0;
  for (const { dur, ref: r, sys: s } of regions) {
    const correct = r.filter((a) => mapping[a] !== undefined && s.includes(mapping[a])).length;
    total += dur * r.length;
    missed += dur * Math.max(0, r.length - s.length);
    if (s.length === 0) missedUnheard += dur * r.length;
    beyondTwo += dur * Math.max(0, r.length - 2);
    falseAlarm += dur * Math.max(0, s.length - r.length);
    confusion += dur * (Math.min(r.length, s.length) - correct);
  }
  return {
    total,
    missed,
    missedUnheard,
    missedOverlap: missed - missedUnheard,
    beyondTwo,
    falseAlarm,
    confusion,
    der: rate(missed + falseAlarm + confusion, total),
    mapping,
  };
}

/** The error times of a `DerResult`, which add up over files. */
export type DerTimes = Pick<
  DerResult,
  'total' | 'missed' | 'missedUnheard' | 'missedOverlap' | 'beyondTwo' | 'falseAlarm' | 'confusion'
>;
const TIME_KEYS = [
  'total',
  'missed',
  'missedUnheard',
  'missedOverlap',
  'beyondTwo',
  'falseAlarm',
  'confusion',
] as const satisfies readonly (keyof DerTimes)[];

export const zeroTimes = (): DerTimes => Object.fromEntries(TIME_KEYS.map((k) => [k, 0])) as DerTimes;

/** Adds `r`'s error times to `sum`. */
export function addTimes(sum: DerTimes, r: DerTimes): void {
  for (const k of TIME_KEYS) sum[k] += r[k];
}

/** Scores several files (grouped by `file`) and sums their error times, as md-eval reports. */
export function corpusDer(
  reference: Turn[],
  system: Turn[],
  options: DerOptions = {},
): DerResult & { files: Record<string, DerResult> } {
  const names = [...new Set([...reference, ...system].map((t) => t.file))];
  const files: Record<string, DerResult> = {};
  const sum = zeroTimes();
  for (const name of names) {
    const r = fileDer(
      reference.filter((t) => t.file === name),
      system.filter((t) => t.file === name),
      options,
    );
    files[name] = r;
    addTimes(sum, r);
  }
  return { ...sum, der: rate(sum.missed + sum.falseAlarm + sum.confusion, sum.total), mapping: {}, files };
}

// No reference speech: any system speech is pure error, reported as 1 (100%) rather than Infinity.
const rate = (errors: number, total: number): number => (total > 0 ? errors / total : errors > 0 ? 1 : 0);

function mergeBySpeaker(turns: Turn[]): Turn[] {
  const bySpeaker = new Map<string, Turn[]>();
  for (const t of turns)
    if (t.end > t.start) bySpeaker.set(t.speaker, [...(bySpeaker.get(t.speaker) ?? []), t]);
  return [...bySpeaker.entries()].flatMap(([speaker, list]) =>
    mergeIntervals(list.map((t) => [t.start, t.end])).map(([start, end]) => ({
      file: list[0]!.file,
      start,
      end,
      speaker,
    })),
  );
}

/** Intervals sorted by start, overlapping and touching ones merged. */
export function mergeIntervals(intervals: [number, number][]): [number, number][] {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}
