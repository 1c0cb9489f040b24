import { wordsToText, type TimedWord } from './words';

/**
 * Parser for the file whisper-cli writes with `--output-json-full` (whisper.cpp 1.9.1,
 * examples/cli/cli.cpp `output_json`). The parts read here:
 *
 *   { "result": { "language": "en" },
 *     "transcription": [ { "offsets": { "from": 0, "to": 7600 },      // ms
 *                          "text": " And so my fellow Americans,",
 *                          "tokens": [ { "text": "[_BEG_]", "offsets": {...}, "id": 50363, "p": 0.9, "t_dtw": -1 },
 *                                      { "text": " And", "offsets": { "from": 0, "to": 320 }, ... } ] } ] }
 *
 * Token `offsets` are present only when the engine timed the token (always with -ojf, which turns
 * token timestamps on). Special tokens are written as `[_BEG_]`, `[_TT_123]`, `[_EOT_]`, ...
 *
 * With `-dtw <model>` every text token also carries `t_dtw` (centiseconds, -1 without DTW): where
 * the alignment heads' cross-attention, aligned by dynamic time warping (OpenAI's word timestamps),
 * puts the token's end. Token `offsets` come from the timestamp tokens the decoder writes and
 * spread a window's words over its silences too; DTW times follow the speech, so words take them
 * whenever every text token of the file has one.
 */
export interface WhisperSegment {
  start: number;
  end: number;
  text: string;
  /** Every token id of the segment, special ones included (OpenAI's `tokens`). */
  tokens: number[];
  /** Mean natural log of the text tokens' probabilities; null when the writer gave none. */
  avgLogprob: number | null;
}

export interface WhisperResult {
  /** The requested language, or the detected one when none was requested. */
  language: string;
  words: TimedWord[];
  segments: WhisperSegment[];
  text: string;
}

export class WhisperOutputError extends Error {
  override readonly name = 'WhisperOutputError';
}

interface RawOffsets {
  from: number;
  to: number;
}
interface RawToken {
  text: string;
  offsets?: RawOffsets;
  id?: number;
  p?: number | null;
  t_dtw?: number;
}
interface RawSegment {
  text: string;
  offsets: RawOffsets;
  tokens?: RawToken[];
}

const SPECIAL_TOKEN = /^(\[_[^\]]*\]|<\|[^|]*\|>)$/;

/** Parses the raw file text (or an already parsed object) into words, segments and text. */
export function parseWhisperJson(input: unknown): WhisperResult {
  const doc = typeof input === 'string' ? parseLenient(input) : input;
  if (!isObject(doc)) throw new WhisperOutputError('whisper output is not a JSON object');
  const result = doc['result'];
  const language = isObject(result) && typeof result['language'] === 'string' ? result['language'] : null;
  if (!language) throw new WhisperOutputError('whisper output has no result.language');
  const transcription = doc['transcription'];
  if (!Array.isArray(transcription))
    throw new WhisperOutputError('whisper output has no transcription array');

  const segments: WhisperSegment[] = [];
  const raws: RawSegment[] = [];
  for (const [i, raw] of transcription.entries()) {
    if (!isSegment(raw)) throw new WhisperOutputError(`whisper output segment ${i} is malformed`);
    raws.push(raw);
    const text = collapse(raw.text.replace(NON_SPEECH, ' '));
    if (HAS_SPEECH.test(text))
      segments.push({ start: ms(raw.offsets.from), end: ms(raw.offsets.to), text, ...segmentTokens(raw) });
  }
  const tokens = textTokens(raws);
  const words = hasDtwTimes(tokens)
    ? cleanWords(dtwWords(tokens))
    : raws.flatMap((r) => cleanWords(segmentWords(r)));
  const text = words.length > 0 ? wordsToText(words) : segments.map((s) => s.text).join(' ');
  return { language, words, segments, text };
}

function segmentTokens(segment: RawSegment): Pick<WhisperSegment, 'tokens' | 'avgLogprob'> {
  const tokens = segment.tokens ?? [];
  const logs = tokens
    .filter((t) => !SPECIAL_TOKEN.test(t.text) && typeof t.p === 'number' && t.p > 0)
    .map((t) => Math.log(t.p as number));
  return {
    tokens: tokens.flatMap((t) => (typeof t.id === 'number' ? [t.id] : [])),
    avgLogprob:
      logs.length > 0 ? Math.round((logs.reduce((a, b) => a + b, 0) / logs.length) * 1e6) / 1e6 : null,
  };
}

const textTokens = (segments: RawSegment[]): RawToken[] =>
  segments.flatMap((s) => (s.tokens ?? []).filter((t) => !SPECIAL_TOKEN.test(t.text)));

/** Text tokens grouped into words: a leading space starts a new word, and so does the first token. */
function groupWords(tokens: RawToken[]): RawToken[][] {
  const groups: RawToken[][] = [];
  for (const token of tokens) {
    const last = groups[groups.length - 1];
    if (!last || /^\s/.test(token.text)) groups.push([token]);
    else last.push(token);
  }
  return groups;
}

const wordText = (group: RawToken[]): string => collapse(group.map((t) => t.text).join(''));

