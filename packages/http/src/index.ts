export { isPublicAddress } from './public-address';
export {
  checkPublicUrl,
  checkUrlShape,
  type CheckPublicUrlOptions,
  type UrlCheckResult,
  type UrlRefusal,
} from './check-public-url';
export { createGuardedClient, type GuardedClient, type GuardedClientOptions } from './guarded-client';
export { AddressBlockedError, assertAllowedTarget, createGuardedLookup, type AddressPolicy } from './guard';
export { classifyFailure, describeFailure, type FailureKind } from './failure';
export { downloadToFile, DownloadError, type DownloadErrorCode, type DownloadOptions } from './download';
export { postJson, RESPONSE_READ_LIMIT, type PostJsonOptions, type PostJsonResult } from './post-json';
export { withTimeout } from './with-timeout';
