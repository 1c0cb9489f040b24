import { deflateSync } from 'node:zlib';
import { buildCues } from './subtitle-cues';
import { type SubtitleContent, renderSubtitles } from './subtitle-render';
import { languageName } from './openai-languages';
import type { AudioTask, Granularity, ResponseFormat } from './openai-request';

/**
 * The body of a finished transcription in the `response_format` asked for, shaped as OpenAI
 * returns it. Pure: the service fetches, this formats.
 *
 * Segments are whisper.cpp's own (timing, token ids, mean token log-probability; their text
 * rebuilt from the corrected words by the worker). Transcripts made before the worker kept them
 * get segments cut from the words at sentence ends (at most 30 s and 250 characters, by the cue
 * builder the subtitles use), with `tokens` [] and `avg_logprob` 0. whisper.cpp reports no
 * no-speech probability: `no_speech_prob` is 0. `temperature` is the one asked for (0 by
 * default; the engine may have fallen back higher), `compression_ratio` is computed from the text
 * as Whisper does (bytes over zlib-compressed bytes).
 */
export interface FinishedTranscript {
  text: string;
  words: SubtitleContent['words'];
  utterances: SubtitleContent['utterances'];
  /** Language code (the requested one, or the detected one). */
  language: string;
  /** Measured audio length in seconds (fractional). */
  durationSeconds: number;
  /** Billed seconds (integer), reported as `usage`. */
  billedSeconds: number;
  diarized: boolean;
  /** The engine's segments as the worker stored them; null on older transcripts. */
  engineSegments: readonly EngineSegment[] | null;
}

export interface EngineSegment {
  start: number;
  end: number;
  text: string;
  tokens: number[];
  avgLogprob: number | null;
}

export interface FormatOptions {
  format: ResponseFormat;
  task: AudioTask;
  granularities: readonly Granularity[];
  temperature: number | null;
}

export interface OpenAiSegment {
  id: number;
  seek: number;
  start: number;
  end: number;
  text: string;
  tokens: number[];
  temperature: number;
  avg_logprob: number;
  compression_ratio: number;
  no_speech_prob: number;
}

export type FormattedBody = { kind: 'json'; body: Record<string, unknown> } | { kind: 'text'; body: string };

/** The same defaults as GET /v1/transcripts/{id}/subtitles. */
const SUBTITLES = { maxLineLength: 42, maxCueDuration: 6, maxLines: 2, speakerLabels: true } as const;
/** 250 characters or 30 s at most; a sentence end after 25 characters closes a segment. */
const SEGMENTS = { maxLineLength: 50, maxCueDuration: 30, maxLines: 5 } as const;

const round = (n: number) => Math.round(n * 1000) / 1000;

/**
 * A time inside the audio, rounded as every time here. The engine's last 30 s window can run past
 * the end (speech-60s.wav: a segment ending at 61.16 s); the worker already ends words there
 * (`withinAudio`), so the cues built from them end there too, and segments end there the same way.
 */
const withinAudio = (n: number, seconds: number) =>
  round(seconds > 0 ? Math.min(Math.max(n, 0), seconds) : n); // no length known: as it is

export function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length === 0) return 0;
  return round(bytes.length / deflateSync(bytes).length);
}

export function segmentsOf(t: FinishedTranscript, temperature: number): OpenAiSegment[] {
  const source: EngineSegment[] =
    t.engineSegments && t.engineSegments.length > 0
      ? [...t.engineSegments]
      : // Speaker changes cut cues too: a segment never spans two speakers.
        buildCues(t.words, SEGMENTS).map((cue) => ({
          start: cue.start,
          end: cue.end,
          text: cue.lines.join(' '),
          tokens: [],
          avgLogprob: null,
        }));
  return source.map((seg, id) => {
    const start = withinAudio(seg.start, t.durationSeconds);
    return {
      id,
      // Whisper's seek: the 30 s window's start, in 10 ms frames.
      seek: Math.floor(start / 30) * 3000,
      start,
      end: withinAudio(seg.end, t.durationSeconds),
      text: ` ${seg.text}`,
      tokens: seg.tokens,
      temperature,
      avg_logprob: seg.avgLogprob ?? 0,
      compression_ratio: compressionRatio(seg.text),
      no_speech_prob: 0,
    };
  });
}

export function formatTranscription(t: FinishedTranscript, opts: FormatOptions): FormattedBody {
  const usage = { type: 'duration', seconds: t.billedSeconds };
  switch (opts.format) {
    case 'json':
      return { kind: 'json', body: { text: t.text, usage } };
    case 'text':
    case 'srt':
    case 'vtt':
      return {
        kind: 'text',
        body: renderSubtitles(opts.format === 'text' ? 'txt' : opts.format, t, t.diarized, SUBTITLES),
      };
    case 'verbose_json': {
      const words = opts.granularities.includes('word');
      const segments = opts.granularities.length === 0 || opts.granularities.includes('segment');
      return {
        kind: 'json',
        body: {
          task: opts.task,
          // A translation is English whatever was spoken (OpenAI reports "english" too).
          language: opts.task === 'translate' ? 'english' : languageName(t.language),
          duration: round(t.durationSeconds),
          text: t.text,
          ...(segments ? { segments: segmentsOf(t, opts.temperature ?? 0) } : {}),
          ...(words
            ? {
                words: t.words.map((w) => ({
                  word: w.text,
                  start: withinAudio(w.start, t.durationSeconds),
                  end: withinAudio(w.end, t.durationSeconds),
                })),
              }
            : {}),
          usage,
        },
      };
    }
  }
}
