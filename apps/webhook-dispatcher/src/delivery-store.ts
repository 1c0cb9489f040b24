import type { Db, TranscriptStatus, WebhookDelivery } from '@hark/db';
import { goneForCaller, redactDeliveries } from '@hark/transcripts';

export type AttemptSummary = Pick<WebhookDelivery, 'id' | 'attempt' | 'delivered' | 'manual' | 'pending'>;

/** What one send produced, as stored on its delivery record. */
export interface AttemptResult {
  /** When the send started (the record's `createdAt`). */
  startedAt: Date;
  /** True only for a 2xx answer. */
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  /** Already redacted and cut to 512 characters. */
  responsePreview: string | null;
  durationMs: number;
}

/**
 * The `error` of an automatic attempt whose send a crash cut off (the endpoint may or may not
 * have received it) and that is not made again because a later attempt was acknowledged; a kind,
 * as `timeout` or `connection_refused` (@hark/http `FailureKind`).
 */
export const INTERRUPTED = 'interrupted';

/** A send about to begin. */
export interface BeginInput {
  /** The record's id; a replay's job id, so a re-run of the replay finds it. */
  id: string;
  transcriptId: string;
  url: string;
  manual: boolean;
  /** For an automatic attempt: its place in the schedule (1-based). Null for a replay. */
  slot: number | null;
  startedAt: Date;
}

const SUMMARY = { id: true, attempt: true, delivered: true, manual: true, pending: true } as const;

/** The record of automatic slot `slot` (1-based) among a transcript's attempts, if any. */
export function automaticSlot(attempts: readonly AttemptSummary[], slot: number): AttemptSummary | undefined {
  return attempts.filter((a) => !a.manual)[slot - 1];
}

/**
 * Delivery records in Postgres. Attempt numbers count automatic and manual attempts together
 * (a replay continues the count) and are handed out when a send **begins**, under the
 * transcript's row lock, on a pending record (`begin`) that the send's outcome completes
 * (`finish`). So the numbers follow the order of the sends: a replay made while attempt 1 is
 * still waiting for its receiver is attempt 2, and two attempts of one transcript never take
 * the same number (the unique (transcript_id, attempt) backs that up). Pending records are not
 * listed; a dispatcher that dies mid-send leaves one, and the re-run of its job (same slot, or
 * same replay id) sends again under the same number. A re-run that finds the notice acknowledged
 * by a replay meanwhile sends nothing and finishes the record as interrupted (`interrupt`), so it
 * is listed and the numbers do not skip it; should the first run be alive after all, its outcome
 * replaces that. One whose re-run never comes (its job gone) or whose
 * transcript was deleted stays pending and unlisted.
 *
 * An automatic attempt is identified by its schedule slot: the k-th automatic record of a
 * transcript, pending or not, is slot k. Slots begin strictly in order (slot k + 1 is only
 * enqueued after slot k is finished), which is what makes that count a sound identity.
 */
export class DeliveryStore {
  constructor(private readonly db: Db) {}

  /** Every attempt of a transcript, pending ones included, in attempt order (a dozen rows, normally). */
  attempts(transcriptId: string): Promise<AttemptSummary[]> {
    return this.db.webhookDelivery.findMany({
      where: { transcriptId },
      select: SUMMARY,
      orderBy: { attempt: 'asc' },
    });
  }

  byId(id: string): Promise<AttemptSummary | null> {
    return this.db.webhookDelivery.findUnique({ where: { id }, select: SUMMARY });
  }

