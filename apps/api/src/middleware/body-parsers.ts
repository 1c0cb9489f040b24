import { HarkError } from '@hark/core';
import express, { type RequestHandler } from 'express';
import multer from 'multer';
import { OpenAiError } from '../services/openai-errors';
import { normaliseFormBody } from '../services/form-normalise';

/**
 * POST /v1/transcripts: JSON, urlencoded and multipart bodies all become the same parsed fields
 * (`req.body`, `{}` when there is none); any other content type is 400 `body_invalid`.
 */
export function fieldBodyParsers(maxBytes: number): RequestHandler[] {
  const json = express.json({
    limit: maxBytes,
    strict: false,
    type: ['application/json', 'application/*+json'],
  });
  const form = express.urlencoded({ limit: maxBytes, extended: true, parameterLimit: 1000 });
  const multipart = multer({ limits: { fieldSize: maxBytes, fields: 200, files: 0, parts: 200 } }).none();
  const checkType: RequestHandler = (req, _res, next) => {
    const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
    if (
      (hasBody || req.headers['transfer-encoding']) &&
      !req.is(['json', '+json', 'urlencoded', 'multipart'])
    ) {
      return next(HarkError.validation({ body: 'body_invalid' }));
    }
    next();
  };
  const multipartErrors: RequestHandler = (req, res, next) => {
    multipart(req, res, (err?: unknown) => {
      if (!err) return next();
      const code = (err as { code?: string }).code;
      next(
        code === 'LIMIT_FIELD_VALUE'
          ? new HarkError('payload_too_large')
          : HarkError.validation({ body: 'body_invalid' }),
      );
    });
  };
  const normalise: RequestHandler = (req, _res, next) => {
    if (req.is(['urlencoded', 'multipart']) && req.body && typeof req.body === 'object') {
      req.body = normaliseFormBody({ ...(req.body as Record<string, unknown>) });
    }
    req.body ??= {};
    next();
  };
  return [checkType, json, form, multipartErrors, normalise];
}

/**
 * POST /v1/audio/*: a multipart body with one `file` (in memory, at most `maxFileBytes`) and
 * form fields; refusals as OpenAI errors.
 */
/** Largest form field of an OpenAI audio request (a prompt is the long one). */
const FIELD_MAX_BYTES = 64 * 1024;

export function audioFileParser(maxFileBytes: number): RequestHandler {
  const parse = multer({
    storage: multer.memoryStorage(),
    // busboy signals a limit when a part reaches it, not when it passes it: one byte more, so a
    // file of exactly the limit passes (the limit is the largest accepted, as OpenAI's 25 MiB).
    limits: { fileSize: maxFileBytes + 1, files: 1, fields: 50, fieldSize: FIELD_MAX_BYTES + 1, parts: 60 },
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
      if (code === 'LIMIT_FIELD_VALUE') {
        const field = (err as { field?: string }).field ?? null;
        return next(
          OpenAiError.invalid(`The '${field}' field is longer than 64 KiB.`, field, 'invalid_value'),
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
