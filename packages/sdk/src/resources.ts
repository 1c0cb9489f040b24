import { randomUUID } from 'node:crypto';
import type { CallOptions, Transport } from './transport';
import type {
  CreateTranscriptParams,
  DeletedTranscript,
  ListTranscriptsParams,
  SubtitleOptions,
  Transcript,
  TranscriptList,
  TranscriptListItem,
  Upload,
  WebhookDelivery,
} from './types';

const seg = (id: string) => encodeURIComponent(id);

export interface CreateUploadParams {
  /** Declared total size; the upload cannot be transcribed until `receivedBytes` reaches it. */
  expectedBytes?: number;
  /** Lowercase hex SHA-256 of the whole file; needed for `reuseIfIdentical`. */
  sha256?: string;
  /** First bytes, sent with the create (at most 100 MB); omit to create an empty upload. */
  body?: Uint8Array;
}

/** `/v1/uploads`: the raw endpoints. `Hark.upload` drives them for a whole file. */
export class Uploads {
  constructor(private readonly t: Transport) {}

  /**
   * POST /v1/uploads, with an `Idempotency-Key`: a retry after a lost answer gets the same
   * upload, not a second one holding its declared size of the account's quota for a day.
   */
  create(params: CreateUploadParams = {}, opts: CreateUploadOptions = {}): Promise<Upload> {
    const { idempotencyKey = randomUUID(), ...call } = opts;
    return this.t.request<Upload>({
      method: 'POST',
      path: '/v1/uploads',
      query: { expectedBytes: params.expectedBytes, sha256: params.sha256 },
      ...(params.body ? { bytes: params.body } : {}),
      headers: { 'Idempotency-Key': idempotencyKey },
      retry: 'safe',
      ...call,
    });
  }

  /** GET /v1/uploads/{id}: `receivedBytes` is where to resume. */
  get(id: string, opts: CallOptions = {}): Promise<Upload> {
    return this.t.request<Upload>({ method: 'GET', path: `/v1/uploads/${seg(id)}`, retry: 'safe', ...opts });
  }

  /**
   * PUT /v1/uploads/{id}: appends one chunk (at most 16 MiB). Not retried, because a lost answer
   * leaves it unknown whether the chunk was stored: read `receivedBytes` with `get` and resend
   * from there (what `Hark.upload` does).
   */
  append(id: string, chunk: Uint8Array, opts: CallOptions = {}): Promise<Upload> {
    return this.t.request<Upload>({
      method: 'PUT',
      path: `/v1/uploads/${seg(id)}`,
      bytes: chunk,
      retry: 'never',
      ...opts,
    });
  }
}

export interface CreateUploadOptions extends CallOptions {
  /**
   * At most 64 characters. Default: a random key, the same for every retry of this call. Pass
   * your own (from the file's path and digest, say) and a create repeated after a crash answers
   * the upload it made, as it stands: `Hark.upload` then goes on from its `receivedBytes`. Kept
   * 24 hours; the keys of transcripts are apart.
   */
  idempotencyKey?: string;
}

export interface CreateTranscriptOptions extends CallOptions {
  /**
   * At most 64 characters. Default: a random key, the same for every retry of this call, so a
   * retried create never makes a second transcript. Pass your own to cover your own retries too
   * (derive it from the first `uploadId`, which changes when an upload is redone).
   */
  idempotencyKey?: string;
}

export interface GetTranscriptOptions extends CallOptions {
  /** Hold the request up to this many seconds (1-60) while the transcript is processing. */
  wait?: number;
}

function dateParam(v: string | Date | undefined): string | undefined {
  return v instanceof Date ? v.toISOString() : v;
}

/** `/v1/transcripts` and its sub-resources. */
export class Transcripts {
  constructor(private readonly t: Transport) {}

  /** POST /v1/transcripts: 201 `processing`, or the existing transcript when `reuseIfIdentical` matched. */
  create(params: CreateTranscriptParams, opts: CreateTranscriptOptions = {}): Promise<Transcript> {
    const { idempotencyKey = randomUUID(), ...call } = opts;
    return this.t.request<Transcript>({
      method: 'POST',
      path: '/v1/transcripts',
      json: params,
      headers: { 'Idempotency-Key': idempotencyKey },
      retry: 'safe',
      ...call,
    });
  }

