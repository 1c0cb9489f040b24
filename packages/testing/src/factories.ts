import { createAccount, issueApiKey, topUp } from '@hark/billing';
import type { Db } from '@hark/db';

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
