import { HarkError } from '@hark/core';
import type { Db, Prisma } from '@hark/db';
import type { ListTranscriptsOptions } from '../schemas/transcript.schemas';
import type { ListCursorCodec } from './list-cursor';
import { TRANSCRIPT_SELECT, transcriptListItem } from './transcript-view';
import { visibleTranscripts } from './visible-transcripts';

/** GET /v1/transcripts: newest first, page/perPage with total, or keyset cursors. */
export class TranscriptListService {
  constructor(
    private readonly db: Db,
    private readonly cursors: ListCursorCodec,
  ) {}

  async list(accountId: string, q: ListTranscriptsOptions) {
    const { page, perPage } = q;
    const where: Prisma.TranscriptWhereInput = {
      accountId,
      ...visibleTranscripts(),
      ...(q.status ? { status: q.status } : {}),
      ...(q.externalId ? { externalId: q.externalId } : {}),
      ...(q.since || q.until
        ? {
            createdAt: {
              ...(q.since ? { gte: new Date(q.since) } : {}),
              ...(q.until ? { lt: new Date(q.until) } : {}),
            },
          }
        : {}),
    };
    const filterKey = JSON.stringify([
      accountId,
      q.status ?? null,
      q.externalId ?? null,
      q.since ?? null,
      q.until ?? null,
    ]);
    const orderBy: Prisma.TranscriptOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { id: 'desc' }];

    if (q.cursor !== undefined) {
      const pos = this.cursors.decode(q.cursor, filterKey);
      if (!pos) throw HarkError.validation({ cursor: 'cursor_invalid' });
      const rows = await this.db.transcript.findMany({
        where: {
          AND: [
            where,
            { OR: [{ createdAt: { lt: pos.createdAt } }, { createdAt: pos.createdAt, id: { lt: pos.id } }] },
          ],
        },
        orderBy,
        take: perPage + 1,
        select: TRANSCRIPT_SELECT,
      });
      return this.page(rows, perPage, filterKey, null, null);
    }

    const [rows, total] = await Promise.all([
      this.db.transcript.findMany({
        where,
        orderBy,
        skip: (page - 1) * perPage,
        take: perPage + 1,
        select: TRANSCRIPT_SELECT,
      }),
      this.db.transcript.count({ where }),
    ]);
    return this.page(rows, perPage, filterKey, total, page);
  }

  private page(
    rows: Prisma.TranscriptGetPayload<{ select: typeof TRANSCRIPT_SELECT }>[],
    perPage: number,
    filterKey: string,
    total: number | null,
    page: number | null,
  ) {
    const items = rows.slice(0, perPage);
    const last = items[items.length - 1];
    return {
      transcripts: items.map(transcriptListItem),
      nextCursor: rows.length > perPage && last ? this.cursors.encode(last, filterKey) : null,
      total,
      page,
      perPage,
    };
  }
}
