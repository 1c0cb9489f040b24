import { randomBytes } from 'node:crypto';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { type S3Settings, createS3Client } from '@hark/storage';

/**
 * The S3-compatible server the test command starts (S3Proxy, scripts/lib.sh `start_s3proxy`),
 * with a fresh bucket: settings for the S3 driver, and the environment a spawned app needs to
 * use it (its credentials travel the usual AWS way, as in production).
 */
export async function s3TestBucket(): Promise<{ settings: S3Settings; env: Record<string, string> }> {
  const endpoint = process.env.HARK_TEST_S3_ENDPOINT;
  if (!endpoint || !process.env.AWS_ACCESS_KEY_ID || !process.env.AWS_SECRET_ACCESS_KEY) {
    throw new Error(
      'S3 tests need HARK_TEST_S3_ENDPOINT and AWS credentials: run them through `bash scripts/test.sh`',
    );
  }
  const settings: S3Settings = {
    bucket: `hark-test-${randomBytes(6).toString('hex')}`,
    prefix: 'uploads/',
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
  };
  const client = createS3Client(settings);
  await client.send(new CreateBucketCommand({ Bucket: settings.bucket }));
  client.destroy();
  const env = {
    HARK_STORAGE: 's3',
    HARK_S3_BUCKET: settings.bucket,
    HARK_S3_PREFIX: settings.prefix,
    HARK_S3_REGION: settings.region,
    HARK_S3_ENDPOINT: endpoint,
    HARK_S3_FORCE_PATH_STYLE: 'true',
  };
  return { settings, env };
}
