import { unseal } from '@hark/core';
import type { Db } from '@hark/db';
import type { WebhookSkipReason } from '@hark/queue';
import {
  TRANSCRIPT_SELECT,
  type TranscriptListItem,
  goneForCaller,
  transcriptListItem,
} from '@hark/transcripts';

/** Everything one send needs. Lives for one attempt only: it holds the signing secret. */
export interface Notice {
  transcriptId: string;
  /** `webhookUrl` as the caller gave it. */
  url: string;
  /** The body: the transcript as the API lists it, read now (fresh on every attempt). */
  item: TranscriptListItem;
  /** SHA-256(key) hex of the key that created the transcript, just unsealed. Never logged or queued. */
  secretHex: string;
}

/**
 * `Hark-Delivery-Id`: one per transcript's completion notice, identical on every attempt,
 * automatic or manual, so a receiver can drop duplicates (a re-run after a crash sends the same
 * id again). Derived, not stored, so nothing can make two attempts disagree.
 */
export function deliveryIdFor(transcriptId: string): string {
  return `whd_${transcriptId}`;
}

/**
 * Reads the transcript for one attempt, or says why nothing is to be sent: deleted rows, and
 * finished ones past `expiresAt` even before the retention sweep erased them, are gone for the
 * caller (`goneForCaller`, the API's 404 rule), canceled and processing ones are never notified.
 */
export async function loadNotice(
  db: Db,
  operatorSecret: string,
  transcriptId: string,
): Promise<Notice | WebhookSkipReason> {
  const row = await db.transcript.findUnique({
    where: { id: transcriptId },
    select: {
      ...TRANSCRIPT_SELECT,
      webhookUrl: true,
      deletedAt: true,
      expiresAt: true,
      apiKey: { select: { signingSecretSealed: true } },
    },
  });
  // Past its retention counts from `expiresAt`, not from the sweep that erases it later.
  if (!row || goneForCaller(row)) return 'gone';
  if (!row.webhookUrl) return 'no_webhook';
  if (row.status !== 'done' && row.status !== 'failed') return 'not_finished';
  return {
    transcriptId,
    url: row.webhookUrl,
    item: transcriptListItem(row),
    secretHex: unseal(row.apiKey.signingSecretSealed, operatorSecret),
  };
}