  /**
   * Takes the next attempt number for a send on a pending record, or returns the attempt's
   * record if it exists already (the same automatic slot, or the same replay id): finished
   * (send nothing: it is recorded) or pending (a run that died mid-send, or one still sending:
   * send under its number). `gone` when the transcript was deleted or expired since its notice
   * was read: nothing is to be sent.
   */
  async begin(input: BeginInput): Promise<AttemptSummary | 'gone'> {
    return this.db.$transaction(async (tx) => {
      const [locked] = await tx.$queryRaw<
        { deletedAt: Date | null; expiresAt: Date | null; status: TranscriptStatus }[]
      >`
        SELECT deleted_at AS "deletedAt", expires_at AS "expiresAt", status
        FROM transcripts WHERE id = ${input.transcriptId} FOR UPDATE`;
      // Transcript rows are never deleted (deletion sets deleted_at), so this is a broken invariant.
      if (!locked) throw new Error(`transcript ${input.transcriptId} has no row`);
      // Deleted or expired since the notice was read (a deletion takes this lock too): no send.
      if (goneForCaller(locked)) return 'gone';
      const rows = await tx.webhookDelivery.findMany({
        where: { transcriptId: input.transcriptId },
        select: SUMMARY,
        orderBy: { attempt: 'asc' },
      });
      const same =
        rows.find((r) => r.id === input.id) ??
        (input.slot === null ? undefined : automaticSlot(rows, input.slot));
      if (same) return same;
      return tx.webhookDelivery.create({
        data: {
          id: input.id,
          transcriptId: input.transcriptId,
          url: input.url,
          attempt: (rows.at(-1)?.attempt ?? 0) + 1,
          delivered: false,
          manual: input.manual,
          pending: true,
          createdAt: input.startedAt,
        },
        select: SUMMARY,
      });
    });
  }

  /**
   * Finishes a pending record whose send was cut off (its dispatcher stopped mid-send) and will
   * not be made again: not delivered, no answer, no duration, error `INTERRUPTED`; its time stays
   * when the send began. Null, and nothing written, when the record is finished already. This is
   * a conclusion drawn from a pending record, not an outcome: a run of the same job still alive
   * and sending (a stalled job picked up twice) writes its outcome over it (`finish`).
   */
  async interrupt(id: string): Promise<AttemptSummary | null> {
    const [row] = await this.db.webhookDelivery.updateManyAndReturn({
      where: { id, pending: true },
      data: {
        pending: false,
        delivered: false,
        statusCode: null,
        error: INTERRUPTED,
        responsePreview: null,
        durationMs: null,
      },
      select: SUMMARY,
    });
    return row ?? null;
  }

  /**
   * Writes a send's outcome on its pending record, or over `interrupt`'s conclusion that the
   * send was cut off (and the send's start as its time). Null, and nothing written, when the
   * record has an outcome already: a job that ran twice at once (a stalled job picked up while
   * its first run was still alive) records the first outcome.
   */
  async finish(id: string, result: AttemptResult): Promise<AttemptSummary | null> {
    return this.db.$transaction(async (tx) => {
      // Under the transcript's row lock (shared; an erasure takes it exclusively): a transcript
      // deleted or expired while this send was in flight has been erased, and its delivery
      // records with it. The outcome must not write the receiver's answer back, and a record
      // begun just after the erasure is redacted like the others (`redactDeliveries`).
      const [t] = await tx.$queryRaw<{ transcript_id: string; deleted_at: Date | null }[]>`
        SELECT t.id AS transcript_id, t.deleted_at FROM transcripts t
        JOIN webhook_deliveries d ON d.transcript_id = t.id
        WHERE d.id = ${id} FOR SHARE OF t`;
      const erased = t !== undefined && t.deleted_at !== null;
      const [row] = await tx.webhookDelivery.updateManyAndReturn({
        // A send's own failure is never INTERRUPTED (that is only `interrupt`'s).
        where: { id, OR: [{ pending: true }, { error: INTERRUPTED }] },
        data: {
          pending: false,
          delivered: result.delivered,
          statusCode: result.statusCode,
          error: result.error,
          responsePreview: erased ? null : result.responsePreview,
          durationMs: result.durationMs,
          createdAt: result.startedAt,
        },
        select: SUMMARY,
      });
      if (erased) await redactDeliveries(tx, t.transcript_id);
      return row ?? null;
    });
  }
}
