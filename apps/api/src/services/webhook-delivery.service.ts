import { HarkError } from '@hark/core';
import type { Db } from '@hark/db';
import type { WebhookReplayQueue } from './webhook-delivery-replay';
import { type DeliveryRecord, deliveryRecord } from './webhook-delivery-view';
import { visibleTranscripts } from './visible-transcripts';

// Checked before the look-up: an id that cannot be one (`%00`, which Postgres text refuses) is unknown.
const TRANSCRIPT_ID = /^tr_[A-Za-z0-9_-]{1,40}$/;

/** Delivery history and replays of a transcript's completion notice. */
export class WebhookDeliveryService {
  constructor(
    private readonly db: Db,
    private readonly replays: WebhookReplayQueue,
  ) {}

  /**
   * Every attempt, automatic and manual, in attempt order (numbers are handed out as sends
   * begin). A send still waiting for its receiver is not listed until its outcome is written.
   */
  async list(accountId: string, transcriptId: string): Promise<DeliveryRecord[]> {
    await this.find(accountId, transcriptId);
    const rows = await this.db.webhookDelivery.findMany({
      where: { transcriptId, pending: false },
      orderBy: { attempt: 'asc' },
    });
    return rows.map(deliveryRecord);
  }

  /**
   * One manual attempt, made at once by the dispatcher while the caller waits; it continues
   * the attempt count and is never retried automatically. Only finished (`done`, `failed`)
   * transcripts with a `webhookUrl` have a notice to replay: canceled ones never get one.
   */
  async replay(accountId: string, transcriptId: string): Promise<DeliveryRecord> {
    const t = await this.find(accountId, transcriptId);
    if (!t.webhookUrl || (t.status !== 'done' && t.status !== 'failed')) throw new HarkError('no_webhook');
    const result = await this.replays.run(accountId, transcriptId);
    // The dispatcher re-reads the row: it may have been deleted in between.
    if (result.status === 'skipped')
      throw new HarkError(result.reason === 'gone' ? 'not_found' : 'no_webhook');
    const row = await this.db.webhookDelivery.findUnique({ where: { id: result.deliveryId } });
    if (!row) throw new Error(`delivery ${result.deliveryId} reported but not found`);
    return deliveryRecord(row);
  }

  /** The transcript 404 rules: unknown, another account's, deleted or expired. */
  private async find(accountId: string, id: string) {
    if (!TRANSCRIPT_ID.test(id)) throw new HarkError('not_found');
    const t = await this.db.transcript.findFirst({
      where: { id, accountId, ...visibleTranscripts() },
      select: { id: true, status: true, webhookUrl: true },
    });
    if (!t) throw new HarkError('not_found');
    return t;
  }
}
