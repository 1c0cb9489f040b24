import { Readable } from 'node:stream';
import type { Db } from '@hark/db';
import type { AuthContext } from '../context';
import { parseCreateTranscript } from '../schemas/create-transcript';
import {
  OpenAiError,
  afterTranscriptCreated,
  transcriptCanceled,
  transcriptFailure,
  transcriptTimedOut,
} from './openai-errors';
import { type FinishedTranscript, type FormattedBody, formatTranscription } from './openai-format';
import { type AudioTask, type OpenAiAudioRequest, parseAudioRequest } from './openai-request';
import type { TranscriptService } from './transcript.service';
import type { UploadService } from './upload.service';

export interface OpenAiAudioConfig {
  /** `model` values accepted: `whisper-1` and the service's own model name. */
  models: readonly string[];
  /**
   * How long a request may take, counted from its arrival (upload included), before it answers
   * 504 with the transcript's id. Below the official clients' own 600 s time-out by default, so
   * they get the answer instead of timing out and retrying (which would start another transcript).
   */
  waitSeconds: number;
  /** Aborted when the API begins draining for shutdown: waiting requests answer at once. */
  draining?: AbortSignal;
}

export interface AudioFile {
  buffer: Buffer;
  size: number;
}

/**
 * POST /v1/audio/transcriptions and /v1/audio/translations: the file becomes an upload
 * (UploadService, the blob store), the upload a transcript (TranscriptService.create: the same
 * balance check, hold, concurrency limit and queue as POST /v1/transcripts), and the request
 * waits for it like GET ?wait= does. The transcript is an ordinary one: listed, charged on
 * `done` by its real duration, never for failures, and readable later by its id.
 */
export class OpenAiAudioService {
  constructor(
    private readonly db: Db,
    private readonly uploads: UploadService,
    private readonly transcripts: TranscriptService,
    private readonly cfg: OpenAiAudioConfig,
  ) {}

  /** Null when the client went away before the transcript finished (it goes on regardless). */
  async run(
    auth: AuthContext,
    task: AudioTask,
    fields: Record<string, unknown>,
    file: AudioFile | undefined,
    closed: AbortSignal,
    /** When the request arrived (ms since the epoch); the wait bound counts from it. Default now. */
    arrivedAt: number = Date.now(),
  ): Promise<FormattedBody | null> {
    const req = parseAudioRequest(fields, file !== undefined, this.cfg.models);
    if (!file || file.size === 0) throw OpenAiError.invalid('The file is empty.', 'file', 'empty_file');
    // The extensions' own validation before anything is stored (the id is a stand-in).
    await this.transcripts.validate({ ...req.createBody, uploadId: 'up_pending' });
    const upload = await this.uploads.createWithBody(
      auth.accountId,
      { expectedBytes: file.size, sha256: null },
      Readable.from([file.buffer]),
      file.size,
    );
    const created = await this.transcripts.create(
      auth.accountId,
      auth.apiKeyId,
      parseCreateTranscript({ ...req.createBody, uploadId: upload.id }),
      { task, prompt: req.prompt, temperature: req.temperature },
    );
    const id = created.transcript.id;
    try {
      return await this.answer(auth, id, req, task, closed, arrivedAt);
    } catch (err) {
      throw afterTranscriptCreated(err, id);
    }
  }

  /** Waits for the created transcript and formats it; null when the client went away. */
  private async answer(
    auth: AuthContext,
    id: string,
    req: OpenAiAudioRequest,
    task: AudioTask,
    closed: AbortSignal,
    arrivedAt: number,
  ): Promise<FormattedBody | null> {
    // transcriptView spreads the list item's fields; these are the ones read here.
    const t = (await this.transcripts.getWaiting(
      auth.accountId,
      id,
      this.cfg.draining?.aborted ? 0 : Math.max(0, this.cfg.waitSeconds - (Date.now() - arrivedAt) / 1000),
      this.cfg.draining ? AbortSignal.any([closed, this.cfg.draining]) : closed,
    )) as Awaited<ReturnType<TranscriptService['get']>> & {
      error: { code: string; message: string } | null;
      language: string | null;
      durationSeconds: number;
    };
    if (closed.aborted) return null;
    // Shutting down: answer (naming the transcript) before the grace period cuts the connection,
    // which the clients would retry, starting a second transcript.
    if (t.status === 'processing')
      throw transcriptTimedOut(id, this.cfg.waitSeconds, this.cfg.draining?.aborted);
    if (t.status === 'canceled') throw transcriptCanceled(id);
    if (t.status === 'failed') {
      throw transcriptFailure(t.error?.code ?? null, t.error?.message ?? null, id);
    }
    const row = await this.db.transcript.findUnique({
      where: { id },
      select: { audioSeconds: true, content: { select: { segments: true } } },
    });
    const finished: FinishedTranscript = {
      text: t.text ?? '',
      words: (t.words ?? []) as unknown as FinishedTranscript['words'],
      utterances: (t.utterances ?? []) as unknown as FinishedTranscript['utterances'],
      language: t.language ?? 'en',
      durationSeconds: row?.audioSeconds ?? t.durationSeconds,
      billedSeconds: t.durationSeconds,
      diarized: req.createBody.speakers !== undefined && req.createBody.speakers !== false,
      engineSegments: (row?.content?.segments ?? null) as FinishedTranscript['engineSegments'],
    };
    return formatTranscription(finished, {
      format: req.responseFormat,
      task,
      granularities: req.granularities,
      temperature: req.temperature,
    });
  }
}
