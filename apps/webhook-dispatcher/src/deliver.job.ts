import { newId } from '@hark/core';
import type { GuardedClient } from '@hark/http';
import {
  type WebhookJob,
  type WebhookJobResult,
  type WebhookProducer,
  delayBefore,
  infraRetryDelay,
  isLastWebhookAttempt,
} from '@hark/queue';
import { DelayedError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { WebhookScheduleConfig } from './config';
import { type AttemptSummary, type DeliveryStore, automaticSlot } from './delivery-store';
import type { AttemptOutcome } from './metrics';
import { type Notice, loadNotice } from './notice';
import { sendNotice } from './send-notice';

export interface DeliverDeps {
  store: DeliveryStore;
  /** Reads the transcript and unseals its signing secret (see loadNotice). */
  loadNotice(transcriptId: string): ReturnType<typeof loadNotice>;
  client: GuardedClient;
  timeoutMs: number;
  schedule: WebhookScheduleConfig;
  /** Adds automatic attempt `attempt` as a delayed job with id `webhookJobId(id, attempt)`. */
  enqueueAttempt: WebhookProducer['enqueueAttempt'];
  logger: Logger;
  /** Told how each send ended and how long it took (DispatcherMetrics). */
  metrics?: { attemptSent(outcome: AttemptOutcome, seconds: number): void };
}

/**
 * The `webhook` job: one attempt to send a transcript's completion notice.
 *
 * Crash safety comes from the order begin -> send -> finish -> enqueue next. `begin` takes the
 * attempt's number on a pending record before anything is sent, so numbers follow the sends
 * (a replay made during a slow attempt 1 is attempt 2). A finished record is the proof of an
 * attempt: a re-run that finds one sends nothing and only makes sure the next attempt is
 * queued (job ids collapse repeats). A re-run that finds its record still pending (a crash
 * between the send and its outcome) sends again under the same number: at worst the receiver
 * gets a duplicate, with the same `Hark-Delivery-Id`, never no notice.
 */
export function createDeliverHandler(deps: DeliverDeps) {
  const { store, logger } = deps;

  async function scheduleAfter(transcriptId: string, slot: number, delivered: boolean, log: Logger) {
    if (delivered) return null;
    const delayMs = delayBefore(deps.schedule, slot + 1);
    if (delayMs === null) {
      log.warn('last automatic attempt failed; giving up');
      return null;
    }
    await deps.enqueueAttempt(transcriptId, slot + 1, delayMs);
    return slot + 1;
  }

  async function send(notice: Notice, startedAt: Date, log: Logger) {
    const result = await sendNotice(deps.client, notice, deps.timeoutMs, startedAt);
    const { delivered, statusCode, error, durationMs } = result;
    log.info({ delivered, statusCode, error, durationMs }, 'notice sent');
    return result;
  }

  async function automatic(transcriptId: string, slot: number, log: Logger): Promise<WebhookJobResult> {
    const history = await store.attempts(transcriptId);
    const earlier = automaticSlot(history, slot);
    if (earlier && !earlier.pending) return alreadyRecorded(transcriptId, slot, earlier, log);
    const notice = await deps.loadNotice(transcriptId);
    if (typeof notice === 'string') return skipped(notice, log);
    if (history.some((a) => a.delivered)) {
      // This slot's send was cut off by a crash and a replay has been acknowledged since: the
      // attempt is not made again, but it was made, so it is listed (numbers do not skip it).
      if (earlier?.pending) {
        const row = (await store.interrupt(earlier.id)) ?? (await store.byId(earlier.id));
        if (row) {
          log.info('interrupted attempt recorded; the notice was acknowledged since, not sending again');
          return recorded(row, false);
        }
      }
      return skipped('acknowledged', log);
    }
    const startedAt = new Date();
    const begun = await store.begin({
      id: newId('whd'),
      transcriptId,
      url: notice.url,
      manual: false,
      slot,
      startedAt,
    });
    if (begun === 'gone') return skipped('gone', log);
    // A concurrent run of this job finished the slot in between.
    if (!begun.pending) return alreadyRecorded(transcriptId, slot, begun, log);
    const result = await send(notice, startedAt, log);
    const last = isLastWebhookAttempt(deps.schedule, slot);
    deps.metrics?.attemptSent(
      result.delivered ? 'delivered' : last ? 'gave_up' : 'failed',
      result.durationMs / 1000,
    );
    const row =
      (await store.finish(begun.id, result)) ??
      // A concurrent run of this job finished the slot first; its record stands.
      (await store.byId(begun.id));
    if (!row) throw new Error(`automatic attempt ${slot} of ${transcriptId} vanished`);
    await scheduleAfter(transcriptId, slot, row.delivered, log);
    return recorded(row, true);
  }

  async function alreadyRecorded(transcriptId: string, slot: number, row: AttemptSummary, log: Logger) {
    log.info('attempt already recorded; not sending again');
    await scheduleAfter(transcriptId, slot, row.delivered, log);
    return recorded(row, false);
  }

  // A replay is never retried (the caller asks again); its job id is its record's id.
  async function manual(transcriptId: string, id: string, log: Logger): Promise<WebhookJobResult> {
    const earlier = await store.byId(id);
    if (earlier && !earlier.pending) return recorded(earlier, false);
    const notice = await deps.loadNotice(transcriptId);
    if (typeof notice === 'string') return skipped(notice, log);
    const startedAt = new Date();
    const begun = await store.begin({
      id,
      transcriptId,
      url: notice.url,
      manual: true,
      slot: null,
      startedAt,
    });
    if (begun === 'gone') return skipped('gone', log);
    if (!begun.pending) return recorded(begun, false);
    const result = await send(notice, startedAt, log);
    deps.metrics?.attemptSent(result.delivered ? 'delivered' : 'failed', result.durationMs / 1000);
    const row = (await store.finish(id, result)) ?? (await store.byId(id));
    if (!row) throw new Error(`replay ${id} of ${transcriptId} vanished`);
    return recorded(row, true);
  }

  return async function deliver(job: Job<WebhookJob>, token?: string): Promise<WebhookJobResult> {
    const { transcriptId, attempt } = job.data;
    const isManual = job.data.manual === true;
    const log = logger.child({ transcriptId, attempt: isManual ? 'manual' : attempt, jobId: job.id });
    try {
      if (isManual) {
        const id = job.id && /^whd_[\w-]+$/.test(job.id) ? job.id : newId('whd');
        return await manual(transcriptId, id, log);
      }
      return await automatic(transcriptId, attempt, log);
    } catch (error) {
      // Postgres or Redis failing under an automatic attempt: put back (webhookInfraRetry).
      if (isManual || !token) throw error;
      const waitMs = infraRetryDelay(job.attemptsStarted);
      if (waitMs === null) throw error;
      log.warn({ err: (error as Error).message, retryInMs: waitMs }, 'attempt interrupted; retrying');
      await job.moveToDelayed(Date.now() + waitMs, token);
      throw new DelayedError();
    }
  };
}

function recorded(row: AttemptSummary, sent: boolean): WebhookJobResult {
  return { status: 'recorded', deliveryId: row.id, attempt: row.attempt, delivered: row.delivered, sent };
}

function skipped(
  reason: Exclude<WebhookJobResult, { status: 'recorded' }>['reason'],
  log: Logger,
): WebhookJobResult {
  log.info({ reason }, 'notice not sent');
  return { status: 'skipped', reason };
}
