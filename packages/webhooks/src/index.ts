export {
  DEFAULT_TOLERANCE_SECONDS,
  parseSignatureHeader,
  SIGNATURE_HEADER,
  signingSecretFromApiKey,
  signPayload,
  verifySignature,
  type ParsedSignature,
  type VerifyOptions,
} from './signature';
export { PREVIEW_MAX_CHARS, REDACTED, redactPreview } from './redact-preview';
export {
  buildSignedRequest,
  WEBHOOK_USER_AGENT,
  type SignedRequest,
  type SignedRequestInput,
} from './signed-request';
