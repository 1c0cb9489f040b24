import { createHash } from 'node:crypto';
import { lockAccount, placeHold } from '@hark/billing';
import { HarkError, LIMITS, costForSeconds, newId } from '@hark/core';
import { type Db, Prisma } from '@hark/db';
import {
  ERASED_REQUEST_HASH,
  NO_EXPIRED_TRANSCRIPT,
  cancelTranscript,
  eraseTranscript,
  feedAccount,
  feedAccountNow,
  uploadStillRead,
} from '@hark/transcripts';
import {
  type CreateTranscriptInput,
  type CreateTranscriptRequest,
  parseCreateTranscript,
} from '../schemas/create-transcript';
import { CreateTranscriptBody } from '../schemas/transcript.schemas';
import type { CompletionWaiter } from './completion-waiter';
import type { TranscriptQueue } from './transcript-queue';
import { TRANSCRIPT_SELECT, transcriptView } from './transcript-view';
import type { BlobStore } from '@hark/storage';
import { visibleTranscripts } from './visible-transcripts';

export interface TranscriptServiceConfig {
  ratePerHour: string;
  speakersRatePerHour: string;
  /** Seconds of audio the provisional hold at create covers. */
  provisionalHoldSeconds: number;
  /** Jobs an account may have waiting in the queue; the rest wait in Postgres (`feedAccount`). */
  queuedPerAccount: number;
  modelName: string;
  /** Checks webhookUrl is a public http(s) URL (DNS included); false when refused. */
  isAllowedWebhookUrl(url: string): Promise<boolean>;
}

/** Engine options the OpenAI-compatible routes set (the JSON/form create never does). */
export interface TranscriptEngineOptions {
  task: 'transcribe' | 'translate';
  prompt: string | null;
  temperature: number | null;
}

export interface CreateResult {
  status: 201 | 200;
  transcript: ReturnType<typeof transcriptView>;
}

const TRANSCRIPT_ID = /^tr_[A-Za-z0-9_-]{1,40}$/;

/** A transcript's row as the service reads it: the view's fields, and what polling needs. */
const FIND_SELECT = { ...TRANSCRIPT_SELECT, audioSeconds: true, startedAt: true } as const;

/** Transcript use cases for the API: create, read, wait, cancel, delete. */
export class TranscriptService {
  constructor(
    private readonly db: Db,
    private readonly queue: TranscriptQueue,
    private readonly waiter: CompletionWaiter,
    private readonly blobs: BlobStore,
    private readonly cfg: TranscriptServiceConfig,
  ) {}

  /**
   * Full validation of a raw request without creating anything: the schema layer's parse
   * (`parseCreateTranscript`), then the webhook's DNS check.
   */
  async validate(body: unknown, idempotencyKey?: unknown): Promise<CreateTranscriptRequest> {
    const request = parseCreateTranscript(body, idempotencyKey);
    await this.checkWebhookUrl(request.input);
    return request;
  }

  /** The webhook must reach a public address (a DNS look-up, so not part of the parse). */
  private async checkWebhookUrl(input: CreateTranscriptInput): Promise<void> {
    if (input.webhookUrl !== undefined && !(await this.cfg.isAllowedWebhookUrl(input.webhookUrl)))
      throw HarkError.validation({ webhookUrl: 'webhook_url_invalid' });
  }

