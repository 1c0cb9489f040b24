// POST /v1/audio/transcriptions, POST /v1/audio/translations (OpenAI-compatible)
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { Router } from 'express';
import multer from 'multer';
import type { OpenAiAudioService } from '../services/openai-audio.service';
import { OpenAiError, toOpenAiError } from '../services/openai-errors';
import type { AudioTask } from '../services/openai-request';

const ROUTES: Record<string, AudioTask> = {
  '/audio/transcriptions': 'transcribe',
  '/audio/translations': 'translate',
};

/** Whether a request is one of these operations (their errors use OpenAI's shape). */
export function isOpenAiAudioRequest(req: Request): boolean {
  return req.method === 'POST' && Object.hasOwn(ROUTES, req.path);
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

function fileParser(maxFileBytes: number): RequestHandler {
  const parse = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: maxFileBytes, files: 1, fields: 50, fieldSize: 64 * 1024, parts: 60 },
  }).single('file');
  const megabytes = Math.round((maxFileBytes / 1024 / 1024) * 10) / 10;
  return (req, res, next) => {
    if (!req.is('multipart/form-data')) {
      return next(
        OpenAiError.invalid(
          'The request must be multipart/form-data with a `file` part.',
          null,
          'invalid_content_type',
        ),
      );
    }
    parse(req, res, (err?: unknown) => {
      if (!err) return next();
      const code = (err as { code?: string }).code;
      if (code === 'LIMIT_FILE_SIZE') {
        return next(
          new OpenAiError(
            413,
            `Maximum content size limit (${maxFileBytes} bytes, ${megabytes} MiB) exceeded.`,
            'invalid_request_error',
            'file',
            'file_too_large',
            {
              'x-should-retry': 'false',
            },
          ),
        );
      }
      if (code === 'LIMIT_UNEXPECTED_FILE')
        return next(
          OpenAiError.invalid('Only one file, in the `file` field, is accepted.', 'file', 'unexpected_file'),
        );
      next(OpenAiError.invalid('The multipart body could not be read.', null, 'invalid_body'));
    });
  };
}

/** The wait bound counts from the request's arrival, before its body was read. */
const arrival: RequestHandler = (_req, res, next) => {
  res.locals.openAiArrivedAt = Date.now();
  next();
};
const arrivedAt = (res: Response): number => (res.locals.openAiArrivedAt as number | undefined) ?? Date.now();

export function openAiRoutes(
  audio: OpenAiAudioService,
  limit: (route: string) => RequestHandler,
  maxFileBytes: number,
): Router {
  const r = Router();
  const parse = fileParser(maxFileBytes);
  for (const [path, task] of Object.entries(ROUTES)) {
    // Counted as creating a transcript: one rate limit for both ways of asking for one.
    r.post(path, arrival, limit('POST /v1/transcripts'), parse, async (req, res) => {
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
