// The declaration must reach every project that compiles this file (bench/api includes it too).
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./append-field.d.ts" />
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { isHarkError } from '@hark/core';
import appendField from 'append-field';
import busboy from 'busboy';
import { watchIdle } from '../services/idle-body';

export interface MultipartLimits {
  /** Bytes of every field's name and value together: what the form's fields may hold in memory. */
  fieldBytes: number;
  /** Largest value of one field, in bytes. */
  fieldSize: number;
  /** Most fields. */
  fields: number;
  /** Most parts, fields and files together. */
  parts: number;
  /** The one file part accepted, by name, and its largest size in bytes; none when absent. */
  file?: { name: string; maxBytes: number };
  /** Drop a body that receives no byte for this long (`watchIdle`); no watch when absent. */
  idleMs?: number;
}

/** Why a multipart body is refused; each route answers with its own error. */
export type FormRefusal =
  | { kind: 'field_too_long'; field: string }
  | { kind: 'fields_too_large' }
  | { kind: 'file_too_large' }
  | { kind: 'unexpected_file' }
  | { kind: 'malformed' }
  /** The client went away before the body ended. */
  | { kind: 'incomplete' };

export interface FilePart {
  /** The file's bytes as they arrive; its reader must take them (the rest of the form waits). */
  stream: Readable;
  /** The most bytes it can hold: the file limit, or the request's Content-Length when smaller. */
  atMost: number;
}

export interface MultipartForm {
  /** The file part once it begins, or null once the body ended without one. */
  file: Promise<FilePart | null>;
  /**
   * The fields, once the whole body was read (so after the file's reader took the file). `a[b]`
   * and `a[]` names become objects and arrays, as multer made them.
   */
  fields: Promise<Record<string, unknown>>;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}

/** A promise settled from outside, whose rejection is never reported as unhandled before it is awaited. */
function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ([resolve, reject] = [res, rej]));
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * Reads a `multipart/form-data` request as it arrives: the fields into memory, held to
 * `limits.fieldBytes` together (one budget, however many fields), and the one file part, if
 * accepted, handed over as a stream, never buffered here. Any refusal destroys the file's stream
 * with `refuse(...)`'s error (so its reader throws it) and rejects `fields`; the rest of the body
 * is then left unread (answer with `Connection: close`).
 */
export function readMultipartForm(
  req: IncomingMessage,
  limits: MultipartLimits,
  refuse: (r: FormRefusal) => Error,
): MultipartForm {
  const file = deferred<FilePart | null>();
  const done = deferred<Record<string, unknown>>();
  const fields = Object.create(null) as Record<string, unknown>;
  let fieldBytes = 0;
  let current: Readable | null = null;
  let over = false;

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      // busboy signals a limit when a value reaches it: one byte more, so the limit is the
      // largest accepted.
      limits: {
        fieldSize: limits.fieldSize + 1,
        fields: limits.fields,
        parts: limits.parts,
        files: limits.file ? 1 : 0,
        ...(limits.file ? { fileSize: limits.file.maxBytes + 1 } : {}),
      },
    });
  } catch {
    // Not multipart/form-data, or no boundary. Either promise may go unawaited.
    const refused = deferred<never>();
    refused.reject(refuse({ kind: 'malformed' }));
    return { file: refused.promise, fields: refused.promise };
  }
  const idle = limits.idleMs === undefined ? null : watchIdle(req, limits.idleMs);

  // The request outlives the form (it waits for its transcript): nothing it holds may keep the
  // form's fields or parser reachable, so its listeners go with the form.
  const end = () => {
    over = true;
    idle?.stop();
    if (idle) req.off('data', idle.touch);
    req.off('error', onError);
    req.off('close', onClose);
  };
  const fail = (err: Error) => {
    if (over) return;
    end();
    req.unpipe(parser);
    parser.removeAllListeners();
    parser.on('error', () => undefined);
    current?.destroy(err);
    file.reject(err);
    done.reject(err);
  };

  parser.on('field', (name: string | undefined, value: string, info: busboy.FieldInfo) => {
    if (name == null || info.nameTruncated) return fail(refuse({ kind: 'malformed' }));
    if (info.valueTruncated) return fail(refuse({ kind: 'field_too_long', field: name }));
    fieldBytes += Buffer.byteLength(name) + Buffer.byteLength(value);
    if (fieldBytes > limits.fieldBytes) return fail(refuse({ kind: 'fields_too_large' }));
    appendField(fields, name, value);
  });
  parser.on('file', (name: string | undefined, stream: Readable, info: busboy.FileInfo) => {
    // A fail() destroys it with its error: its reader may not be listening yet.
    stream.on('error', () => undefined);
    if (!limits.file || name !== limits.file.name || current)
      return fail(refuse({ kind: 'unexpected_file' }));
    // A file part without a file name is no file (as multer had it): skipped.
    if (!info.filename) return void stream.resume();
    current = stream;
    stream.on('limit', () => fail(refuse({ kind: 'file_too_large' })));
    const declared = Number(req.headers['content-length']);
    const atMost = Number.isSafeInteger(declared)
      ? Math.min(declared, limits.file.maxBytes)
      : limits.file.maxBytes;
    file.resolve({ stream, atMost });
  });
  parser.on('filesLimit', () => fail(refuse({ kind: 'unexpected_file' })));
  parser.on('fieldsLimit', () => fail(refuse({ kind: 'malformed' })));
  parser.on('partsLimit', () => fail(refuse({ kind: 'malformed' })));
  parser.on('error', () => fail(refuse({ kind: 'malformed' })));
  parser.on('close', () => {
    if (over) return;
    end();
    file.resolve(null); // no effect once a file part began
    done.resolve(fields);
  });
  // The idle watch destroys the request with its 408, which is what the file's reader then
  // throws; any other error is the client's connection failing.
  function onError(err: Error) {
    fail(isHarkError(err) ? err : refuse({ kind: 'incomplete' }));
  }
  function onClose() {
    if (!req.complete) fail(refuse({ kind: 'incomplete' }));
  }
  req.on('error', onError);
  req.on('close', onClose);
  if (idle) req.on('data', idle.touch);
  req.pipe(parser);
  return { file: file.promise, fields: done.promise };
}
