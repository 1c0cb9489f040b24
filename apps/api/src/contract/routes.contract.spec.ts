import { type RequestHandler, Router } from 'express';
import { accountRoutes } from '../routes/account.routes';
import { healthRoutes } from '../routes/health.routes';
import { openAiRoutes } from '../routes/openai.routes';
import { openapiRoutes } from '../routes/openapi.routes';
import { subtitleRoutes } from '../routes/subtitle.routes';
import { transcriptRoutes } from '../routes/transcript.routes';
import { uploadRoutes } from '../routes/upload.routes';
import { webhookRoutes } from '../routes/webhook.routes';
import { mounter } from './mount';
import { ROUTES, ROUTE_KEYS, type RouteKey, expressPath, rateLimitKey } from './routes.contract';

const pass: RequestHandler = (_req, _res, next) => next();

interface Layer {
  route?: { path: string; methods: Record<string, boolean>; stack: { handle: RequestHandler }[] };
}

/** `METHOD /path` of every route registered on a router, with the OpenAPI form of its path. */
function registered(router: Router, base: string): string[] {
  return (router.stack as Layer[]).flatMap((layer) =>
    layer.route
      ? Object.keys(layer.route.methods).map(
          (m) => `${m.toUpperCase()} ${base}${layer.route!.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`,
        )
      : [],
  );
}

describe('route contract', () => {
  it('operation ids are unique, and each method and path is declared once', () => {
    expect(new Set(ROUTES.map((r) => r.operationId)).size).toBe(ROUTES.length);
    expect(new Set(ROUTES.map((r) => `${r.method} ${r.path}`)).size).toBe(ROUTES.length);
  });

  it('derives Express paths from OpenAPI paths', () => {
    expect(expressPath('/v1/transcripts/{id}/subtitles', '/v1')).toBe('/transcripts/:id/subtitles');
    expect(expressPath('/v1/openapi.json')).toBe('/v1/openapi.json');
    expect(expressPath('/healthz')).toBe('/healthz');
    expect(() => expressPath('/healthz', '/v1')).toThrow('not under /v1');
  });

  it('derives rate-limit keys: method and path; the OpenAI routes count as creating a transcript', () => {
    const keys = Object.fromEntries(ROUTES.map((r) => [r.operationId, rateLimitKey(r)]));
    expect(keys).toMatchObject({
      createTranscript: 'POST /v1/transcripts',
      getTranscript: 'GET /v1/transcripts/{id}',
      appendUploadChunk: 'PUT /v1/uploads/{id}',
      getOpenApiDocument: 'GET /v1/openapi.json',
      createOpenAiTranscription: 'POST /v1/transcripts',
      createOpenAiTranslation: 'POST /v1/transcripts',
      healthz: null,
      readyz: null,
    });
    expect(ROUTE_KEYS.has('POST /v1/audio/transcriptions')).toBe(false);
    expect(ROUTE_KEYS.has('GET /healthz')).toBe(false);
  });

  it('the route modules mount every contract route once, with its limiter, and nothing else', () => {
    const limited: string[] = [];
    const limit = (key: RouteKey): RequestHandler => {
      limited.push(key);
      return pass;
    };
    const none = null as never;
    const v1 = [
      accountRoutes(none, none, limit),
      uploadRoutes(none, limit),
      transcriptRoutes(none, none, limit, [pass]),
      webhookRoutes(none, limit),
      subtitleRoutes(none, limit),
      openAiRoutes(none, limit, none),
    ];
    const app = Router();
    healthRoutes(app, none);
    openapiRoutes(app, limit);
    const mounted = [...v1.flatMap((r) => registered(r, '/v1')), ...registered(app, '')];
    expect(mounted.sort()).toEqual(ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort());
    expect(limited.sort()).toEqual(
      ROUTES.map((r) => rateLimitKey(r))
        .filter((k) => k !== null)
        .sort(),
    );
  });

  it('refuses to mount a route on a router of another kind', () => {
    const health = ROUTES.find((r) => r.operationId === 'healthz')!;
    expect(() => mounter(Router(), { base: '/v1', auth: 'key', limit: () => pass })(health, pass)).toThrow(
      'healthz is a route with auth "none", not "key"',
    );
  });
});
