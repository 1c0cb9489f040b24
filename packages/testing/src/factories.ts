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
