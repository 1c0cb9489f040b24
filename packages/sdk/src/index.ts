export {
  Hark,
  MAX_CHUNK_BYTES,
  type HarkOptions,
  type UploadOptions,
  type UploadProgress,
  type WaitOptions,
} from './client';
export {
  HarkApiError,
  HarkError,
  HarkNetworkError,
  HarkTimeoutError,
  HarkUploadError,
  isHarkApiError,
  type ApiErrorCode,
} from './errors';
export {
  Transcripts,
  Uploads,
  WebhookDeliveries,
  type CreateTranscriptOptions,
  type CreateUploadParams,
  type GetTranscriptOptions,
} from './resources';
export { SIGNATURE_HEADER, verifySignature, type VerifySignatureOptions } from './signature';
export { type CallOptions, type Fetch, type RetryOptions, type Sleep } from './transport';
export type * from './types';
export { type UploadSource } from './upload-source';
