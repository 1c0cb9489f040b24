import { ConfigError } from '@hark/core';
import type { Db } from './client';

/**
 * Resolves once Postgres answers; retries for `timeoutMs` (it may come up a little after the
 * process), then fails with a message naming DATABASE_URL and the last reason, never its password.
 */
export async function checkDatabase(db: Db, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await db.$queryRaw`SELECT 1`;
      return;
    } catch (error) {
      if (Date.now() >= deadline) {
        const reason = ((error as Error).message.split('\n').findLast((l) => l.trim() !== '') ?? '')
          .trim()
          .replace(/\/\/[^/\s@]*@/g, '//');
        throw new ConfigError(`DATABASE_URL: the database does not answer (${reason})`);
      }
      await new Promise((r) => setTimeout(r, Math.min(500, Math.max(0, deadline - Date.now()))));
    }
  }
}
