import type { Segment } from './timeline';

export interface Word {
  start: number;
  end: number;
  text: string;
}

/** A stretch of time, in seconds (a timeline's segment, or where anyone speaks). */
export interface Span {
  start: number;
  end: number;
}

export type LabeledWord<W extends Word = Word> = W & { speaker: string | null };

export interface Utterance {
  start: number;
  end: number;
  text: string;
  speaker: string | null;
  /** True when another speaker (or a multi-speaker segment) intersects the utterance. */
  overlap: boolean;
}

export interface UtteranceOptions {
  /** Intersections shorter than this (seconds) are turn-boundary jitter, not overlap. Default 0.2. */
  minOverlap?: number;
}

/** How near (seconds) a word must come to the speech timeline to stay (`wordsNearSpeech`). */
export const SPEECH_GATE_MARGIN = 0.25;

/**
 * The words that come within `margin` seconds of a segment of the speech timeline: a word the
 * engine wrote where the timeline hears nobody, that far from anyone, is text it invented in
 * silence (Whisper's known failure: a sentence over a silent lead-in, "see you in the next
 * video" over a pause). With no segments at all every word stays: the timeline heard nothing,
 * so it cannot tell invented words from speech it missed. Only a timeline that hears speech as
 * well as segmentation-3.0 does should gate (bench/der/README.md, "Words in silence").
 */
export function wordsNearSpeech<W extends Word>(
  words: readonly W[],
  segments: readonly Span[],
  margin = SPEECH_GATE_MARGIN,
): W[] {
  if (segments.length === 0) return [...words];
  const index = new SegmentIndex(segments);
  return words.filter((w) => index.overlapping(w.start - margin, w.end + margin).length > 0);
}

/** What `snapToSpeech` may move: at most `maxShift` seconds an edge, leaving at least `minDuration` of a word. */
export interface SnapOptions {
  maxShift?: number;
  minDuration?: number;
}

/**
 * Word edges moved onto the speech the timeline hears:
 * - a start in silence moves later, to where the next speech begins, when the word's end lies
 *   past that point (never past the next word's start);
 * - an end in silence moves earlier, to where the last speech the word reaches ends;
 * - an end in speech that no later word follows before the timeline's next change (its speech
 *   ends, or a voice starts or stops: a segment's edge) moves later, to that change.
 * Whisper's DTW word times put a first word after a pause early, into the silence (jfk.wav's
 * "what" at 4.88 s, spoken from about 5.38 s), and end the word before a pause early, inside the
 * speech ("you," at 7.28 s, whose voice fades out by about 7.5 s). Other edges in speech, words
 * in no speech at all (`wordsNearSpeech` decides about those), words that only touch speech,
 * moves farther than `maxShift` (default 1 s) and moves that would leave less than `minDuration`
 * (default 0.05 s) of the word stay as they are. Segments with a time that is not a finite number
 * are ignored. Only a timeline that hears speech as well as segmentation-3.0 does should snap.
 */
export function snapToSpeech<W extends Word>(
  words: readonly W[],
  segments: readonly Span[],
  { maxShift = 1, minDuration = 0.05 }: SnapOptions = {},
): W[] {
  const finite = segments.filter(
    (s) => Number.isFinite(s.start) && Number.isFinite(s.end) && s.end > s.start,
  );
  const spans = speechSpans(finite);
  if (spans.length === 0) return [...words];
  // Index of the last span starting at or before t (-1: none).
  const spanAt = (t: number): number => startingBefore(spans, t, true) - 1;
  const changes = segmentEdges(finite);
  // The earliest start of the words after each (token times may be out of order).
  const laterStart: number[] = new Array<number>(words.length);
  for (let k = words.length - 1, min = Infinity; k >= 0; min = Math.min(min, words[k]!.start), k--) {
    laterStart[k] = min;
  }
  return words.map((w, k) => {
    let { start, end } = w;
    const i = spanAt(start);
    if (i < 0 || spans[i]!.end < start) {
      const next = spans[i + 1];
      // Words that overlap (token times may) keep their order.
      const to = Math.min(next?.start ?? Infinity, words[k + 1]?.start ?? Infinity);
      if (next && to > start && next.start - start <= maxShift && end - to >= minDuration) start = to;
    }
    const j = spanAt(end);
    if (j >= 0 && spans[j]!.end < end) {
      const held = spans[j]!;
      if (held.end >= start && end - held.end <= maxShift && held.end - start >= minDuration) end = held.end;
    } else if (j >= 0 && end - spans[j]!.start >= minDuration) {
      // The last word before the timeline's next change: held to it (never across it, into
      // another voice the word would then be labelled with).
      const change = changes[startingBefore(changes, end, true)]?.start;
      if (change !== undefined && change - end <= maxShift && laterStart[k]! >= change) end = change;
    }
    return start === w.start && end === w.end ? w : { ...w, start, end };
  });
}

