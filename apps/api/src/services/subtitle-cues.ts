/**
 * Cues from word timings, for SRT and WebVTT. Pure: no I/O, no formatting (subtitle-render.ts).
 *
 * Words are placed greedily. A new cue starts when the speaker changes, when the next word would
 * take the cue past `maxCueDuration`, or past `maxLines` lines of `maxLineLength` characters.
 * When a limit forces a break, the cue is cut after its last sentence end (or, failing that,
 * after a clause mark in its second half) and the rest carries over, so cues follow sentences
 * where they can. A cue also ends at a sentence end once it holds half a line of text. A word is
 * never split: one longer than a line gets a line of its own, one longer than the duration limit
 * a cue of its own.
 */
export interface SubtitleWord {
  start: number;
  end: number;
  text: string;
  speaker: string | null;
}

export interface CueOptions {
  /** Characters per line (a longer single word still gets one line). */
  maxLineLength: number;
  /** Seconds from a cue's first word start to its last word end. */
  maxCueDuration: number;
  /** Lines per cue. */
  maxLines: number;
  /** Characters a cue's first line gives up to the speaker's label (`A: ` in SRT). Default none. */
  labelWidth?(speaker: string | null): number;
}

export interface Cue {
  start: number;
  end: number;
  speaker: string | null;
  /** The cue's text broken into at most `maxLines` lines (more only if one word is wider than a line). */
  lines: string[];
}

/** Tolerance for float seconds (stored with millisecond precision). */
const EPSILON = 1e-6;
/** A cue of zero length (zero-length words) is shown this long, unless the next cue starts first. */
export const MIN_CUE_SECONDS = 0.5;

