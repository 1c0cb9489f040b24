import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '@hark/db';
import type { DiarizationResult, DiarizeOptions, SpeakersOption } from '@hark/diarization';
import {
  type TranscribeInput,
  type WhisperResult,
  type WordTimestamps,
  decodeToWav,
  probeAudio,
  wavDataBytes,
} from '@hark/media';
import { type CompletionInput, billableSeconds, holdForDuration } from '@hark/transcripts';
import type { Logger } from 'pino';
import type { SpeechGate, WordTimestampPolicy } from './config';
import { failure } from './failures';
import type { ScratchBudget } from './scratch/scratch-budget';
import { buildContent } from './transcript-content';

/** The engine as the pipeline uses it (WhisperEngine; tests may pass another). */
export interface Engine {
  readonly modelName: string;
  transcribe(input: TranscribeInput): Promise<WhisperResult>;
}

/** The diarizer as the pipeline uses it (@hark/diarization `Diarizer`). */
export interface SpeakerDiarizer {
  diarize(wavPath: string, options: DiarizeOptions): Promise<DiarizationResult>;
  /** Where anyone speaks, without names (`NeuralDiarizer.speech`): the gate of transcripts without speakers. */
  speech?(wavPath: string, options: { signal?: AbortSignal }): Promise<{ start: number; end: number }[]>;
}

type Regions = { start: number; end: number }[];
/** What runs beside the engine: the speaker timeline, and where the speech gate hears speech. */
interface Beside {
  diarization: DiarizationResult | null;
  speech: Regions | null;
}

export interface PipelineDeps {
  db: Db;
  engine: Engine;
  diarizer: SpeakerDiarizer;
  maxAudioSeconds: number;
  /** WHISPER_WORD_TIMESTAMPS (see `wordTiming`). Default `dtw`. */
  wordTimestamps?: WordTimestampPolicy;
  /**
   * HARK_SPEECH_GATE: drop the words that come nowhere near speech and move the edges of those
   * kept that fall in its silence onto it (`buildContent`), on every transcript (`all`; those
   * without speakers by `diarizer.speech`) or those with speakers. Default off here (the worker's
   * configuration: `all` behind the neural diarizer).
   */
  speechGate?: SpeechGate;
  log: Logger;
  /** Told each engine run's wall time against the audio's length (WorkerMetrics). */
  metrics?: { engineRun(engineSeconds: number, audioSeconds: number): void };
}

export interface PipelineInput {
  transcriptId: string;
  /** Local audio (or video) file. */
  audioPath: string;
  /** The job's scratch folder; the decoded WAV and the engine's run folder go there. */
  workDir: string;
  /** The job's scratch space: the WAV must fit in what the audio's copy left. */
  budget: ScratchBudget;
  requestedLanguage: string | null;
  speakers: SpeakersOption | null;
  glossary: Readonly<Record<string, string>> | null;
  /** Engine options (OpenAI-compatible routes); absent: a plain transcription. */
  engineOptions?: Pick<TranscribeInput, 'task' | 'prompt' | 'temperature'>;
  signal: AbortSignal;
}

/** `not_processing`: the transcript left `processing` meanwhile (canceled): do nothing more. */
export type PipelineResult = { status: 'ready'; completion: CompletionInput } | { status: 'not_processing' };

/**
 * probe -> hold the real cost -> decode to 16 kHz mono WAV -> transcribe (and diarize, side by
 * side on the same WAV) -> corrections and glossary. Throws TranscriptFailure for the caller's
 * problems (`audio_too_long`, `insufficient_balance`, `audio_invalid`), MediaError for engine
 * trouble, the abort reason when canceled.
 */