  /**
   * Creates a transcript (201), or returns the account's identical one (200, reuseIfIdentical).
   * With an Idempotency-Key, the key's record is inserted in the same transaction as the
   * transcript: concurrent requests with one key queue on its primary key and replay the
   * first one's result; a refused request rolls back and stores nothing; a crash before commit
   * leaves nothing behind, after commit the retry finds the transcript.
   */
  async create(
    accountId: string,
    apiKeyId: string,
    { input, idempotencyKey }: CreateTranscriptRequest,
    engine?: TranscriptEngineOptions,
  ): Promise<CreateResult> {
    await this.checkWebhookUrl(input);
    const requestHash = idempotencyKey === undefined ? null : canonicalHash(input);
    const rate = input.speakersParsed !== null ? this.cfg.speakersRatePerHour : this.cfg.ratePerHour;
    const id = newId('tr');
    const outcome = await this.db.$transaction(async (tx) => {
      if (idempotencyKey !== undefined && requestHash !== null) {
        const prior = await claimIdempotencyKey(tx, accountId, idempotencyKey, requestHash);
        if (prior) return { replay: true as const, ...prior };
      }
      // After the key: a retry of a create that succeeded replays it even when the upload has
      // since been erased (its transcript deleted or expired) or swept.
      const upload = input.uploadId
        ? await usableUpload(tx, accountId, input.uploadId, input.reuseIfIdentical === true)
        : null;
      const remember = async (transcriptId: string, status: 200 | 201) => {
        if (idempotencyKey === undefined) return;
        await tx.idempotencyRecord.update({
          where: { accountId_key: { accountId, key: idempotencyKey } },
          data: { transcriptId, statusCode: status },
        });
      };
      if (upload && input.reuseIfIdentical) {
        const existing = await this.findReusable(tx, accountId, upload.sha256!, input);
        if (existing) {
          await remember(existing, 200);
          return { replay: false as const, transcriptId: existing, status: 200 as const };
        }
      }
      const acct = await lockAccount(tx, accountId);
      if (!acct.available.greaterThan(0)) throw new HarkError('insufficient_balance');
      if (!acct.toppedUp) {
        const running = await tx.transcript.count({ where: { accountId, status: 'processing' } });
        if (running >= LIMITS.freeConcurrentTranscripts) throw new HarkError('concurrency_limit');
      }
      const account = await tx.account.findUniqueOrThrow({
        where: { id: accountId },
        select: { defaultRetentionDays: true },
      });
      const days = input.retentionDays ?? account.defaultRetentionDays;
      const now = new Date();
      await tx.transcript.create({
        data: {
          id,
          accountId,
          apiKeyId,
          url: input.url ?? null,
          uploadId: input.uploadId ?? null,
          requestedLanguage: input.languageCode,
          speakers:
            input.speakersParsed === null ? Prisma.DbNull : (input.speakersParsed as Prisma.InputJsonValue),
          glossary: input.glossary ?? Prisma.DbNull,
          webhookUrl: input.webhookUrl ?? null,
          externalId: input.externalId ?? null,
          metadata: input.metadata ?? Prisma.DbNull,
          retentionDays: input.retentionDays ?? null,
          expiresAt: days === null ? null : new Date(now.getTime() + days * 86_400_000),
          rate,
          model: this.cfg.modelName,
          ...(engine ? { task: engine.task, prompt: engine.prompt, temperature: engine.temperature } : {}),
          audioSha256: upload?.sha256 ?? null,
          createdAt: now,
        },
      });
      const hold = await placeHold(
        tx,
        accountId,
        id,
        costForSeconds(this.cfg.provisionalHoldSeconds, rate),
        acct.available,
      );
      await tx.transcript.update({ where: { id }, data: { reserved: hold.toString() } });
      await remember(id, 201);
      // Still under the account lock taken for the hold: the new transcript enters the queue
      // now only if the account has fewer than `queuedPerAccount` jobs waiting there.
      const queued = await feedAccount(tx, accountId, this.cfg.queuedPerAccount);
      return { replay: false as const, transcriptId: id, status: 201 as const, queued };
    });
    if (outcome.queued) await this.queue.enqueue(outcome.queued);
    return { status: outcome.status, transcript: await this.get(accountId, outcome.transcriptId) };
  }

