import type { Db, WebhookDelivery } from '@hark/db';

export type AttemptSummary = Pick<WebhookDelivery, 'id' | 'attempt' | 'delivered' | 'manual'>;

/** What one send produced, as stored on its delivery record. */
export interface AttemptResult {
  /** When the attempt started (the record's `createdAt`). */
  startedAt: Date;
  /** True only for a 2xx answer. */
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  /** Already redacted and cut to 512 characters. */
  responsePreview: string | null;
  durationMs: number;
}

export interface RecordInput extends AttemptResult {
  /** The record's id; a replay's job id, so a re-run of the replay finds it. */
  id: string;
  transcriptId: string;
  url: string;
  manual: boolean;
  /** For an automatic attempt: its place in the schedule (1-based). Null for a replay. */
  slot: number | null;
}

/** The record of automatic slot `slot` (1-based) among a transcript's attempts, if any. */
export function automaticSlot(attempts: readonly AttemptSummary[], slot: number): AttemptSummary | undefined {
  return attempts.filter((a) => !a.manual)[slot - 1];
}

/**
 * Delivery records in Postgres. Attempt numbers count automatic and manual attempts together
 * (a replay continues the count), so a number is handed out only when an attempt is recorded,
 * under the transcript's row lock: two attempts of one transcript (an automatic one and a
 * replay, or a job and its re-run) never take the same number, and the unique
 * (transcript_id, attempt) backs that up.
 *
 * An automatic attempt is identified by its schedule slot: the k-th automatic record of a
 * transcript is slot k. Slots are recorded strictly in order (slot k + 1 is only enqueued
 * after slot k is recorded), which is what makes that count a sound identity.
 */
export class DeliveryStore {
  constructor(private readonly db: Db) {}

  /** Every attempt recorded for a transcript, in attempt order (a dozen rows at most, normally). */
  attempts(transcriptId: string): Promise<AttemptSummary[]> {
    return this.db.webhookDelivery.findMany({
      where: { transcriptId },
      select: { id: true, attempt: true, delivered: true, manual: true },
      orderBy: { attempt: 'asc' },
    });
  }

  byId(id: string): Promise<AttemptSummary | null> {
    return this.db.webhookDelivery.findUnique({
      where: { id },
      select: { id: true, attempt: true, delivered: true, manual: true },
    });
  }

  /**
   * Records one attempt with the next attempt number. Null, and nothing written, when the same
   * attempt is already recorded (same automatic slot, or same replay id): a job that ran twice
   * at once (a stalled job picked up while its first run was still alive) records once.
   */
  async record(input: RecordInput): Promise<WebhookDelivery | null> {
    return this.db.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM transcripts WHERE id = ${input.transcriptId} FOR UPDATE`;
      // Transcript rows are never deleted (deletion sets deleted_at), so this is a broken invariant.
      if (locked.length === 0) throw new Error(`transcript ${input.transcriptId} has no row`);
      const rows = await tx.$queryRaw<{ last: number; automatic: number; same_id: boolean | null }[]>`
        SELECT COALESCE(MAX(attempt), 0)::int AS last,
               (COUNT(*) FILTER (WHERE NOT manual))::int AS automatic,
               BOOL_OR(id = ${input.id}) AS same_id
        FROM webhook_deliveries WHERE transcript_id = ${input.transcriptId}`;
      const agg = rows[0] ?? { last: 0, automatic: 0, same_id: null };
      if (agg.same_id) return null;
      if (input.slot !== null && agg.automatic >= input.slot) return null;
      return tx.webhookDelivery.create({
        data: {
          id: input.id,
          transcriptId: input.transcriptId,
          url: input.url,
          attempt: agg.last + 1,
          delivered: input.delivered,
          statusCode: input.statusCode,
          error: input.error,
          responsePreview: input.responsePreview,
          durationMs: input.durationMs,
          manual: input.manual,
          createdAt: input.startedAt,
        },
      });
    });
  }
}
