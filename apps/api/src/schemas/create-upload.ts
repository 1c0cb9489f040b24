import { HarkError, LIMITS, parseQueryOrThrow } from '@hark/core';
import { idempotencyKeyValid } from './idempotency-key';
import { UploadQuery } from './upload.schemas';

/** POST /v1/uploads: the query and `Idempotency-Key` parsed into the service's input. */
export interface CreateUploadRequest {
  expectedBytes: number | null;
  /** Lowercase hex. */
  sha256: string | null;
  idempotencyKey: string | undefined;
}

/** Every field's problem reported together: 400 `validation`. */
export function parseCreateUpload(
  query: Record<string, unknown>,
  idempotencyKey: unknown,
): CreateUploadRequest {
  const fields: Record<string, string> = {};
  if (!idempotencyKeyValid(idempotencyKey)) fields.idempotencyKey = 'idempotency_key_invalid';
  let q: { expectedBytes?: string; sha256?: string } = {};
  try {
    q = parseQueryOrThrow(UploadQuery, query);
  } catch (e) {
    if (!(e instanceof HarkError) || !e.fields) throw e;
    Object.assign(fields, e.fields);
  }
  const expectedBytes = q.expectedBytes === undefined ? null : Number(q.expectedBytes);
  if (expectedBytes !== null && expectedBytes > LIMITS.maxUploadBytes)
    fields.expectedBytes = 'expected_bytes_invalid';
  if (Object.keys(fields).length > 0) throw HarkError.validation(fields);
  return {
    expectedBytes,
    sha256: q.sha256?.toLowerCase() ?? null,
    idempotencyKey: idempotencyKey as string | undefined,
  };
}
