import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { newId } from '@hark/core';
import { type Db, Prisma, createDb } from '@hark/db';
import {
  type CatalogQueue,
  QUEUES,
  type Queues,
  TRANSCRIBE_JOB_OPTIONS,
  createQueues,
  transcribeJobId,
  transcriptCancelChannel,
  transcriptDoneChannel,
  workerConnection,
} from '@hark/queue';
import { type BlobStore, ResumableSha256, createBlobStore } from '@hark/storage';
import {
  type TestAccount,
  createProcessingTranscript,
  createTestAccount,
  testAudio,
  testEngine,
  waitFor,
} from '@hark/testing';
import { type HarnessFixture, workerTest as workerFixture } from '@hark/testing/jest';
import type { JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { completeTranscript } from '@hark/transcripts';
import pino from 'pino';
import { type WorkerConfig, loadWorkerConfig } from '../src/config';
import { type RunningWorker, type WorkerDeps, startWorker } from '../src/worker';

// The engine (the test model loads and runs but transcribes to nothing: words come back empty)
// and audio of @hark/testing; the secret scripts/test.sh exports.
export const testEnv = { ...testEngine, ...testAudio, secret: process.env.HARK_SECRET! };

/** Rates the API uses by default (cents per hour). */
export const RATE = '36';
export const SPEAKERS_RATE = '48';

/** Environment of one test worker: its own Redis prefix, storage and scratch folders. */
export async function workerEnv(overrides: Record<string, string> = {}): Promise<Record<string, string>> {
  const root = await mkdtemp(path.join(tmpdir(), 'hark-worker-test-'));
  return {
    DATABASE_URL: process.env.DATABASE_URL!,
    REDIS_URL: process.env.REDIS_URL!,
    HARK_SECRET: testEnv.secret,
    WHISPER_BIN: testEnv.whisperBin,
    WHISPER_MODEL: testEnv.whisperModel,
    HARK_MODELS_DIR: testEnv.modelsDir,
    HARK_REDIS_PREFIX: `hark-wtest-${randomBytes(4).toString('hex')}`,
    HARK_STORAGE_DIR: path.join(root, 'storage'),
    HARK_TMP_DIR: path.join(root, 'tmp'),
    HARK_RETENTION_SWEEP_MS: '0',
    // The reconciler acts on every account of the shared test database: off unless a test scopes it.
    HARK_RECONCILE_INTERVAL_MS: '0',
    ALLOW_PRIVATE_URLS: 'true',
    ...overrides,
  };
}

export interface TestHarness {
  config: WorkerConfig;
  env: Record<string, string>;
  db: Db;
  redis: Redis;
  blobs: BlobStore;
  /**
   * What the API's producer does: add a transcribe job with jobId = transcript id; `opts`
   * override the catalog's options (tests shorten retries).
   */
  enqueue(transcriptId: string, opts?: Partial<JobsOptions>): Promise<void>;
  queues: Queues;
  transcribeQueue: CatalogQueue<'transcribe'>;
  webhookQueue: CatalogQueue<'webhook'>;
  /** Transcript ids published on the done channel so far. */
  doneMessages: string[];
  /** What the API's cancel does: cancelTranscript happened already; tell the workers. */
  publishCancel(transcriptId: string): Promise<void>;
  /** Starts an in-process worker on this harness (several may run). */
  startWorker(deps?: Partial<WorkerDeps>): Promise<RunningWorker>;
  /** An account with a key and `credits` (default 1000). */
  account(credits?: string | number): Promise<TestAccount>;
  /** `createUpload` on this harness's database and store. */
  upload(account: TestAccount, bytes: Buffer, opts?: { sha256?: string; createdAt?: Date }): Promise<string>;
  /** `createTranscript` on this harness's database. */
  transcript(account: TestAccount, opts: TranscriptOptions): Promise<string>;
  /** An account (1000 credits), an upload of `audio`, and a transcript of it (`opts` added). */
  submit(audio: Buffer, opts?: TranscriptOptions): Promise<{ acct: TestAccount; id: string }>;
  /** `transcriptRow` on this harness's database. */
  row(id: string): ReturnType<typeof transcriptRow>;
  /** The worker's completion of `id` (1 s of whisper-base.en, English) with `content`; false if it was not processing. */
  complete(id: string, content: Parameters<typeof completeTranscript>[2]['content']): Promise<boolean>;
  /** `finishedTranscript` on this harness's database. */
  finished(
    id: string,
    opts?: Parameters<typeof finishedTranscript>[2],
  ): ReturnType<typeof finishedTranscript>;
  close(): Promise<void>;
}

/** Postgres, Redis, queues and a done-channel listener for one test file; no worker yet. */
export async function createHarness(overrides: Record<string, string> = {}): Promise<TestHarness> {
  const env = await workerEnv(overrides);
  const config = loadWorkerConfig(env);
  const db = createDb({ databaseUrl: config.databaseUrl, poolSize: 4 });
  const redis = workerConnection(config.redisUrl);
  const listener = new Redis(config.redisUrl);
  const doneMessages: string[] = [];
  listener.on('message', (_c: string, id: string) => doneMessages.push(id));
  await listener.subscribe(transcriptDoneChannel(config.redisPrefix));
  const queues = createQueues(redis, config.redisPrefix);
  const transcribeQueue = queues.transcribe.queue;
  const webhookQueue = queues.webhooks.queue;
  const workers: RunningWorker[] = [];
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
  const blobs = createBlobStore(config);
  const account = (credits: string | number = 1000) => createAccount(db, credits);
  return {
    config,
    env,
    db,
    redis,
    blobs,
    queues,
    transcribeQueue,
    webhookQueue,
    doneMessages,
    async enqueue(id, opts) {
      if (!opts) return queues.transcribe.enqueue(id);
      await transcribeQueue.add(
        QUEUES.transcribe,
        { transcriptId: id },
        { ...TRANSCRIBE_JOB_OPTIONS, jobId: transcribeJobId(id), ...opts },
      );
    },
    async publishCancel(id) {
      await redis.publish(transcriptCancelChannel(config.redisPrefix), id);
    },
    async startWorker(deps = {}) {
      const running = await startWorker({ config, db, redis, logger, ...deps });
      workers.push(running);
      return running;
    },
    account,
    upload: (acct, bytes, opts) => createUpload(db, blobs, acct.accountId, bytes, opts),
    transcript: (acct, opts) => createTranscript(db, acct, opts),
    async submit(audio, opts = {}) {
      const acct = await account();
      const uploadId = await createUpload(db, blobs, acct.accountId, audio);
      return { acct, id: await createTranscript(db, acct, { uploadId, ...opts }) };
    },
    row: (id) => transcriptRow(db, id),
    complete: (id, content) =>
      completeTranscript(db, id, {
        durationSeconds: 1,
        language: 'en',
        model: 'whisper-base.en',
        speakerCount: null,
        content,
      }),
    finished: (id, opts) => finishedTranscript(db, id, opts),
    async close() {
      await Promise.allSettled(workers.map((w) => w.close(0)));
      await queues.close();
      const keys = await redis.keys(`${config.redisPrefix}:*`);
      if (keys.length) await redis.del(...keys);
      await Promise.allSettled([listener.quit(), redis.quit(), db.$disconnect()]);
      await rm(path.dirname(config.storageDir), { recursive: true, force: true });
    },
  };
}

/**
 * `createHarness(overrides)` (or what `overrides()` resolves to) for the block it is called in (`@hark/testing/jest` `workerTest`):
 * built before its tests, closed after (with any worker it started, in process or built).
 */
export function workerTest(
  overrides: Record<string, string> | (() => Promise<Record<string, string>>) = {},
): HarnessFixture<TestHarness> {
  return workerFixture(async () =>
    createHarness(typeof overrides === 'function' ? await overrides() : overrides),
  );
}

export function createAccount(db: Db, credits: string | number = 1000): Promise<TestAccount> {
  return createTestAccount(db, testEnv.secret, { credits });
}

export interface TranscriptOptions {
  url?: string;
  uploadId?: string;
  requestedLanguage?: string | null;
  speakers?: true | number | { min: number; max: number } | null;
  glossary?: Record<string, string> | null;
  webhookUrl?: string | null;
  /** Seconds the provisional hold covers (the API's default is 60). */
  holdSeconds?: number;
  expiresAt?: Date | null;
  model?: string;
}

/** The row the API's create writes, with its provisional hold, in one transaction. */
export async function createTranscript(
  db: Db,
  account: TestAccount,
  opts: TranscriptOptions,
): Promise<string> {
  return createProcessingTranscript(
    db,
    account,
    {
      url: opts.url ?? null,
      uploadId: opts.uploadId ?? null,
      requestedLanguage: opts.requestedLanguage ?? null,
      speakers: opts.speakers == null ? Prisma.DbNull : (opts.speakers as Prisma.InputJsonValue),
      glossary: opts.glossary ?? Prisma.DbNull,
      webhookUrl: opts.webhookUrl ?? null,
      expiresAt: opts.expiresAt === undefined ? new Date(Date.now() + 30 * 86_400_000) : opts.expiresAt,
      rate: opts.speakers ? SPEAKERS_RATE : RATE,
      model: opts.model ?? 'whisper-base.en',
    },
    opts.holdSeconds ?? 60,
  );
}

/** An upload as the API stores it: the blob file, the running hash state, the declared digest. */
export async function createUpload(
  db: Db,
  blobs: BlobStore,
  accountId: string,
  bytes: Buffer,
  opts: { sha256?: string; createdAt?: Date } = {},
): Promise<string> {
  const id = newId('up');
  const hash = await ResumableSha256.start();
  async function* body() {
    yield bytes;
  }
  const { uploadId } = await blobs.appendAt(id, { offset: 0, uploadId: null }, body(), {
    maxBytes: bytes.length,
    onData: (c) => hash.update(c),
    tooLarge: () => new Error('too large'),
  });
  await db.upload.create({
    data: {
      id,
      accountId,
      receivedBytes: BigInt(bytes.length),
      multipartUploadId: uploadId,
      sha256: opts.sha256 ?? null,
      hashState: Buffer.from(hash.save()),
      ...(opts.createdAt ? { createdAt: opts.createdAt, updatedAt: opts.createdAt } : {}),
    },
  });
  return id;
}

/** A loopback HTTP server: `files` maps a path to bytes; anything else is 404. */
export async function serveFiles(
  files: Record<string, Buffer>,
): Promise<{ url(p: string): string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const body = files[req.url ?? ''];
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length })
      .end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (p) => `http://127.0.0.1:${port}${p}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function transcriptRow(db: Db, id: string) {
  return db.transcript.findUniqueOrThrow({ where: { id }, include: { content: true, usage: true } });
}

/** Waits until transcript `id` has left `processing`; resolves with its row. */
export function finishedTranscript(
  db: Db,
  id: string,
  opts: { timeout?: number; interval?: number; message?: string } = {},
) {
  return waitFor(
    async () => {
      const t = await transcriptRow(db, id);
      return t.status === 'processing' ? null : t;
    },
    {
      timeout: opts.timeout ?? 80_000,
      interval: opts.interval ?? 100,
      message: opts.message ?? `transcript ${id} to finish`,
    },
  );
}