  /** GET /v1/transcripts/{id}, optionally holding the answer with `wait`. */
  get(id: string, opts: GetTranscriptOptions = {}): Promise<Transcript> {
    const { wait, ...call } = opts;
    return this.t.request<Transcript>({
      method: 'GET',
      path: `/v1/transcripts/${seg(id)}`,
      query: { wait },
      retry: 'safe',
      // The service may hold the answer for the whole wait.
      extraTimeoutMs: (wait ?? 0) * 1000,
      ...call,
    });
  }

  /** GET /v1/transcripts: one page, newest first. */
  list(params: ListTranscriptsParams = {}, opts: CallOptions = {}): Promise<TranscriptList> {
    return this.t.request<TranscriptList>({
      method: 'GET',
      path: '/v1/transcripts',
      query: { ...params, since: dateParam(params.since), until: dateParam(params.until) },
      retry: 'safe',
      ...opts,
    });
  }

  /**
   * Every transcript matching the filter, newest first, fetched page by page through
   * `nextCursor` (which never skips or repeats, even while transcripts are being created).
   */
  async *listAll(
    params: Omit<ListTranscriptsParams, 'page' | 'cursor'> = {},
    opts: CallOptions = {},
  ): AsyncGenerator<TranscriptListItem, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...params, ...(cursor ? { cursor } : {}) }, opts);
      yield* page.transcripts;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /**
   * POST /v1/transcripts/{id}/cancel. When a retry follows an attempt whose answer was lost and
   * meets 409 `transcript_finished`, the transcript is read: if it is `canceled`, that is this
   * call's own earlier success and it is returned.
   */
  cancel(id: string, opts: CallOptions = {}): Promise<Transcript> {
    return this.t.request<Transcript>({
      method: 'POST',
      path: `/v1/transcripts/${seg(id)}/cancel`,
      retry: 'safe',
      recover: async (err) => {
        if (err.code !== 'transcript_finished') return undefined;
        const now = await this.get(id, opts);
        return now.status === 'canceled' ? now : undefined;
      },
      ...opts,
    });
  }

  /**
   * DELETE /v1/transcripts/{id}. A 404 on a retry after a lost answer is this call's own
   * earlier success, and is reported as deleted; after a failure that sent nothing (connection
   * refused, no DNS answer) it is the plain 404 it seems.
   */
  delete(id: string, opts: CallOptions = {}): Promise<DeletedTranscript> {
    return this.t.request<DeletedTranscript>({
      method: 'DELETE',
      path: `/v1/transcripts/${seg(id)}`,
      retry: 'safe',
      recover: async (err) => (err.code === 'not_found' ? { id, deleted: true } : undefined),
      ...opts,
    });
  }

  /**
   * GET /v1/transcripts/{id}/subtitles: a done transcript as SubRip, WebVTT or plain text.
   * While it is processing the service answers 409 `transcript_processing`, retryable with
   * `Retry-After`, which is retried like any retryable error (call `waitForTranscript` first to
   * avoid the wait); 409 `transcript_not_done` when it failed or was canceled; 404 `not_found`.
   */
  subtitles(id: string, options: SubtitleOptions, opts: CallOptions = {}): Promise<string> {
    const { format, maxLineLength, maxCueDuration, maxLines, speakerLabels } = options;
    return this.t.request<string>({
      method: 'GET',
      path: `/v1/transcripts/${seg(id)}/subtitles`,
      query: { format, maxLineLength, maxCueDuration, maxLines, speakerLabels },
      responseType: 'text',
      retry: 'safe',
      ...opts,
    });
  }
}

/** `/v1/transcripts/{id}/webhook-deliveries`. */
export class WebhookDeliveries {
  constructor(private readonly t: Transport) {}

  /** Every attempt, automatic and manual, oldest first. */
  list(transcriptId: string, opts: CallOptions = {}): Promise<WebhookDelivery[]> {
    return this.t.request<WebhookDelivery[]>({
      method: 'GET',
      path: `/v1/transcripts/${seg(transcriptId)}/webhook-deliveries`,
      retry: 'safe',
      ...opts,
    });
  }

  /**
   * Sends the completion notice again now and returns that attempt's record. Retried only on
   * 429: any other failure may already have sent a notice. 409 `no_webhook` when the transcript
   * has no `webhookUrl` or has not finished.
   */
  replay(transcriptId: string, opts: CallOptions = {}): Promise<WebhookDelivery> {
    return this.t.request<WebhookDelivery>({
      method: 'POST',
      path: `/v1/transcripts/${seg(transcriptId)}/webhook-deliveries`,
      retry: 'refused',
      ...opts,
    });
  }
}
