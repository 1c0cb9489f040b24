import { HarkError } from '@hark/core';
import express, { type Request, type RequestHandler } from 'express';
import multer from 'multer';
import { OpenAiError } from '../services/openai-errors';
import { normaliseFormBody } from '../services/form-normalise';
import { type FormRefusal, readMultipartForm } from './multipart-form';

/**
 * POST /v1/transcripts: JSON, urlencoded and multipart bodies all become the same parsed fields
 * (`req.body`, `{}` when there is none); any other content type is 400 `body_invalid`. Each is
 * held to `maxBytes` (a multipart body for all its fields together, as a JSON body is as a whole).
 */
export function fieldBodyParsers(maxBytes: number): RequestHandler[] {
  const json = express.json({
    limit: maxBytes,
    strict: false,
    type: ['application/json', 'application/*+json'],
  });
  const form = express.urlencoded({ limit: maxBytes, extended: true, parameterLimit: 1000 });
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
  const limits = { fieldBytes: maxBytes, fieldSize: maxBytes, fields: 200, parts: 200 };
  const refuse = (r: FormRefusal): HarkError => {
    switch (r.kind) {
      case 'field_too_long':
      case 'fields_too_large':
        return new HarkError('payload_too_large');
      case 'incomplete':
        return HarkError.validation({ body: 'body_incomplete' });
      default:
        return HarkError.validation({ body: 'body_invalid' });
    }
  };
  const multipart: RequestHandler = async (req, res, next) => {
    if (!req.is('multipart')) return next();
    try {
      req.body = await readMultipartForm(req, limits, refuse).fields;
    } catch (err) {
      closeUnlessRead(req, res);
      throw err;
    }
    next();
  };
  const normalise: RequestHandler = (req, _res, next) => {
    if (req.is(['urlencoded', 'multipart']) && req.body && typeof req.body === 'object') {
      req.body = normaliseFormBody({ ...(req.body as Record<string, unknown>) });
    }
    req.body ??= {};
    next();
  };
  return [checkType, json, form, multipart, normalise];
}

/**
 * A refusal in the middle of a body (the rest unread): the connection closes after the answer,
 * instead of waiting on bytes nobody reads. A body never touched is left to Node, which discards
 * it and keeps the connection.
 */
export function closeUnlessRead(
  req: Request,
  res: { setHeader(name: string, value: string): unknown },
): void {
  if (req.readableDidRead && !req.complete) res.setHeader('Connection', 'close');
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
