import {
  type DiarizationResult,
  type LabeledWord,
  type SpeakersOption,
  type Utterance,
  buildUtterances,
  labelWords,
  snapToSpeech,
  wordsNearSpeech,
} from '@hark/diarization';
import type { TranscriptContentInput } from '@hark/transcripts';
import {
  type Glossary,
  type TimedWord,
  type WhisperSegment,
  applyCorrections,
  wordsToText,
} from '@hark/media';

/** A word as stored and served (api-spec Transcript `words`). */
export type TranscriptWord = LabeledWord;

/** api-spec Transcript `utterances`: the diarization package's, also built here without speakers. */
export type { Utterance };

/** api-spec Transcript `diarizationSegments`. */
export interface DiarizationSegment {
  start: number;
  end: number;
  speakers: string[];
}

/**
 * Without diarization an utterance ends where the speaker pauses longer than this: whisper's
 * own segments are cut by its 30 s window and token budget, not by speech, so they are not
 * "blocks of continuous speech".
 */
export const UTTERANCE_PAUSE_SECONDS = 1;

/**
 * Groups words into utterances: a new one starts when the speaker label changes or the gap
 * between two words is longer than `pauseSeconds`. `overlap` is always false here: only a
 * diarizer knows about overlapping speech.
 */
export function utterancesFromWords(
  words: readonly TranscriptWord[],
  pauseSeconds = UTTERANCE_PAUSE_SECONDS,
): Utterance[] {
  const groups: TranscriptWord[][] = [];
  let current: TranscriptWord[] = [];
  for (const word of words) {
    const previous = current[current.length - 1];
    if (previous && (word.speaker !== previous.speaker || word.start - previous.end > pauseSeconds)) {
      groups.push(current);
      current = [];
    }
    current.push(word);
  }
  if (current.length > 0) groups.push(current);
  return groups.map((g) => ({
    start: (g[0] as TranscriptWord).start,
    end: Math.max(...g.map((w) => w.end)),
    text: wordsToText(g),
    speaker: (g[0] as TranscriptWord).speaker,
    overlap: false,
  }));
}

/** The `glossary` column as the API stored it; anything else is ignored rather than trusted. */
export function parseGlossary(value: unknown): Glossary | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const entries = Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string');
  return entries.length > 0 ? Object.fromEntries(entries) : null;
}

const ms = (seconds: number) => Math.round(seconds * 1000) / 1000;

/** The `speakers` column (null | true | integer | {min, max}); anything else counts as not requested. */
export function parseSpeakers(value: unknown): SpeakersOption | null {
  if (value === true) return true;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const { min, max } = value as Record<string, unknown>;
    if (typeof min === 'number' && typeof max === 'number') return { min, max };
  }
  return null;
}

/**
 * Stored content from the engine's words: built-in corrections and the caller's glossary first
 * (so text, words and utterances agree), then speaker labels from the diarization timeline.
 *
 * `diarization` is null when speakers were not requested: no labels, utterances split at
 * pauses, `diarizationSegments` and `speakerCount` null. With a timeline, every word takes the
 * speaker whose segments cover it longest and utterances are runs of one speaker's words
 * (@hark/diarization `labelWords` / `buildUtterances`). With `speech` (where someone speaks: the
 * diarization timeline, or the speech pass of a transcript without speakers), the words that
 * come no nearer than 0.25 s to it are left out first (@hark/diarization `wordsNearSpeech`: text
 * the engine invented in silence or noise), from the text, words, utterances and segments alike;
 * where it hears nobody at all, every word stays. The edges of the words kept that fall in its
 * silence move onto its speech (`snappedWords`).
 */
export function buildContent(
  engineWords: readonly TimedWord[],
  glossary: Glossary | null,
  diarization: DiarizationResult | null,
  engineSegments?: readonly WhisperSegment[],
  { speech = null }: { speech?: readonly { start: number; end: number }[] | null } = {},
): { content: TranscriptContentInput; speakerCount: number | null } {
  const corrected = applyCorrections(engineWords, glossary).map((w) => ({
    start: w.start,
    end: w.end,
    text: w.text,
  }));
  const near = speech ? wordsNearSpeech(corrected, speech) : corrected;
  const built = buildLabelled(speech ? snappedWords(near, speech) : near, diarization);
  if (engineSegments === undefined) return built;
  // The engine's segments take their words by the engine's own times (a snapped start may pass
  // the segment boundary the engine drew).
  return { ...built, content: { ...built.content, segments: segmentsFromWords(engineSegments, near) } };
}

/**
 * Words with their edges that fall in the speech's silence moved onto the speech, and the last
 * word before each change of the speech held to it (`snapToSpeech`, to the millisecond): DTW puts a first word
 * after a pause up to about half a second early, and subtitles showed it before anyone spoke; it
 * ends the word before a pause about a third of a second early, and cues left while it was heard.
 */
function snappedWords<W extends { start: number; end: number; text: string }>(
  words: W[],
  speech: readonly { start: number; end: number }[],
): W[] {
  return snapToSpeech(words, speech).map((w) => ({ ...w, start: ms(w.start), end: ms(w.end) }));
}

/** The engine's own segment, as stored for OpenAI's `verbose_json` (never served by Hark's routes). */
export interface StoredSegment {
  start: number;
  end: number;
  text: string;
  tokens: number[];
  avgLogprob: number | null;
}

/**
 * The engine's segments with their text rebuilt from the corrected words (so corrections and
 * the glossary show there too): a word belongs to the last segment starting at or before it.
 * Segments left without words are dropped.
 */
export function segmentsFromWords(
  segments: readonly WhisperSegment[],
  words: readonly { start: number; end: number; text: string }[],
): StoredSegment[] {
  const groups: { text: string }[][] = segments.map(() => []);
  let i = 0;
  for (const word of words) {
    while (i + 1 < segments.length && (segments[i + 1] as WhisperSegment).start <= word.start) i++;
    groups[i]?.push(word);
  }
  return segments.flatMap((seg, k) => {
    const group = groups[k] ?? [];
    if (group.length === 0) return [];
    return [
      {
        start: seg.start,
        end: seg.end,
        text: wordsToText(group),
        tokens: seg.tokens,
        avgLogprob: seg.avgLogprob,
      },
    ];
  });
}

function buildLabelled(
  corrected: { start: number; end: number; text: string }[],
  diarization: DiarizationResult | null,
): { content: TranscriptContentInput; speakerCount: number | null } {
  if (!diarization) {
    const words: TranscriptWord[] = corrected.map((w) => ({ ...w, speaker: null }));
    const content = {
      text: wordsToText(words),
      words,
      utterances: utterancesFromWords(words),
      diarizationSegments: null,
    };
    return { content, speakerCount: null };
  }
  const words: TranscriptWord[] = labelWords(corrected, diarization.segments);
  // Millisecond precision, like the words (the timeline is computed on a 10 ms float grid).
  const segments: DiarizationSegment[] = diarization.segments.map((seg) => ({
    start: ms(seg.start),
    end: ms(seg.end),
    speakers: [...seg.speakers],
  }));
  const content = {
    text: wordsToText(words),
    words,
    utterances: buildUtterances(words, diarization.segments),
    diarizationSegments: segments,
  };
  return { content, speakerCount: diarization.speakerCount };
}
