// POST /v1/uploads, GET /v1/uploads/{id}, PUT /v1/uploads/{id}
import { HarkError } from '@hark/core';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { type RouteLimit, keyedMount } from '../contract/mount';
import { ROUTE } from '../contract/routes.contract';
import { parseCreateUpload } from '../schemas/create-upload';
import type { UploadService } from '../services/upload.service';
import { clientGone } from './client-gone';

function declaredLength(req: Request): number | null {
  const raw = req.headers['content-length'];
  if (raw === undefined) return req.headers['transfer-encoding'] ? null : 0;
  return Number(raw);
}

/**
 * A refusal sent before the body was read (a size limit, the account's upload quota) closes the
 * connection instead of draining it.
 */
function closeAfter(res: Response, e: unknown): never {
  if (e instanceof HarkError && (e.status === 413 || e.code === 'insufficient_balance'))
    res.setHeader('Connection', 'close');
  throw e;
}

export function uploadRoutes(uploads: UploadService, limit: RouteLimit): Router {
  const r = Router();
  const mount = keyedMount(r, limit);
  const noStore: RequestHandler = (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  };

  mount(ROUTE.createUpload, noStore, async (req, res) => {
    const input = parseCreateUpload(req.query, req.headers['idempotency-key']);
    const upload = await uploads
      .createWithBody(req.auth!.accountId, input, req, declaredLength(req), { signal: clientGone(res) })
      .catch((e: unknown) => closeAfter(res, e));
    res.status(201).json({ data: upload });
  });

  mount(ROUTE.getUpload, noStore, async (req, res) => {
    res.json({ data: await uploads.get(req.auth!.accountId, String(req.params.id)) });
  });

  mount(ROUTE.appendUploadChunk, noStore, async (req, res) => {
    const upload = await uploads
      .append(req.auth!.accountId, String(req.params.id), req, declaredLength(req), clientGone(res))
      .catch((e: unknown) => closeAfter(res, e));
    res.json({ data: upload });
  });
  return r;
}
