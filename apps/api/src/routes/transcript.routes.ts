// POST /v1/transcripts, GET /v1/transcripts, GET /v1/transcripts/{id},
// POST /v1/transcripts/{id}/cancel, DELETE /v1/transcripts/{id}
import { HarkError, parseQueryOrThrow } from '@hark/core';
import { Router, type RequestHandler } from 'express';
import { type RouteLimit, keyedMount } from '../contract/mount';
import { clientGone } from './client-gone';
import { ROUTE } from '../contract/routes.contract';
import { parseCreateTranscript } from '../schemas/create-transcript';
import { GetTranscriptQuery, parseListTranscriptsQuery } from '../schemas/transcript.schemas';
import type { TranscriptListService } from '../services/transcript-list.service';
import type { TranscriptService } from '../services/transcript.service';

/** `parseBody`: the create body's parsers (`fieldBodyParsers` in middleware/body-parsers.ts). */
export function transcriptRoutes(
  transcripts: TranscriptService,
  lists: TranscriptListService,
  limit: RouteLimit,
  parseBody: readonly RequestHandler[],
): Router {
  const r = Router();
  const mount = keyedMount(r, limit);

  mount(ROUTE.createTranscript, ...parseBody, async (req, res) => {
    const request = parseCreateTranscript(req.body, req.headers['idempotency-key']);
    const result = await transcripts.create(req.auth!.accountId, req.auth!.apiKeyId, request);
    res.status(result.status).json({ data: result.transcript });
  });

  mount(ROUTE.listTranscripts, async (req, res) => {
    res.json({ data: await lists.list(req.auth!.accountId, parseListTranscriptsQuery(req.query)) });
  });

  mount(ROUTE.getTranscript, async (req, res) => {
    const q = parseQueryOrThrow(GetTranscriptQuery, req.query);
    const wait = q.wait === undefined ? 0 : Number(q.wait);
    if (q.wait !== undefined && (wait < 1 || wait > 60)) throw HarkError.validation({ wait: 'wait_invalid' });
    const closed = new AbortController();
    res.on('close', () => closed.abort());
    const id = String(req.params.id);
    const t = await transcripts.getWaiting(req.auth!.accountId, id, wait, closed.signal);
    if (t.status === 'processing')
      res.setHeader('Retry-After', String(await transcripts.retryAfterSeconds(req.auth!.accountId, id)));
    res.json({ data: t });
  });

  mount(ROUTE.cancelTranscript, async (req, res) => {
    res.json({ data: await transcripts.cancel(req.auth!.accountId, String(req.params.id)) });
  });

  mount(ROUTE.deleteTranscript, async (req, res) => {
    res.json({ data: await transcripts.delete(req.auth!.accountId, String(req.params.id), clientGone(res)) });
  });
  return r;
}
