// GET /v1/openapi.json (no key; limited per client address)
import type { IRouter, RequestHandler } from 'express';
import { buildOpenApiDocument } from '../openapi/document';

export function openapiRoutes(r: IRouter, limit: RequestHandler): void {
  const doc = buildOpenApiDocument();
  r.get('/v1/openapi.json', limit, (_req, res) => {
    res.json(doc);
  });
}
