import { HarkError } from '@hark/core';
import express, { type Request, type RequestHandler } from 'express';
import { OpenAiError } from '../services/openai-errors';
import { normaliseFormBody } from '../services/form-normalise';
import { type FormRefusal, type MultipartForm, readMultipartForm } from './multipart-form';

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

/** Largest form field of an OpenAI audio request (a prompt is the long one). */
const FIELD_MAX_BYTES = 64 * 1024;
/** All the form fields of an OpenAI audio request together: room for a longest prompt and glossary. */
export const AUDIO_FIELDS_MAX_BYTES = 256 * 1024;

/**
 * POST /v1/audio/*: reads the multipart body as it arrives, its `file` (at most `maxFileBytes`)
 * as a stream for the blob store and its form fields (at most 256 KiB together); refusals as
 * OpenAI errors. A body silent for `idleMs` is dropped (as an upload's).
 */
export function audioFormReader(maxFileBytes: number, idleMs: number): (req: Request) => MultipartForm {
  const limits = {
    fieldBytes: AUDIO_FIELDS_MAX_BYTES,
    fieldSize: FIELD_MAX_BYTES,
    fields: 50,
    parts: 60,
    file: { name: 'file', maxBytes: maxFileBytes },
    idleMs,
  };
  const megabytes = Math.round((maxFileBytes / 1024 / 1024) * 10) / 10;
  const refuse = (r: FormRefusal): OpenAiError => {
    switch (r.kind) {
      case 'file_too_large':
        return new OpenAiError(
          413,
          `Maximum content size limit (${maxFileBytes} bytes, ${megabytes} MiB) exceeded.`,
          'invalid_request_error',
          'file',
          'file_too_large',
          { 'x-should-retry': 'false' },
        );
      case 'field_too_long':
        return OpenAiError.invalid(`The '${r.field}' field is longer than 64 KiB.`, r.field, 'invalid_value');
      case 'fields_too_large':
        return new OpenAiError(
          413,
          `The form fields are longer than ${AUDIO_FIELDS_MAX_BYTES / 1024} KiB together.`,
          'invalid_request_error',
          null,
          'fields_too_large',
          { 'x-should-retry': 'false' },
        );
      case 'unexpected_file':
        return OpenAiError.invalid(
          'Only one file, in the `file` field, is accepted.',
          'file',
          'unexpected_file',
        );
      case 'incomplete':
        return OpenAiError.invalid('The request ended before its multipart body did.', null, 'invalid_body');
      case 'malformed':
        return OpenAiError.invalid('The multipart body could not be read.', null, 'invalid_body');
    }
  };
  return (req) => {
    if (!req.is('multipart/form-data')) {
      throw OpenAiError.invalid(
        'The request must be multipart/form-data with a `file` part.',
        null,
        'invalid_content_type',
      );
    }
    return readMultipartForm(req, limits, refuse);
  };
}
