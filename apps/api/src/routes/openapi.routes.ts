// GET /v1/openapi.json (no key; limited per client address)
import type { IRouter } from 'express';
import { type RouteLimit, mounter } from '../contract/mount';
import { ROUTE } from '../contract/routes.contract';
import { buildOpenApiDocument } from '../openapi/document';

/** `limitByAddress`: the limiter of public routes, per client address. */
export function openapiRoutes(r: IRouter, limitByAddress: RouteLimit): void {
  const doc = buildOpenApiDocument();
  mounter(r, { base: '', auth: 'address', limit: limitByAddress })(ROUTE.getOpenApiDocument, (_req, res) => {
    res.json(doc);
  });
}
