// GET /v1/openapi.json (no key; limited per client address)
import { Router, type RequestHandler } from 'express';
import { buildOpenApiDocument } from '../openapi/document';

export function openapiRoutes(limit: RequestHandler): Router {
  const doc = buildOpenApiDocument();
  const r = Router();
  r.get('/v1/openapi.json', limit, (_req, res) => {
    res.json(doc);
  });
  return r;
}
