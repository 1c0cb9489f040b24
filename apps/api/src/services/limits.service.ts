import { AUDIO_FORMATS, LIMITS } from '@hark/core';
import type { Db } from '@hark/db';
import type { ApiConfig } from '../config';
import { uploadCap } from './upload.service';

export type LimitsConfig = Pick<ApiConfig, 'uploadQuotaBytes' | 'uploadNoCreditBytes' | 'rateLimits'>;

/** GET /v1/limits: the limits that apply to one account. */
export class LimitsService {
  constructor(
    private readonly db: Db,
    private readonly config: LimitsConfig,
  ) {}

  async get(accountId: string) {
    const account = await this.db.account.findUnique({
      where: { id: accountId },
      select: { toppedUp: true, total: true, reserved: true },
    });
    const { config } = this;
    return {
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
    };
  }
}
