import { createAccount, issueApiKey, lockAccount, placeHold, topUp } from '@hark/billing';
import { costForSeconds, newId } from '@hark/core';
import type { Db, Prisma } from '@hark/db';

export interface TestAccount {
  accountId: string;
  apiKeyId: string;
  apiKey: string;
  auth: { Authorization: string };
}

/** An account with a key and, by default, 1000 cents of trial credits. */
export async function createTestAccount(
  db: Db,
  secret: string,
  opts: { credits?: string | number; toppedUp?: boolean; name?: string; retentionDays?: number | null } = {},
): Promise<TestAccount> {
  const { id } = await createAccount(db, {
    name: opts.name ?? 'test',
    trialCredits: opts.toppedUp ? 0 : (opts.credits ?? 1000),
    ...(opts.retentionDays !== undefined ? { defaultRetentionDays: opts.retentionDays } : {}),
  });
  if (opts.toppedUp) await topUp(db, id, opts.credits ?? 1000);
  const key = await issueApiKey(db, secret, id);
  return { accountId: id, apiKeyId: key.id, apiKey: key.key, auth: { Authorization: `Bearer ${key.key}` } };
}

/** Fields of a transcript row a test chooses; the rest are the create defaults. */
export type TranscriptRowFields = Omit<
  Prisma.TranscriptUncheckedCreateInput,
  'id' | 'accountId' | 'apiKeyId' | 'rate' | 'model'
> & {
  /** Hourly rate in cents. Default 36. */
  rate?: string;
  model?: string;
};

/**
 * A `processing` transcript as the API's create writes it: the row and its provisional hold
 * (`holdSeconds` at its rate, or all that is available) in one transaction. Returns its id.
 */
export async function createProcessingTranscript(
  db: Db,
  account: Pick<TestAccount, 'accountId' | 'apiKeyId'>,
  fields: TranscriptRowFields = {},
  holdSeconds = 60,
): Promise<string> {
  const id = newId('tr');
  const { rate = '36', model = 'whisper-test', ...rest } = fields;
  await db.$transaction(async (tx) => {
    const acct = await lockAccount(tx, account.accountId);
    await tx.transcript.create({
      data: { ...rest, id, accountId: account.accountId, apiKeyId: account.apiKeyId, rate, model },
    });
    const hold = await placeHold(
      tx,
      account.accountId,
      id,
      costForSeconds(holdSeconds, rate),
      acct.available,
    );
    await tx.transcript.update({ where: { id }, data: { reserved: hold.toString() } });
  });
  return id;
}

/**
 * Gives a transcript the caller-supplied data it can carry (an audio URL with presigned
 * credentials, a webhook URL with a token, personal metadata, an OpenAI-route prompt, an error
 * message, an audio digest, on its upload too) and two delivery records of its notice echoing some of it: what a
 * deletion or the retention sweep must erase.
 */
export async function withCallerData(db: Db, id: string): Promise<void> {
  await db.transcript.update({
    where: { id },
    data: {
      url: 'https://files.example.com/a.wav?X-Amz-Credential=AKIAEXAMPLE&X-Amz-Signature=deadbeef',
      webhookUrl: 'https://hooks.example.com:8443/h?token=WHTOKEN123SECRET',
      metadata: { patient: 'Jane Doe' },
      externalId: 'case-4711-jane-doe',
      prompt: 'Confidential: patient John Smith',
      errorMessage: 'The audio could not be decoded.',
      audioSha256: 'ab'.repeat(32),
    },
  });
  // The upload's digests, declared and computed: fingerprints of the audio.
  await db.upload.updateMany({
    where: { transcripts: { some: { id } } },
    data: { sha256: 'ab'.repeat(32), actualSha256: 'ab'.repeat(32) },
  });
  for (const attempt of [1, 2]) {
    await db.webhookDelivery.create({
      data: {
        id: `whd_${id}_${attempt}`,
        transcriptId: id,
        url: 'https://hooks.example.com:8443/h?token=WHTOKEN123SECRET',
        attempt,
        delivered: attempt === 2,
        statusCode: attempt === 2 ? 200 : 500,
        responsePreview: 'echo: {"patient":"Jane Doe"}',
        durationMs: 12,
      },
    });
  }
}

/** What `withCallerData` put on a transcript that is still there (content included), to compare with `CALLER_DATA_ERASED`. */
export async function callerDataLeft(db: Db, id: string) {
  const t = await db.transcript.findUniqueOrThrow({ where: { id }, include: { content: true } });
  const deliveries = await db.webhookDelivery.findMany({
    where: { transcriptId: id },
    orderBy: { attempt: 'asc' },
  });
  const upload = t.uploadId
    ? await db.upload.findUniqueOrThrow({
        where: { id: t.uploadId },
        select: { sha256: true, actualSha256: true, hashState: true },
      })
    : null;
  return {
    row: {
      url: t.url,
      webhookUrl: t.webhookUrl,
      metadata: t.metadata,
      externalId: t.externalId,
      prompt: t.prompt,
      errorMessage: t.errorMessage,
      audioSha256: t.audioSha256,
      glossary: t.glossary,
      content: t.content,
    },
    upload,
    deliveries: deliveries.map((d) => [d.attempt, d.url, d.responsePreview, d.statusCode, d.delivered]),
  };
}

/**
 * `callerDataLeft` after an erasure of a transcript made from an upload and given
 * `withCallerData`: nothing but the URLs' origins.
 */
export const CALLER_DATA_ERASED = {
  row: {
    url: null,
    webhookUrl: null,
    metadata: null,
    externalId: null,
    prompt: null,
    errorMessage: null,
    audioSha256: null,
    glossary: null,
    content: null,
  },
  upload: { sha256: null, actualSha256: null, hashState: null },
  deliveries: [
    [1, 'https://hooks.example.com:8443', null, 500, false],
    [2, 'https://hooks.example.com:8443', null, 200, true],
  ],
};

/** What usage and billing keep of a transcript through its erasure. */
export async function billingOf(db: Db, id: string) {
  const r = await db.transcript.findUniqueOrThrow({ where: { id }, include: { usage: true } });
  return {
    accountId: r.accountId,
    status: r.status,
    durationSeconds: r.durationSeconds,
    cost: r.cost.toString(),
    rate: r.rate.toString(),
    createdAt: r.createdAt,
    finishedAt: r.finishedAt,
    usage: r.usage,
  };
}