export async function runPipeline(deps: PipelineDeps, input: PipelineInput): Promise<PipelineResult> {
  const { db, log } = deps;
  const { transcriptId: id, signal } = input;
  const timed = async <T>(step: string, run: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    const out = await run();
    log.info({ step, ms: Date.now() - started }, 'step done');
    return out;
  };

  const probe = await timed('probe', () => probeAudio(input.audioPath, { signal }));
  // The probed length is the file's own claim. Where its bytes could hold it, it may fail the
  // transcript before the expensive steps (too long, or an account that cannot pay fails now,
  // not after an hour of work); a claim the bytes cannot hold (a FLAC header saying an hour of
  // a 2 s file) waits for the decode, which is capped anyway, and the decoded length decides.
  const claimTrusted = plausibleLength(probe.durationSeconds, (await stat(input.audioPath)).size);
  if (claimTrusted) {
    checkLength(probe.durationSeconds, deps.maxAudioSeconds);
    // Its WAV must fit in the job's scratch space.
    input.budget.check(wavDataBytes(probe.durationSeconds));
    if (!(await hold(db, id, probe.durationSeconds))) return { status: 'not_processing' };
  }

  const wavPath = path.join(input.workDir, 'audio.wav');
  // Capped: the probed length is the file's own claim (an ffconcat list of 3,700 copies of an
  // upload probed as 3.7 s), so the decode stops a second past the longest accepted audio.
  const maxSeconds = deps.maxAudioSeconds;
  // Channels without a layout (a 12-channel WAV without a channel mask) are averaged to mono.
  const layoutlessChannels = probe.channelLayout === null ? probe.channels : null;
  // Any other claim's WAV stops at the room left.
  const maxOutputBytes = input.budget.left;
  const wav = await timed('decode', () =>
    decodeToWav(input.audioPath, wavPath, { signal, maxSeconds, layoutlessChannels, maxOutputBytes }),
  );
  if (wav.outOfRoom) throw input.budget.exceeded();
  input.budget.take((await stat(wavPath)).size);
  if (wav.truncated) {
    const message = `The audio is more than ${maxSeconds} seconds long; the longest accepted is ${maxSeconds} seconds.`;
    throw failure('audio_too_long', false, message);
  }
  const audioSeconds = chargedSeconds(probe.durationSeconds, wav.durationSeconds);
  checkLength(audioSeconds, deps.maxAudioSeconds);
  const seconds = billableSeconds(audioSeconds);
  // The hold follows when the decoded length says otherwise (or the claim was not held): the
  // charge never exceeds the hold.
  const held = claimTrusted && seconds === billableSeconds(probe.durationSeconds);
  if (!held && !(await hold(db, id, audioSeconds))) {
    return { status: 'not_processing' };
  }

  const speakers = input.speakers;
  const gate = deps.speechGate ?? 'off';
  const [result, beside] = await timed('transcribe', () =>
    bothOrNeither<WhisperResult, Beside>(signal, (s) => [
      timedEngine(deps, audioSeconds, () =>
        deps.engine.transcribe({
          ...input.engineOptions,
          wordTimestamps: wordTiming(deps.wordTimestamps ?? 'dtw', speakers !== null),
          wavPath,
          language: input.requestedLanguage,
          tmpDir: input.workDir,
          signal: s,
        }),
      ),
      speakers === null
        ? Promise.resolve({ diarization: null, speech: null })
        : deps.diarizer
            .diarize(wavPath, { speakers, signal: s })
            .then((d) => ({ diarization: d, speech: gate === 'off' ? null : d.segments })),
    ]),
  );
  // Without speakers, the speech pass runs after the engine, not beside it: on the same cores
  // the engine's spinning threads and onnxruntime's slowed each other (a 60 s clip took about
  // 0.5 s longer end to end), while after it the pass costs its own 0.3 s.
  const { diarization } = beside;
  const speech =
    speakers === null && gate === 'all'
      ? await timed('speech', () => speechOf(deps, wavPath, signal))
      : beside.speech;
  const words = withinAudio(result.words, wav.durationSeconds);
  const { content, speakerCount } = buildContent(words, input.glossary, diarization, result.segments, {
    speech,
  });
  return {
    status: 'ready',
    completion: {
      durationSeconds: seconds,
      language: input.requestedLanguage ?? result.language,
      model: deps.engine.modelName,
      speakerCount,
      content,
    },
  };
}

/**
 * Where anyone speaks, for the gate of a transcript without speakers; null (no gate) when the
 * diarizer has no speech pass or it fails: a gate that cannot run never fails a transcription.
 */
async function speechOf(deps: PipelineDeps, wavPath: string, signal: AbortSignal): Promise<Regions | null> {
  if (!deps.diarizer.speech) return null;
  try {
    return await deps.diarizer.speech(wavPath, { signal });
  } catch (error) {
    if (signal.aborted) throw error;
    deps.log.warn({ err: (error as Error).message }, 'speech gate skipped: the speech pass failed');
    return null;
  }
}

