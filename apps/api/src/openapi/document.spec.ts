import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CODE_STATUS } from '@hark/core';
import { OpenApiContract } from '@hark/core/testing';
// A devDependency: the API itself does not load @hark/webhooks; this only checks the two agree.
import { SIGNATURE_HEADER, WEBHOOK_USER_AGENT, buildSignedRequest } from '@hark/webhooks';
import { API_VERSION, WEBHOOK_HEADERS, buildOpenApiDocument, serializeOpenApiDocument } from './document';

const COMMITTED = path.resolve(__dirname, '../../../../docs/openapi.json');

describe('OpenAPI document', () => {
  const doc = buildOpenApiDocument();

  it('docs/openapi.json is the document generated from the schemas (run `pnpm openapi` when this fails)', () => {
    const committed = readFileSync(COMMITTED, 'utf8');
    if (committed !== serializeOpenApiDocument(doc)) {
      throw new Error('docs/openapi.json is stale: run `pnpm openapi` and commit the result');
    }
  });

  it('is OpenAPI 3.1, version 1.0.0, bearer security', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ version: API_VERSION });
    expect(API_VERSION).toBe('1.0.0');
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('every $ref resolves', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of new Set(refs)) {
      const pointer = ref.slice(8, -1);
      const target = pointer
        .slice(2)
        .split('/')
        .reduce<unknown>(
          (acc, seg) => (acc as Record<string, unknown> | undefined)?.[seg.replace(/~1/g, '/')],
          doc,
        );
      expect([pointer, target !== undefined]).toEqual([pointer, true]);
    }
  });

  it('documents every error code of the API somewhere, each at its own status', () => {
    const seen = new Map<string, Set<string>>();
    const visit = (status: string, response: Record<string, unknown>) => {
      const schema = (
        response.content as Record<string, { schema: { allOf?: { properties?: unknown }[] } }> | undefined
      )?.['application/json']?.schema;
      const narrowed = schema?.allOf?.[1]?.properties as
        | { error: { properties: { code: { enum: string[] } } } }
        | undefined;
      for (const code of narrowed?.error.properties.code.enum ?? []) {
        if (!seen.has(code)) seen.set(code, new Set());
        seen.get(code)!.add(status);
      }
    };
    const components = (doc.components as { responses: Record<string, Record<string, unknown>> }).responses;
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        for (const [status, r] of Object.entries(op.responses as Record<string, Record<string, unknown>>)) {
          const ref = r.$ref as string | undefined;
          visit(status, ref ? components[ref.split('/').pop()!]! : r);
        }
      }
    }
    for (const [code, status] of Object.entries(CODE_STATUS)) {
      expect([code, [...(seen.get(code) ?? [])]]).toEqual([code, [String(status)]]);
    }
  });

  it('describes the webhook exactly as packages/webhooks sends it', () => {
    const sent = buildSignedRequest({
      transcriptListItem: { id: 'tr_1' },
      deliveryId: 'whd_tr_1',
      secretHex: 'a'.repeat(64),
      now: new Date(1_700_000_000_000),
    });
    expect(SIGNATURE_HEADER).toBe(WEBHOOK_HEADERS.signature);
    expect(WEBHOOK_USER_AGENT).toBe(WEBHOOK_HEADERS.userAgent);
    expect(Object.keys(sent.headers).sort()).toEqual(
      ['Content-Type', WEBHOOK_HEADERS.deliveryId, WEBHOOK_HEADERS.signature, 'User-Agent'].sort(),
    );
    const post = (
      doc.webhooks as Record<
        string,
        { post: { parameters: { name: string; schema: { pattern?: string } }[] } }
      >
    ).transcriptFinished!.post;
    const signature = post.parameters.find((p) => p.name === WEBHOOK_HEADERS.signature)!;
    expect(sent.headers[WEBHOOK_HEADERS.signature]).toMatch(new RegExp(signature.schema.pattern!));
  });

  it('the contract compiles every response schema', () => {
    const contract = new OpenApiContract(doc);
    expect(
      contract.check({ method: 'GET', path: '/v1/balance', status: 200, headers: {}, body: {} })?.problems,
    ).toEqual([
      'required header X-Request-Id is missing',
      'required header RateLimit-Limit is missing',
      'required header RateLimit-Remaining is missing',
      'required header RateLimit-Reset is missing',
      'content type (none) is not documented (documented: application/json)',
    ]);
  });
});