/** Every time a segment starts or ends, sorted, once each (as spans of no length). */
function segmentEdges(segments: readonly Span[]): Span[] {
  const times = new Set(segments.flatMap((s) => [s.start, s.end]));
  return [...times].sort((a, b) => a - b).map((t) => ({ start: t, end: t }));
}

/** The timeline's segments as sorted spans of speech, touching or overlapping ones merged. */
function speechSpans(segments: readonly Span[]): Span[] {
  const out: Span[] = [];
  for (const s of [...segments].sort((a, b) => a.start - b.start)) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end + 1e-6) last.end = Math.max(last.end, s.end);
    else out.push({ start: s.start, end: s.end });
  }
  return out;
}

/**
 * Gives each word the speaker whose segments overlap it longest (a multi-speaker segment counts
 * for each of its speakers). A word no segment overlaps — ASR timestamps drift into the pauses
 * the VAD cut out — takes the nearest segment's speaker instead, so `speaker` is null only when
 * there are no segments at all. Ties go to the previous word's speaker (a word inside an overlap
 * stays with the utterance it continues), then to the first name alphabetically.
 */
export function labelWords<W extends Word>(words: W[], segments: Segment[]): LabeledWord<W>[] {
  const index = new SegmentIndex(segments);
  let previous: string | null = null;
  return words.map((word) => {
    const speaker = segments.length === 0 ? null : pick(index.speakerTime(word), previous);
    previous = speaker ?? previous;
    return { ...word, speaker };
  });

  function pick(time: Map<string, number>, prev: string | null): string {
    const best = Math.max(...time.values());
    const tied = [...time.entries()]
      .filter(([, t]) => t >= best - 1e-9)
      .map(([name]) => name)
      .sort();
    return prev !== null && tied.includes(prev) ? prev : tied[0]!;
  }
}

/**
 * Groups consecutive words of one speaker into utterances. Words are expected in time order
 * (as ASR emits them); texts are trimmed and joined with single spaces.
 */
export function buildUtterances(
  words: LabeledWord[],
  segments: Segment[],
  options: UtteranceOptions = {},
): Utterance[] {
  const minOverlap = options.minOverlap ?? 0.2;
  const index = new SegmentIndex(segments);
  const groups: LabeledWord[][] = [];
  for (const word of words) {
    const last = groups[groups.length - 1];
    if (last && last[0]!.speaker === word.speaker) last.push(word);
    else groups.push([word]);
  }
  return groups.map((group) => {
    const start = group[0]!.start;
    const end = Math.max(...group.map((w) => w.end));
    const speaker = group[0]!.speaker;
    const text = group
      .map((w) => w.text.trim())
      .filter(Boolean)
      .join(' ');
    const overlap =
      speaker !== null &&
      index
        .overlapping(start, end)
        .some(
          (s) =>
            Math.min(s.end, end) - Math.max(s.start, start) >= minOverlap &&
            (s.speakers.length > 1 || s.speakers[0] !== speaker),
        );
    return { start, end, text, speaker, overlap };
  });
}

/** How many of `sorted` (by start) start before `t`, or at `t` when `inclusive`. */
function startingBefore(sorted: readonly Span[], t: number, inclusive: boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const s = sorted[mid]!.start;
    if (s < t || (inclusive && s === t)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Segments sorted by start with a running maximum of ends: finds overlaps in O(log n + hits). */
class SegmentIndex<S extends Span = Segment> {
  private readonly sorted: S[];
  private readonly maxEnd: number[];

  constructor(segments: readonly S[]) {
    this.sorted = [...segments].sort((a, b) => a.start - b.start);
    let max = -Infinity;
    this.maxEnd = this.sorted.map((s) => (max = Math.max(max, s.end)));
  }

  /** Segments with a non-empty intersection with [start, end]; a point word matches what contains it. */
  overlapping(start: number, end: number): S[] {
    const hits: S[] = [];
    const point = start === end;
    for (let i = startingBefore(this.sorted, end, point) - 1; i >= 0 && this.maxEnd[i]! >= start; i--) {
      const s = this.sorted[i]!;
      if (s.end > start || (point && s.end === start)) hits.push(s);
    }
    return hits;
  }

  /** Seconds each speaker overlaps [start, end]; when nothing does, the nearest segment's speakers. */
  speakerTime(this: SegmentIndex, { start, end }: Word): Map<string, number> {
    const time = new Map<string, number>();
    for (const s of this.overlapping(start, end)) {
      const t = Math.max(Math.min(s.end, end) - Math.max(s.start, start), 0);
      for (const name of s.speakers) time.set(name, (time.get(name) ?? 0) + t);
    }
    if (time.size > 0) return time;
    const after = startingBefore(this.sorted, end, false);
    let nearest = this.sorted[after];
    let gap = nearest ? nearest.start - end : Infinity;
    for (let i = after - 1; i >= 0; i--) {
      const s = this.sorted[i]!;
      if (start - s.end <= gap) [nearest, gap] = [s, start - s.end];
      if (this.maxEnd[i]! < start - gap) break;
    }
    for (const name of nearest?.speakers ?? []) time.set(name, 0);
    return time;
  }
}
