import { HarkError, LIMITS, bracketedParams, fieldErrors } from '@hark/core';
import { idempotencyKeyValid } from './idempotency-key';
import { UploadQuery } from './upload.schemas';
import type { Static } from '@sinclair/typebox';

/** POST /v1/uploads: the query and `Idempotency-Key` parsed into the service's input. */
export interface CreateUploadRequest {
  expectedBytes: number | null;
  /** Lowercase hex. */
  sha256: string | null;
  /** Absent on the API's own creates (the OpenAI routes). */
  idempotencyKey?: string | undefined;
}

/** Every field's problem reported together: 400 `validation`. */
export function parseCreateUpload(
  query: Record<string, unknown>,
  idempotencyKey: unknown,
): CreateUploadRequest {
  const fields: Record<string, string> = {
    ...bracketedParams(UploadQuery, query),
    ...fieldErrors(UploadQuery, query),
  };
  if (!idempotencyKeyValid(idempotencyKey)) fields.idempotencyKey = 'idempotency_key_invalid';
  // Each value without a field error is the schema's string, or absent.
  const q = query as Static<typeof UploadQuery>;
  if (
    !fields.expectedBytes &&
    q.expectedBytes !== undefined &&
    Number(q.expectedBytes) > LIMITS.maxUploadBytes
  )
    fields.expectedBytes = 'expected_bytes_invalid';
  if (Object.keys(fields).length > 0) throw HarkError.validation(fields);
  return {
    expectedBytes: q.expectedBytes === undefined ? null : Number(q.expectedBytes),
    sha256: q.sha256?.toLowerCase() ?? null,
    idempotencyKey: idempotencyKey as string | undefined,
  };
}