/**
 * Word times inside the audio: the engine's token timing can run a word past the end (a last
 * window holding a fraction of a second), and a word that starts after the end was not heard.
 */
export function withinAudio<W extends { start: number; end: number }>(
  words: readonly W[],
  seconds: number,
): W[] {
  return words
    .filter((w) => w.start < seconds)
    .map((w) => (w.end > seconds ? { ...w, end: Math.round(seconds * 1000) / 1000 } : w));
}

/**
 * How the engine times this job's words: `dtw` always by DTW; `auto` by DTW when speakers are
 * labelled (a word takes the speaker whose turns cover its time, and token timestamps spread a
 * window's words over its silences), by token timestamps otherwise, which cost no extra decoder
 * pass; `tokens` never by DTW.
 */
export function wordTiming(policy: WordTimestampPolicy, withSpeakers: boolean): WordTimestamps {
  if (policy === 'auto') return withSpeakers ? 'dtw' : 'tokens';
  return policy;
}

/** The engine alone is timed: the diarizer runs beside it and is not part of its real-time factor. */
async function timedEngine<T>(deps: PipelineDeps, audioSeconds: number, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const out = await run();
  deps.metrics?.engineRun((performance.now() - started) / 1000, audioSeconds);
  return out;
}

/**
 * Decoders pad the last codec frame (a 3.000 s AAC track decodes to 3.020 s; a frame is up to
 * ~130 ms at low sample rates), so within this the shorter of the stream's declared length and
 * the decoded one is charged. Beyond it the container misreports its length (or has none), and
 * the decoded length, what the engine really hears, counts.
 */
export const PADDING_TOLERANCE_SECONDS = 0.5;

export function chargedSeconds(declared: number, decoded: number): number {
  return Math.abs(decoded - declared) <= PADDING_TOLERANCE_SECONDS ? Math.min(declared, decoded) : decoded;
}

/**
 * The fewest bytes a second of real audio takes in the formats we accept: 4 kbit/s, under any
 * codec's lowest speech rate (Opus 6, MP3 8). Fewer bytes than that for the claimed length mean
 * the claim is a header's lie or its corruption; only silence compressed by FLAC or Opus DTX
 * goes below, and that is merely decoded before it is judged.
 */
export const MIN_PLAUSIBLE_BYTES_PER_SECOND = 500;

/** Whether a file of `bytes` can hold the `seconds` its header claims. */
export function plausibleLength(seconds: number, bytes: number): boolean {
  return bytes >= seconds * MIN_PLAUSIBLE_BYTES_PER_SECOND;
}

function checkLength(seconds: number, max: number): void {
  if (seconds > max) {
    const message = `The audio is ${Math.ceil(seconds)} seconds long; the longest accepted is ${max} seconds.`;
    throw failure('audio_too_long', false, message);
  }
}

/** Moves the hold to the cost of `seconds`. False when the transcript is no longer processing. */
async function hold(db: Db, id: string, seconds: number): Promise<boolean> {
  const held = await holdForDuration(db, id, billableSeconds(seconds), seconds);
  if (held === 'insufficient_balance') throw failure('insufficient_balance');
  return held === 'ok';
}

/**
 * Runs two steps side by side; when one fails the other is aborted at once (a crashed engine
 * must not leave the diarizer burning CPU), and the first failure is thrown.
 */
async function bothOrNeither<A, B>(
  signal: AbortSignal,
  start: (s: AbortSignal) => [Promise<A>, Promise<B>],
): Promise<[A, B]> {
  const controller = new AbortController();
  let first: { error: unknown } | null = null;
  const stopOther = (error: unknown): never => {
    first ??= { error };
    controller.abort(error);
    throw error;
  };
  const [a, b] = start(AbortSignal.any([signal, controller.signal]));
  const settled = await Promise.allSettled([a.catch(stopOther), b.catch(stopOther)]);
  if (first) throw (first as { error: unknown }).error;
  return [(settled[0] as PromiseFulfilledResult<A>).value, (settled[1] as PromiseFulfilledResult<B>).value];
}