  /** Newest transcript of the account for the same audio digest and options, processing or done. */
  private async findReusable(
    tx: Prisma.TransactionClient,
    accountId: string,
    sha256: string,
    input: CreateTranscriptInput,
  ): Promise<string | null> {
    const candidates = await tx.transcript.findMany({
      where: {
        accountId,
        audioSha256: sha256,
        status: { in: ['processing', 'done'] },
        ...visibleTranscripts(),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { id: true, requestedLanguage: true, speakers: true, glossary: true },
      take: 50,
    });
    const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
    const match = candidates.find(
      (c) =>
        c.requestedLanguage === input.languageCode &&
        same(sortKeys(c.speakers), sortKeys(input.speakersParsed)) &&
        same(sortKeys(c.glossary), sortKeys(input.glossary ?? null)),
    );
    return match?.id ?? null;
  }

  async get(accountId: string, id: string) {
    const t = await this.find(accountId, id);
    const content =
      t.status === 'done'
        ? await this.db.transcriptContent.findUnique({ where: { transcriptId: id } })
        : null;
    return transcriptView(t, content);
  }

  private async find(accountId: string, id: string) {
    if (!TRANSCRIPT_ID.test(id)) throw new HarkError('not_found');
    const t = await this.db.transcript.findFirst({
      where: { id, accountId, ...visibleTranscripts() },
      select: FIND_SELECT,
    });
    if (!t) throw new HarkError('not_found');
    return t;
  }

  /**
   * GET with `wait`: holds the request until the transcript finishes (woken through Redis
   * pub/sub) or `waitSeconds` pass, or the client goes away.
   */
  async getWaiting(accountId: string, id: string, waitSeconds: number, closed: AbortSignal) {
    await this.waiter.start();
    const w = this.waiter.wait(id, waitSeconds * 1000);
    const onClose = () => w.cancel();
    closed.addEventListener('abort', onClose);
    // Aborted before the listener was there (while the waiter started): no event will come.
    if (closed.aborted) onClose();
    try {
      const first = await this.get(accountId, id);
      if (first.status !== 'processing' || waitSeconds === 0) return first;
      await w.done;
      return await this.get(accountId, id);
    } finally {
      closed.removeEventListener('abort', onClose);
      w.cancel();
    }
  }

  /** Seconds worth waiting before polling again: from the audio length once probed. */
  async retryAfterSeconds(accountId: string, id: string): Promise<number> {
    const t = await this.find(accountId, id);
    if (t.audioSeconds === null) return 2;
    const elapsed = t.startedAt ? (Date.now() - t.startedAt.getTime()) / 1000 : 0;
    return Math.min(60, Math.max(1, Math.ceil(t.audioSeconds * 0.25 - elapsed)));
  }

  async cancel(accountId: string, id: string) {
    await this.find(accountId, id);
    if (!(await cancelTranscript(this.db, id))) throw new HarkError('transcript_finished');
    await this.queue.canceled(id);
    // A canceled waiting job frees its account's place in the queue for the next held one. The
    // cancel has happened: a failure here is not the caller's, and the reconciler feeds accounts
    // whose held transcripts nobody fed.
    await feedAccountNow(this.db, accountId, this.cfg.queuedPerAccount)
      .then((ids) => this.queue.enqueue(ids))
      .catch(() => undefined);
    // The transcript as the cancel left it: no longer processing, it may be deleted (or expire)
    // by now, and the caller must still learn that the cancel took effect. It has no content.
    const t = await this.db.transcript.findUniqueOrThrow({
      where: { id },
      select: FIND_SELECT,
    });
    return transcriptView(t, null);
  }

  /**
   * Erases content, the caller's data and stored audio in one transaction (`eraseTranscript`);
   * the row stays for usage records. `signal`: aborted when the client is gone, which ends the
   * removal of the bytes (the upload sweeper removes them for sure later).
   */
  async delete(accountId: string, id: string, signal?: AbortSignal) {
    const t = await this.find(accountId, id);
    if (t.status === 'processing') throw new HarkError('transcript_processing');
    const uploadId = await this.db.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ upload_id: string | null; status: string }[]>`
        SELECT upload_id, status FROM transcripts WHERE id = ${id} AND deleted_at IS NULL FOR UPDATE`;
      const row = rows[0];
      if (!row) throw new HarkError('not_found');
      if (row.status === 'processing') throw new HarkError('transcript_processing');
      // Content, the caller's data on the row and its delivery records; the usage record stays.
      return eraseTranscript(tx, id, row.upload_id, new Date());
    });
    // After commit: a crash here leaves an erased upload whose file the worker's sweeper removes.
    // The store failing here must not fail a deletion already committed: the sweeper retries.
    // The erasure already stops every new use of the upload; its bytes stay only while another
    // transcript of it is still processing (it reads them), and the sweeper removes them after.
    if (uploadId && !(await uploadStillRead(this.db, uploadId))) {
      await this.blobs.remove(uploadId, signal ? { signal } : {}).catch(() => undefined);
    }
    return { id, deleted: true as const };
  }
}

