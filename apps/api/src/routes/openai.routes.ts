// POST /v1/audio/transcriptions, POST /v1/audio/translations (OpenAI-compatible)
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { Router } from 'express';
import { type RouteLimit, keyedMount } from '../contract/mount';
import { ROUTE, expressPath } from '../contract/routes.contract';
import type { OpenAiAudioService } from '../services/openai-audio.service';
import { toOpenAiError } from '../services/openai-errors';
import type { AudioTask } from '../services/openai-request';

const TASKS = [
  [ROUTE.createOpenAiTranscription, 'transcribe'],
  [ROUTE.createOpenAiTranslation, 'translate'],
] as const satisfies readonly (readonly [unknown, AudioTask])[];

/**
 * Their paths under /v1 (`req.path` on the /v1 router), matched as Express matches routes: in
 * any case and with an optional trailing slash (path-to-regexp's `sensitive: false` and
 * `trailing: true`), so `/v1/audio/Translations/` reaches the handler and its errors come here too.
 */
const PATHS = TASKS.map(([route]) => new RegExp(`^${escapeRegExp(expressPath(route.path, '/v1'))}/?$`, 'i'));

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether a request is one of these operations (their errors use OpenAI's shape). */
export function isOpenAiAudioRequest(req: Request): boolean {
  return req.method === 'POST' && PATHS.some((path) => path.test(req.path));
}

/**
 * Errors of these two operations, wherever they were raised under /v1 (the key check, the rate
 * limiter, the body parser, the service), in OpenAI's shape; any other request passes on to
 * Hark's error handler. Mounted on the /v1 router after authentication.
 */
export const openAiErrorHandler: ErrorRequestHandler = (err: unknown, req, res, next) => {
  if (!isOpenAiAudioRequest(req)) return next(err);
  const e = toOpenAiError(err);
  if (e.status >= 500) req.log.error({ err }, 'openai route error');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
  if (e.status === 413) res.setHeader('Connection', 'close'); // the rest of the body is not read
  res.status(e.status).json(e.body());
};

/** The wait bound counts from the request's arrival, before its body was read. */
const arrival: RequestHandler = (_req, res, next) => {
  res.locals.openAiArrivedAt = Date.now();
  next();
};
const arrivedAt = (res: Response): number => (res.locals.openAiArrivedAt as number | undefined) ?? Date.now();

/** `parseFile`: the multipart parser (`audioFileParser` in middleware/body-parsers.ts). */
export function openAiRoutes(
  audio: OpenAiAudioService,
  limit: RouteLimit,
  parseFile: RequestHandler,
): Router {
  const r = Router();
  const mount = keyedMount(r, limit);
  for (const [route, task] of TASKS) {
    // The contract counts these as creating a transcript (`limitAs`): one rate limit for both.
    mount(route, { before: [arrival] }, parseFile, async (req, res) => {
      const closed = new AbortController();
      res.on('close', () => closed.abort());
      const file = req.file ? { buffer: req.file.buffer, size: req.file.size } : undefined;
      const fields = (req.body ?? {}) as Record<string, unknown>;
      const out = await audio.run(req.auth!, task, fields, file, closed.signal, arrivedAt(res));
      if (!out) return; // the client went away; the transcript goes on
      if (out.kind === 'json') res.json(out.body);
      else res.type('text/plain; charset=utf-8').send(out.body);
    });
  }
  return r;
}
