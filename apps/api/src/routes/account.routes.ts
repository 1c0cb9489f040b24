// GET /v1/balance, GET /v1/limits
import { AUDIO_FORMATS, LIMITS } from '@hark/core';
import { Router, type RequestHandler } from 'express';
import type { ApiDeps } from '../context';
import { BalanceService } from '../services/balance.service';
import { uploadCap } from '../services/upload.service';

export function accountRoutes(deps: ApiDeps, limit: (route: string) => RequestHandler): Router {
  const r = Router();
  const balances = new BalanceService(deps.pool);

  r.get('/balance', limit('GET /v1/balance'), async (req, res) => {
    res.json({ data: await balances.get(req.auth!.accountId) });
  });

  r.get('/limits', limit('GET /v1/limits'), async (req, res) => {
    const account = await deps.db.account.findUnique({
      where: { id: req.auth!.accountId },
      select: { toppedUp: true, total: true, reserved: true },
    });
    const { config } = deps;
    res.json({
      data: {
        audio: { maxDurationSeconds: LIMITS.maxAudioSeconds, formats: [...AUDIO_FORMATS] },
        upload: {
          maxBytes: LIMITS.maxUploadBytes,
          maxChunkBytes: LIMITS.maxChunkBytes,
          maxRequestBytes: LIMITS.maxUploadRequestBytes,
          quotaBytes: uploadCap(
            { quotaBytes: config.uploadQuotaBytes, noCreditBytes: config.uploadNoCreditBytes },
            account ? account.total.minus(account.reserved) : null,
          ),
        },
        glossary: { maxEntries: LIMITS.glossaryMaxEntries, maxTermChars: LIMITS.glossaryMaxTermChars },
        concurrency: { maxRunning: account?.toppedUp ? null : LIMITS.freeConcurrentTranscripts },
        rateLimits: config.rateLimits.map((x) => ({
          endpoint: x.endpoint,
          max: x.max,
          windowSeconds: x.windowSeconds,
        })),
        idempotencyKeyMaxChars: LIMITS.idempotencyKeyMaxChars,
      },
    });
  });
  return r;
}