/** The upload a create names, if it can be transcribed (refusals as the spec lists them). */
async function usableUpload(
  tx: Prisma.TransactionClient,
  accountId: string,
  uploadId: string,
  reuse: boolean,
) {
  // Locked until the create commits: a deletion erasing the upload waits for it and then sees
  // its transcript among the upload's readers (the bytes stay), or erased it first (404 here).
  const rows = await tx.$queryRaw<
    { id: string; receivedBytes: bigint; expectedBytes: bigint | null; sha256: string | null }[]
  >`
    SELECT u.id, u.received_bytes AS "receivedBytes", u.expected_bytes AS "expectedBytes", u.sha256
    FROM uploads u
    WHERE u.id = ${uploadId} AND u.account_id = ${accountId} AND u.erased_at IS NULL AND ${NO_EXPIRED_TRANSCRIPT}
    FOR NO KEY UPDATE OF u`;
  const upload = rows[0];
  if (!upload) throw new HarkError('upload_not_found');
  if (upload.receivedBytes === 0n) throw HarkError.validation({ uploadId: 'upload_empty' });
  if (upload.expectedBytes !== null && upload.expectedBytes !== upload.receivedBytes) {
    throw new HarkError('upload_mismatch');
  }
  if (reuse && !upload.sha256) throw HarkError.validation({ reuseIfIdentical: 'reuse_needs_sha256' });
  return upload;
}

/** Claims the key; returns the earlier request's result when the key was used before. */
async function claimIdempotencyKey(
  tx: Prisma.TransactionClient,
  accountId: string,
  key: string,
  requestHash: string,
) {
  await tx.idempotencyRecord.deleteMany({ where: { accountId, key, expiresAt: { lt: new Date() } } });
  const inserted = await tx.$executeRaw`
    INSERT INTO idempotency_records (account_id, key, request_hash, expires_at)
    VALUES (${accountId}, ${key}, ${requestHash}, ${new Date(Date.now() + LIMITS.idempotencyKeyTtlMs)})
    ON CONFLICT (account_id, key) DO NOTHING`;
  if (inserted === 1) return null;
  const prior = await tx.idempotencyRecord.findUniqueOrThrow({
    where: { accountId_key: { accountId, key } },
  });
  // Its transcript was deleted: the fingerprint is gone, and any body replays it (404 not_found).
  if (prior.requestHash !== requestHash && prior.requestHash !== ERASED_REQUEST_HASH)
    throw new HarkError('idempotency_conflict');
  if (!prior.transcriptId || (prior.statusCode !== 200 && prior.statusCode !== 201)) {
    throw new Error('idempotency record without a result'); // cannot happen: written in the same transaction
  }
  const status: 200 | 201 = prior.statusCode === 200 ? 200 : 201;
  return { transcriptId: prior.transcriptId, status };
}

/**
 * "Same body" = same parsed fields, whatever the content type (JSON, form, multipart) and
 * however a value is spelt: `language` as its normalised code ("EN" is "en"), `speakers` as
 * parsed (`false` is absent).
 */
function canonicalHash(input: CreateTranscriptInput): string {
  const parsed: Record<string, unknown> = {
    ...input,
    language: input.languageCode ?? undefined,
    speakers: input.speakersParsed ?? undefined,
  };
  const fields: Record<string, unknown> = {};
  for (const k of Object.keys(CreateTranscriptBody.properties).sort()) {
    const v = parsed[k];
    if (v !== undefined) fields[k] = sortKeys(v);
  }
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

function sortKeys(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}
