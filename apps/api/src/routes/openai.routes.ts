// POST /v1/audio/transcriptions, POST /v1/audio/translations (OpenAI-compatible)
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { Router } from 'express';
import { type RouteLimit, keyedMount } from '../contract/mount';
import { ROUTE, expressPath } from '../contract/routes.contract';
import { closeUnlessRead } from '../middleware/body-parsers';
import type { MultipartForm } from '../middleware/multipart-form';
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
  // Nobody to answer: the connection is gone (a client that hung up, or a body dropped as idle).
  if (res.headersSent || req.socket.destroyed) {
    res.destroy();
    return;
  }
  for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
  closeUnlessRead(req, res);
  res.status(e.status).json(e.body());
};

/** The wait bound counts from the request's arrival, before its body was read. */
const arrival: RequestHandler = (_req, res, next) => {
  res.locals.openAiArrivedAt = Date.now();
  next();
};
const arrivedAt = (res: Response): number => (res.locals.openAiArrivedAt as number | undefined) ?? Date.now();

/** `readForm`: the multipart reader (`audioFormReader` in middleware/body-parsers.ts). */
export function openAiRoutes(
  audio: OpenAiAudioService,
  limit: RouteLimit,
  readForm: (req: Request) => MultipartForm,
): Router {
  const r = Router();
  const mount = keyedMount(r, limit);
  for (const [route, task] of TASKS) {
    // The contract counts these as creating a transcript (`limitAs`): one rate limit for both.
    mount(route, { before: [arrival] }, async (req, res) => {
      const closed = new AbortController();
      res.on('close', () => closed.abort());
      const out = await audio.run(req.auth!, task, () => readForm(req), closed.signal, arrivedAt(res));
      if (!out) return; // the client went away; the transcript goes on
      if (out.kind === 'json') res.json(out.body);
      else res.type('text/plain; charset=utf-8').send(out.body);
    });
  }
  return r;
}
