import type { BlobStore } from './blob-store';
import { LocalBlobStore } from './local-blob-store';
import { S3BlobStore } from './s3-blob-store';
import { type S3Settings, createS3Client } from './s3-client';

/** `HARK_STORAGE` as parsed by @hark/core's `storageConfig`. */
export type StorageChoice = { driver: 'local' } | ({ driver: 's3' } & S3Settings);

/** The store every process of a deployment uses; chosen once at start-up. */
export function createBlobStore(config: { storage: StorageChoice; storageDir: string }): BlobStore {
  const s = config.storage;
  if (s.driver === 'local') return new LocalBlobStore(config.storageDir);
  return new S3BlobStore(createS3Client(s), s.bucket, s.prefix);
}

/** For the startup log: the driver and where, never a credential. */
export function describeStorage(config: { storage: StorageChoice; storageDir: string }): string {
  const s = config.storage;
  return s.driver === 'local'
    ? `local (${config.storageDir})`
    : `s3 (bucket ${s.bucket}, prefix "${s.prefix}")`;
}
