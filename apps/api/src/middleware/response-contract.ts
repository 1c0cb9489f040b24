import {
  type ContractViolation,
  OpenApiContract,
  formatContractViolation,
  recordContractViolation,
} from '@hark/core/testing';
import type { RequestHandler } from 'express';
import { buildOpenApiDocument } from '../openapi/document';

let shared: OpenApiContract | undefined;

/** The contract of this build's own document, compiled once per process. */
export function apiContract(): OpenApiContract {
  return (shared ??= new OpenApiContract(buildOpenApiDocument()));
}

/**
 * Opt-in response validator (HARK_VALIDATE_RESPONSES=1: the test suite, never production).
 * Every response is checked against the OpenAPI document. A JSON response outside it is
 * replaced by a 500 naming the problems, so the request that produced it fails even in a
 * separate process; every violation is also logged and recorded, and the jest set-up fails the
 * test that caused it. Non-JSON responses are checked when they finish (status, content type,
 * headers). Paths outside /v1 that the document does not name (operator endpoints) are skipped.
 */
export function responseContract(contract: OpenApiContract = apiContract()): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'HEAD' || req.method === 'OPTIONS') return next();
    const path = req.path;
    // The contract is the public API: /v1 and the documented paths. Operator endpoints
    // (/metrics, the queue board) are outside it.
    if (!path.startsWith('/v1/') && !contract.documents(path)) return next();
    let checked = false;
    const report = (v: ContractViolation) => {
      recordContractViolation(v);
      req.log.error({ violation: v }, `response outside the OpenAPI document: ${formatContractViolation(v)}`);
    };

    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      if (checked) return json(body);
      checked = true;
      const headers = { 'content-type': 'application/json', ...res.getHeaders() };
      const v = contract.check({ method: req.method, path, status: res.statusCode, headers, body });
      if (!v) return json(body);
      report(v);
      res.status(500);
      return json({
        error: {
          code: 'internal',
          message: `Response outside the OpenAPI document: ${formatContractViolation(v)}`,
          retryable: false,
          requestId: req.id,
        },
      });
    };

    res.on('finish', () => {
      if (checked) return;
      const v = contract.check({
        method: req.method,
        path,
        status: res.statusCode,
        headers: res.getHeaders(),
      });
      if (v) report(v);
    });
    next();
  };
}
