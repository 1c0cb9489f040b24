import { BLOCKED_CODE } from './guard';

/**
 * Why an outbound request got no usable answer. These strings are stored as a webhook delivery
 * record's `error`, so they are stable, short, and never carry addresses or raw error text.
 */
export type FailureKind =
  | 'blocked_address'
  | 'timeout'
  | 'dns_failed'
  | 'connection_refused'
  | 'connection_reset'
  | 'tls_failed'
  | 'too_many_redirects'
  | 'request_failed';

const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
]);

/** Maps a got / node error to a {@link FailureKind}, by its `code` only. */
export function classifyFailure(error: unknown): FailureKind {
  const code = codeOf(error);
  if (code === BLOCKED_CODE) return 'blocked_address';
  if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') return 'timeout';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return 'dns_failed';
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') {
    return 'connection_refused';
  }
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
    return 'connection_reset';
  }
  if (code === 'ERR_TOO_MANY_REDIRECTS') return 'too_many_redirects';
  if (
    code !== undefined &&
    (TLS_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_'))
  ) {
    return 'tls_failed';
  }
  return 'request_failed';
}

/** Human phrasing of a {@link FailureKind}, safe to show to the API caller. */
export function describeFailure(kind: FailureKind): string {
  switch (kind) {
    // One phrase for both: a caller who could tell them apart could map which internal host
    // names exist (a name in the worker's /etc/hosts or search domain resolves, to a private
    // address) by the transcripts' error messages. The delivery log and logs keep the kind.
    case 'blocked_address':
    case 'dns_failed':
      return 'the host did not resolve to a public address';
    case 'timeout':
      return 'the server did not answer in time';
    case 'connection_refused':
      return 'the server could not be reached';
    case 'connection_reset':
      return 'the connection was closed early';
    case 'tls_failed':
      return 'the TLS handshake failed';
    case 'too_many_redirects':
      return 'too many redirects';
    case 'request_failed':
      return 'the request failed';
  }
}

/** The errno-style code of an error or of one it wraps. */
export function codeOf(error: unknown): string | undefined {
  // got wraps the original error but copies its code; the cause chain is a fallback.
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'ERR_GOT_REQUEST_ERROR') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
