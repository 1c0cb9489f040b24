import type { Db } from '@hark/db';
import type { AuthContext } from '../context';
import type { MultipartForm } from '../middleware/multipart-form';
import { parseCreateTranscript } from '../schemas/create-transcript';
import {
  OpenAiError,
  afterTranscriptCreated,
  transcriptCanceled,
  transcriptFailure,
  transcriptTimedOut,
  tooManyWaiting,
} from './openai-errors';
import {
  type FinishedTranscript,
  type FormatOptions,
  type FormattedBody,
  formatTranscription,
} from './openai-format';
import { type AudioTask, type OpenAiAudioRequest, parseAudioRequest } from './openai-request';
import type { OpenAiWaitingPlaces } from './openai-waiting';
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

/**
 * POST /v1/audio/transcriptions and /v1/audio/translations: the file becomes an upload
 * (UploadService, the blob store), the upload a transcript (TranscriptService.create: the same
 * balance check, hold, concurrency limit and queue as POST /v1/transcripts), and the request
 * waits for it like GET ?wait= does. The transcript is an ordinary one: listed, charged on
 * `done` by its real duration, never for failures, and readable later by its id.
 *
 * Memory: the file goes to the blob store as it arrives (a form's file part, streamed), and a
 * waiting request keeps only its parsed options, so what a request holds does not depend on its
 * file; an account has at most `places.perAccount` requests here at once.
 */
/** How a waiting request answers once its transcript is done. */
type Reply = FormatOptions & { diarized: boolean };

export class OpenAiAudioService {
  constructor(
    private readonly db: Db,
    private readonly uploads: UploadService,
    private readonly transcripts: TranscriptService,
    private readonly places: OpenAiWaitingPlaces,
    private readonly cfg: OpenAiAudioConfig,
  ) {}

  /** Null when the client went away before the transcript finished (it goes on regardless). */
  async run(
    auth: AuthContext,
    task: AudioTask,
    /** Starts reading the request's form; called once the request has its place. */
    readForm: () => MultipartForm,
    closed: AbortSignal,
    /** When the request arrived (ms since the epoch); the wait bound counts from it. Default now. */
    arrivedAt: number = Date.now(),
  ): Promise<FormattedBody | null> {
    // Before a byte of the body is read: a refused request's body is discarded by Node.
    const place = await this.places.take(auth.accountId);
    if (!place) throw tooManyWaiting(this.places.perAccount);
    try {
      const { id, reply } = await this.start(auth, task, readForm());
      try {
        return await this.answer(auth, id, reply, closed, arrivedAt);
      } catch (err) {
        throw afterTranscriptCreated(err, id);
      }
    } finally {
      await place.release();
    }
  }

  /**
   * Stores the file, reads the fields and creates the transcript: its id, and the few options
   * its answer needs (what waits keeps no more of the request: not its fields, not its prompt).
   */
  private async start(
    auth: AuthContext,
    task: AudioTask,
    form: MultipartForm,
  ): Promise<{ id: string; reply: Reply }> {
    const { uploadId, req } = await this.store(auth, form);
    const created = await this.transcripts.create(
      auth.accountId,
      auth.apiKeyId,
      parseCreateTranscript({ ...req.createBody, uploadId }),
      { task, prompt: req.prompt, temperature: req.temperature },
    );
    const reply = {
      format: req.responseFormat,
      task,
      granularities: req.granularities,
      temperature: req.temperature,
      diarized: req.createBody.speakers !== undefined && req.createBody.speakers !== false,
    };
    return { id: created.transcript.id, reply };
  }

  /**
   * Streams the form's file into a new upload as it arrives, and reads the fields (those after
   * the file too: the official npm client sends the file first) before the upload is recorded:
   * refused fields leave nothing stored. Nothing of the file is kept.
   */
  private async store(
    auth: AuthContext,
    form: MultipartForm,
  ): Promise<{ uploadId: string; req: OpenAiAudioRequest }> {
    const file = await form.file;
    if (!file) {
      parseAudioRequest(await form.fields, false, this.cfg.models);
      throw new Error('a request without a file passed its checks'); // parseAudioRequest refuses it
    }
    let req: OpenAiAudioRequest | undefined;
    const upload = await this.uploads.createWithBody(
      auth.accountId,
      { expectedBytes: null, sha256: null },
      file.stream,
      file.atMost,
      {
        beforeRecord: async (bytes) => {
          const parsed = parseAudioRequest(await form.fields, true, this.cfg.models);
          if (bytes === 0) throw OpenAiError.invalid('The file is empty.', 'file', 'empty_file');
          // The extensions' own validation before the upload is recorded (the id is a stand-in).
          await this.transcripts.validate({ ...parsed.createBody, uploadId: 'up_pending' });
          req = parsed;
        },
      },
    );
    return { uploadId: upload.id, req: req! };
  }

  /** Waits for the created transcript and formats it; null when the client went away. */
  private async answer(
    auth: AuthContext,
    id: string,
    reply: Reply,
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
      diarized: reply.diarized,
      engineSegments: (row?.content?.segments ?? null) as FinishedTranscript['engineSegments'],
    };
    return formatTranscription(finished, reply);
  }
}
