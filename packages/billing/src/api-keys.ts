import {
  ConfigError,
  HarkError,
  displayPrefix,
  generateApiKey,
  hmacApiKey,
  newId,
  seal,
  unseal,
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

/**
 * Fails unless `secret` (HARK_SECRET) is the one this database's API keys were made with: a
 * replica started with another one reported ready, then refused every key (401) and could not
 * sign a notice. Checked at start by the API and the dispatcher against the newest keys (any one
 * of them opening is enough); a database without keys has nothing to compare with.
 */
export async function checkSecretOpensKeys(db: Db, secret: string): Promise<void> {
  const keys = await db.apiKey
    .findMany({ select: { signingSecretSealed: true }, orderBy: { createdAt: 'desc' }, take: 20 })
    // No table yet (migrations not run): no keys to compare with; the first query says so.
    .catch((error: unknown) => {
      if ((error as { code?: string }).code === 'P2021') return [];
      throw error;
    });
  if (keys.length === 0) return;
  const opens = keys.some((k) => {
    try {
      unseal(k.signingSecretSealed, secret);
      return true;
    } catch {
      return false;
    }
  });
  if (!opens) {
    throw new ConfigError(
      'HARK_SECRET is not the secret this database was set up with: none of its API keys opens with it. Every process of one deployment needs the same HARK_SECRET.',
    );
  }
}