const SENTENCE_END = /[.?!…]["'”’»)\]]*$/;
const CLAUSE_END = /[,;:–—]["'”’»)\]]*$/;

interface Word {
  start: number;
  end: number;
  text: string;
  speaker: string | null;
}

export function buildCues(words: readonly SubtitleWord[], opts: CueOptions): Cue[] {
  const labelWidth = opts.labelWidth ?? (() => 0);
  const cues: Word[][] = [];
  let cue: Word[] = [];

  const widthOf = (ws: readonly Word[]) =>
    lineCount(ws, opts.maxLineLength, labelWidth(ws[0]?.speaker ?? null));
  const fits = (ws: readonly Word[]) => {
    const first = ws[0] as Word;
    const end = Math.max(...ws.map((w) => w.end));
    return end - first.start <= opts.maxCueDuration + EPSILON && widthOf(ws) <= opts.maxLines;
  };
  const emit = (count: number) => {
    cues.push(cue.slice(0, count));
    cue = cue.slice(count);
  };

  for (const raw of words) {
    // A line break inside a word would end the cue in SRT and WebVTT (and forge the next).
    const text = raw.text.replace(/\s+/gu, ' ').trim();
    if (text === '') continue;
    const w: Word = {
      start: raw.start,
      end: Math.max(raw.start, raw.end),
      text,
      speaker: raw.speaker ?? null,
    };
    for (;;) {
      if (cue.length === 0) {
        cue.push(w);
        break;
      }
      if ((cue[0] as Word).speaker !== w.speaker) {
        emit(cue.length);
        continue;
      }
      if (fits([...cue, w])) {
        cue.push(w);
        break;
      }
      emit(breakAfter(cue) + 1);
    }
    if (SENTENCE_END.test(w.text) && textLength(cue) >= opts.maxLineLength / 2) emit(cue.length);
  }
  if (cue.length > 0) cues.push(cue);

  const times = cueTimes(cues);
  return cues.map((ws, i) => {
    const first = ws[0] as Word;
    return {
      ...(times[i] as { start: number; end: number }),
      speaker: first.speaker,
      lines: layoutLines(
        ws.map((w) => w.text),
        opts.maxLineLength,
        labelWidth(first.speaker),
        widthOf(ws),
      ),
    };
  });
}

/** Shortest time a cue is shown when cues crowd one instant (the times are written in ms). */
const MIN_STEP_SECONDS = 0.001;

/**
 * Each cue's start and end: from its words, never into the next cue, never empty. A cue of
 * zero-length words is shown `MIN_CUE_SECONDS` unless the next cue starts first; cues that start
 * at one instant (zero-length words stacked there and cut apart by a limit) share the time up to
 * the next cue in turn, since a player drops a cue that ends where it starts.
 */
function cueTimes(cues: readonly Word[][]): { start: number; end: number }[] {
  const times = cues.map((ws, i) => {
    const start = (ws[0] as Word).start;
    const next = cues[i + 1]?.[0];
    let end = Math.max(...ws.map((w) => w.end));
    if (end <= start) end = Math.min(start + MIN_CUE_SECONDS, Math.max(next?.start ?? Infinity, start));
    // Words may overlap by a few milliseconds; overlapping cues would stack on screen.
    if (next && end > next.start && next.start > start) end = next.start;
    return { start, end };
  });
  for (let i = 0; i < times.length; ) {
    const start = (times[i] as { start: number }).start;
    let j = i + 1;
    while (j < times.length && (times[j] as { start: number }).start - start <= EPSILON) j++;
    if (j - i > 1) {
      const bound = times[j]?.start ?? Infinity;
      let end = Math.min(bound, Math.max(...times.slice(i, j).map((t) => t.end)));
      if (end - start <= EPSILON) end = Math.min(start + MIN_CUE_SECONDS, bound);
      const step = Math.max(MIN_STEP_SECONDS, (end - start) / (j - i));
      for (let k = i; k < j; k++) {
        const t = times[k] as { start: number; end: number };
        t.start = roundMs(start + (k - i) * step);
        t.end =
          k === j - 1
            ? Math.max(end, roundMs(start + (k - i + 1) * step))
            : roundMs(start + (k - i + 1) * step);
      }
    }
    i = j;
  }
  // Only where more cues share an instant than it has milliseconds before the next: keep order.
  for (let i = 1; i < times.length; i++) {
    const t = times[i] as { start: number; end: number };
    t.start = Math.max(t.start, (times[i - 1] as { end: number }).end);
    t.end = Math.max(t.end, t.start + MIN_STEP_SECONDS);
  }
  return times;
}

function roundMs(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

/** Index of the last word to keep in a cue that must be cut: after a sentence end, else a clause mark in the second half. */
function breakAfter(cue: readonly Word[]): number {
  for (let i = cue.length - 2; i >= 0; i--) if (SENTENCE_END.test((cue[i] as Word).text)) return i;
  const half = textLength(cue) / 2;
  let length = 0;
  let clause = -1;
  for (let i = 0; i < cue.length - 1; i++) {
    length += (cue[i] as Word).text.length + (i > 0 ? 1 : 0);
    if (length >= half && CLAUSE_END.test((cue[i] as Word).text)) clause = i;
  }
  return clause >= 0 ? clause : cue.length - 1;
}

function textLength(ws: readonly Word[]): number {
  return ws.reduce((n, w, i) => n + w.text.length + (i > 0 ? 1 : 0), 0);
}

/** Lines greedy filling takes: the fewest possible for words that are never split. */
function lineCount(ws: readonly Word[], maxLineLength: number, firstLineTaken: number): number {
  let lines = 1;
  let used = firstLineTaken;
  let onLine = 0;
  for (const w of ws) {
    const needed = used + (onLine > 0 ? 1 : 0) + w.text.length;
    // A line's first word goes on it whatever its length: words are never split.
    if (onLine === 0 || needed <= maxLineLength) {
      used = needed;
      onLine += 1;
    } else {
      lines += 1;
      used = w.text.length;
      onLine = 1;
    }
  }
  return lines;
}

/**
 * Breaks a cue's words into `lines` lines, as even as possible: no line over `maxLineLength`
 * unless it is one word, then the longest line as short as can be. The first line gives up
 * `firstLineTaken` characters to a label. A cue holds a few dozen words and at most three lines,
 * so trying every break is cheap.
 */
export function layoutLines(
  texts: readonly string[],
  maxLineLength: number,
  firstLineTaken: number,
  lines: number,
): string[] {
  // ends[i]: characters of texts[0..i) joined by single spaces, plus one trailing space.
  const ends = [0];
  for (const t of texts) ends.push((ends[ends.length - 1] as number) + t.length + 1);
  const width = (from: number, to: number) =>
    (ends[to] as number) - (ends[from] as number) - 1 + (from === 0 ? firstLineTaken : 0);
  // Overflow weighs more than any width, so a layout within the limit always wins.
  const cost = (from: number, to: number) => {
    const w = width(from, to);
    return to - from > 1 && w > maxLineLength ? (w - maxLineLength) * 10_000 + w : w;
  };
  let best = { cost: Infinity, cuts: [] as number[] };
  const search = (from: number, left: number, cuts: number[], worst: number) => {
    if (worst >= best.cost) return;
    if (left === 1) {
      const total = Math.max(worst, cost(from, texts.length));
      if (total < best.cost) best = { cost: total, cuts };
      return;
    }
    for (let to = from + 1; to <= texts.length - left + 1; to++) {
      search(to, left - 1, [...cuts, to], Math.max(worst, cost(from, to)));
    }
  };
  search(0, Math.max(1, Math.min(lines, texts.length)), [], 0);
  const bounds = [0, ...best.cuts, texts.length];
  return bounds.slice(1).map((to, i) => texts.slice(bounds[i], to).join(' '));
}
