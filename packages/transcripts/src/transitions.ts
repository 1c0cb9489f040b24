import { adjustHold, chargeAndRelease, releaseHold } from '@hark/billing';
import { costForSeconds } from '@hark/core';
import { type Db, Prisma } from '@hark/db';
import Decimal from 'decimal.js';

/**
 * The only ways a transcript leaves `processing`. Each runs in one transaction that first locks
 * the transcript row and re-checks `status = 'processing'`, so concurrent cancel / complete /
 * fail / reconcile calls serialise: exactly one wins, the others see `false` and change nothing.
 * Money moves in the same transaction (see @hark/billing).
 */
type Tx = Prisma.TransactionClient;

interface Locked {
  id: string;
  account_id: string;
  reserved: Prisma.Decimal;
  rate: Prisma.Decimal;
}

async function lockProcessing(tx: Tx, id: string): Promise<Locked | null> {
  const rows = await tx.$queryRaw<Locked[]>`
    SELECT id, account_id, reserved, rate FROM transcripts WHERE id = ${id} AND status = 'processing' FOR UPDATE`;
  return rows[0] ?? null;
}

const dec = (v: Prisma.Decimal) => new Decimal(v.toString());

export interface TranscriptContentInput {
  text: string;
  words: unknown[];
  utterances: unknown[];
  diarizationSegments: unknown[] | null;
  /** The engine's segments (OpenAI `verbose_json`); absent or null: none kept. */
  segments?: unknown[] | null;
}

export interface CompletionInput {
  durationSeconds: number;
  language: string;
  model: string;
  speakerCount: number | null;
  content: TranscriptContentInput;
}

/** processing -> done: stores content, releases the hold and charges the real cost. */
export async function completeTranscript(db: Db, id: string, input: CompletionInput): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const t = await lockProcessing(tx, id);
    if (!t) return false;
    const cost = await chargeAndRelease(tx, {
      accountId: t.account_id,
      transcriptId: id,
      hold: dec(t.reserved),
      seconds: input.durationSeconds,
      rate: dec(t.rate),
    });
    await tx.transcriptContent.create({
      data: {
        transcriptId: id,
        text: input.content.text,
        words: input.content.words as Prisma.InputJsonValue,
        utterances: input.content.utterances as Prisma.InputJsonValue,
        diarizationSegments: (input.content.diarizationSegments ?? Prisma.DbNull) as Prisma.InputJsonValue,
        segments: (input.content.segments ?? Prisma.DbNull) as Prisma.InputJsonValue,
      },
    });
    await tx.transcript.update({
      where: { id },
      data: {
        status: 'done',
        cost: cost.toString(),
        reserved: 0,
        durationSeconds: input.durationSeconds,
        language: input.language,
        model: input.model,
        speakerCount: input.speakerCount,
        finishedAt: new Date(),
      },
    });
    return true;
  });
}

async function endWithoutCharge(db: Db, id: string, data: Prisma.TranscriptUpdateInput): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const t = await lockProcessing(tx, id);
    if (!t) return false;
    await releaseUpload(tx, id);
    await releaseHold(tx, t.account_id, id, dec(t.reserved));
    await tx.transcript.update({
      where: { id },
      data: { ...data, cost: 0, reserved: 0, finishedAt: new Date() },
    });
    return true;
  });
}

/**
 * The upload of a transcript that ends without content is unused again when no other transcript
 * of it is processing or done: it counts against the account's upload quota and expires with
 * the unused ones (and may take chunks and be transcribed again until then). Otherwise a file
 * that fails at once (a wrong `sha256`: `audio_mismatch`, nothing charged) stayed stored outside
 * the quota for the transcript's retention, up to a year, as many times as one liked. Locks the
 * upload row before the account's (the order a create takes them in).
 */
async function releaseUpload(tx: Tx, id: string): Promise<void> {
  await tx.$executeRaw`
    UPDATE uploads u SET used_at = NULL, updated_at = now()
    FROM transcripts me
    WHERE me.id = ${id} AND u.id = me.upload_id AND u.used_at IS NOT NULL AND u.erased_at IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM transcripts t
        WHERE t.upload_id = u.id AND t.id <> ${id} AND t.status IN ('processing', 'done'))`;
}

/** processing -> failed: releases the hold, charges nothing. */
export function failTranscript(db: Db, id: string, code: string, message: string): Promise<boolean> {
  return endWithoutCharge(db, id, { status: 'failed', errorCode: code, errorMessage: message });
}

/** processing -> canceled: releases the hold, charges nothing, `error` stays null. */
export function cancelTranscript(db: Db, id: string): Promise<boolean> {
  return endWithoutCharge(db, id, { status: 'canceled' });
}

export type HoldResult = 'ok' | 'insufficient_balance' | 'not_processing';

/**
 * Once the worker knows the real duration, the provisional hold becomes the real cost.
 * `insufficient_balance` when `available` plus the current hold cannot cover it (nothing moved).
 */
export async function holdForDuration(
  db: Db,
  id: string,
  billableSeconds: number,
  audioSeconds: number,
): Promise<HoldResult> {
  return db.$transaction(async (tx) => {
    const t = await lockProcessing(tx, id);
    if (!t) return 'not_processing';
    const target = costForSeconds(billableSeconds, dec(t.rate));
    const ok = await adjustHold(tx, t.account_id, id, dec(t.reserved), target);
    if (!ok) return 'insufficient_balance';
    await tx.transcript.update({ where: { id }, data: { reserved: target.toString(), audioSeconds } });
    return 'ok';
  });
}

/** Billable seconds for a probed duration: whole seconds, rounded up (a 0.2 s file bills 1 s). */
export function billableSeconds(audioSeconds: number): number {
  return Math.max(1, Math.ceil(audioSeconds - 1e-9));
}
