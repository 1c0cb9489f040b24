// POST /v1/transcripts, GET /v1/transcripts, GET /v1/transcripts/{id},
// POST /v1/transcripts/{id}/cancel, DELETE /v1/transcripts/{id}
import { HarkError, parseQueryOrThrow } from '@hark/core';
import express, { Router, type RequestHandler } from 'express';
import multer from 'multer';
import { GetTranscriptQuery } from '../schemas/transcript.schemas';
import { normaliseFormBody } from '../services/form-normalise';
import type { TranscriptListService } from '../services/transcript-list.service';
import type { TranscriptService } from '../services/transcript.service';

/** JSON, urlencoded and multipart bodies all become the same parsed fields. */
function createBodyParsers(maxBytes: number): RequestHandler[] {
  const json = express.json({
    limit: maxBytes,
    strict: false,
    type: ['application/json', 'application/*+json'],
  });
  const form = express.urlencoded({ limit: maxBytes, extended: true, parameterLimit: 1000 });
  const multipart = multer({ limits: { fieldSize: maxBytes, fields: 200, files: 0, parts: 200 } }).none();
  const checkType: RequestHandler = (req, _res, next) => {
    const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
    if (
      (hasBody || req.headers['transfer-encoding']) &&
      !req.is(['json', '+json', 'urlencoded', 'multipart'])
    ) {
      return next(HarkError.validation({ body: 'body_invalid' }));
    }
    next();
  };
  const multipartErrors: RequestHandler = (req, res, next) => {
    multipart(req, res, (err?: unknown) => {
      if (!err) return next();
      const code = (err as { code?: string }).code;
      next(
        code === 'LIMIT_FIELD_VALUE'
          ? new HarkError('payload_too_large')
          : HarkError.validation({ body: 'body_invalid' }),
      );
    });
  };
  const normalise: RequestHandler = (req, _res, next) => {
    if (req.is(['urlencoded', 'multipart']) && req.body && typeof req.body === 'object') {
      req.body = normaliseFormBody({ ...(req.body as Record<string, unknown>) });
    }
    req.body ??= {};
    next();
  };
  return [checkType, json, form, multipartErrors, normalise];
}

export function transcriptRoutes(
  transcripts: TranscriptService,
  lists: TranscriptListService,
  limit: (route: string) => RequestHandler,
  maxBodyBytes: number,
): Router {
  const r = Router();

  r.post(
    '/transcripts',
    limit('POST /v1/transcripts'),
    ...createBodyParsers(maxBodyBytes),
    async (req, res) => {
      const result = await transcripts.create(
        req.auth!.accountId,
        req.auth!.apiKeyId,
        req.body,
        req.headers['idempotency-key'],
      );
      res.status(result.status).json({ data: result.transcript });
    },
  );

  r.get('/transcripts', limit('GET /v1/transcripts'), async (req, res) => {
    res.json({ data: await lists.list(req.auth!.accountId, req.query) });
  });

  r.get('/transcripts/:id', limit('GET /v1/transcripts/{id}'), async (req, res) => {
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

  r.post('/transcripts/:id/cancel', limit('POST /v1/transcripts/{id}/cancel'), async (req, res) => {
    res.json({ data: await transcripts.cancel(req.auth!.accountId, String(req.params.id)) });
  });

  r.delete('/transcripts/:id', limit('DELETE /v1/transcripts/{id}'), async (req, res) => {
    res.json({ data: await transcripts.delete(req.auth!.accountId, String(req.params.id)) });
  });
  return r;
}