/** A segment's words timed by its tokens' offsets (each segment starts a new word). */
function segmentWords(segment: RawSegment): TimedWord[] {
  // Untimed tokens (none with -ojf, but the writer allows them) take the time where the last one ended.
  let cursor = segment.offsets.from;
  return groupWords(textTokens([segment])).flatMap((group) => {
    let start: number | null = null;
    let end = cursor;
    for (const token of group) {
      const from = token.offsets?.from ?? cursor;
      end = token.offsets?.to ?? from;
      cursor = end;
      start ??= from;
    }
    const text = wordText(group);
    const from = start ?? end;
    return text ? [{ start: ms(from), end: ms(Math.max(from, end)), text }] : [];
  });
}

/** True when every text token has a DTW time (the engine ran with `-dtw`) and there is one. */
function hasDtwTimes(tokens: RawToken[]): boolean {
  return tokens.length > 0 && tokens.every((t) => typeof t.t_dtw === 'number' && t.t_dtw >= 0);
}

/**
 * Words from DTW token times across the whole file. A word ends at the DTW time of its last token
 * that holds a letter or digit (a `,` or `.` is aligned into the pause after the word and would
 * stretch it) and starts where the word before it ended. After a pause that start is far too
 * early, so, as OpenAI's and faster-whisper's word timestamps do, a word is at most twice the
 * median word length (the median taken at most 0.7 s) long. Times never run backwards.
 */
function dtwWords(tokens: RawToken[]): TimedWord[] {
  const raw: { text: string; start: number; end: number }[] = [];
  let previousEnd = 0;
  for (const group of groupWords(tokens)) {
    const at = (token: RawToken) => Math.max(previousEnd, (token.t_dtw as number) * 10);
    const end = group
      .slice(1)
      .filter((t) => HAS_SPEECH.test(t.text))
      .reduce((e, t) => Math.max(e, at(t)), at(group[0]!));
    const text = wordText(group);
    if (!text) continue;
    raw.push({ text, start: previousEnd, end });
    previousEnd = end;
  }
  const longest = 2 * Math.min(700, median(raw.map((w) => w.end - w.start).filter((d) => d > 0)) ?? 700);
  return raw.map((w) => ({ text: w.text, start: ms(Math.max(w.start, w.end - longest)), end: ms(w.end) }));
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Speaker-turn markers (`>>`) and music symbols whisper writes for non-speech, wherever they stand in a word. */
const NON_SPEECH = /(>>+|<<+|[♪♩♫♬])/gu;
const HAS_SPEECH = /[\p{L}\p{N}]/u;

/**
 * Non-speech marks out (the engine is asked to suppress them; this catches what it still
 * writes, and what an engine run without suppression writes), so that no word is empty or only
 * punctuation: punctuation standing alone joins the word before it (` -` after `well` gives
 * `well-`); other symbols alone, or punctuation with no word before it, are dropped.
 */
export function cleanWords(words: readonly TimedWord[]): TimedWord[] {
  const out: TimedWord[] = [];
  for (const word of words) {
    const text = collapse(word.text.replace(NON_SPEECH, ' '));
    if (!text) continue;
    if (HAS_SPEECH.test(text)) {
      out.push(text === word.text ? word : { ...word, text });
      continue;
    }
    const previous = out[out.length - 1];
    if (previous && /^[\p{P}]+$/u.test(text)) {
      out[out.length - 1] = {
        ...previous,
        text: previous.text + text,
        end: Math.max(previous.end, word.end),
      };
    }
  }
  return out;
}

/** Seconds with millisecond precision from the writer's integer milliseconds. */
const ms = (value: number) => Math.round(value) / 1000;
const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
function isOffsets(value: unknown): value is RawOffsets {
  return isObject(value) && typeof value['from'] === 'number' && typeof value['to'] === 'number';
}
function isSegment(value: unknown): value is RawSegment {
  if (!isObject(value) || typeof value['text'] !== 'string' || !isOffsets(value['offsets'])) return false;
  const tokens = value['tokens'];
  if (tokens === undefined) return true;
  return (
    Array.isArray(tokens) &&
    tokens.every(
      (t) =>
        isObject(t) &&
        typeof t['text'] === 'string' &&
        (t['offsets'] === undefined || isOffsets(t['offsets'])),
    )
  );
}

/**
 * The writer escapes only `"` and `\` inside strings, so a token holding a control character
 * (a byte-level token) makes the file invalid JSON; and floats go through `ostream <<`, which
 * writes `nan`/`inf`. Retry with both repaired before giving up.
 */
function parseLenient(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    try {
      return JSON.parse(repairJson(text));
    } catch (error) {
      throw new WhisperOutputError(`whisper output is not valid JSON: ${(error as Error).message}`);
    }
  }
}

export function repairJson(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (inString) {
      if (ch === '\\') {
        out += ch + (text[i + 1] ?? '');
        i++;
      } else if (ch === '"') {
        inString = false;
        out += ch;
      } else {
        const code = ch.charCodeAt(0);
        out += code < 0x20 ? `\\u${code.toString(16).padStart(4, '0')}` : ch;
      }
      continue;
    }
    if (ch === '"') inString = true;
    const bare = /^-?(nan|inf)\b/i.exec(text.slice(i, i + 5));
    if (!inString && bare) {
      out += 'null';
      i += bare[0].length - 1;
      continue;
    }
    out += ch;
  }
  return out;
}
