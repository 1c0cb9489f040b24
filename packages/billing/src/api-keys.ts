import {
  HarkError,
  displayPrefix,
  generateApiKey,
  hmacApiKey,
  newId,
  seal,
  webhookSecretOf,
} from '@hark/core';
import type { Db } from '@hark/db';

/** Issues a key. The plain key is returned once and never stored. */
export async function issueApiKey(db: Db, secret: string, accountId: string, label?: string) {
  const account = await db.account.findUnique({ where: { id: accountId }, select: { id: true } });
  if (!account) throw new HarkError('not_found', `No account ${accountId}.`);
  const key = generateApiKey();
  const row = await db.apiKey.create({
    data: {
      id: newId('key'),
      accountId,
      keyHmac: hmacApiKey(key, secret),
      prefix: displayPrefix(key),
      signingSecretSealed: seal(webhookSecretOf(key), secret),
      label: label ?? null,
    },
    select: { id: true, prefix: true, createdAt: true },
  });
  return { ...row, key };
}

export async function revokeApiKey(db: Db, keyId: string) {
  const n = await db.apiKey.updateMany({
    where: { id: keyId, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  if (n.count === 0) {
    const exists = await db.apiKey.findUnique({ where: { id: keyId }, select: { id: true } });
    if (!exists) throw new HarkError('not_found', `No key ${keyId}.`);
  }
}

export function listApiKeys(db: Db, accountId: string) {
  return db.apiKey.findMany({
    where: { accountId },
    orderBy: { createdAt: 'asc' },
    select: { id: true, prefix: true, label: true, createdAt: true, revokedAt: true },
  });
}
