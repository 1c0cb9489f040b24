import { randomBytes } from 'node:crypto';
import net from 'node:net';
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

/**
 * An "object store" that accepts every connection, reads what it is sent and never answers (a
 * wedged proxy, a load balancer whose backends are gone): the S3 settings and app environment
 * that point at it, with short time-outs (`requestTimeoutMs`, default 300 ms: a call then fails
 * after the SDK's three attempts, about a second). `connections` counts the connections it took.
 */
export async function silentS3Store(requestTimeoutMs = 300): Promise<{
  settings: S3Settings;
  env: Record<string, string>;
  readonly connections: number;
  close(): Promise<void>;
}> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((s) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const settings: S3Settings = {
    bucket: 'hark-silent',
    prefix: 'uploads/',
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    connectTimeoutMs: 200,
    requestTimeoutMs,
  };
  return {
    settings,
    env: {
      HARK_STORAGE: 's3',
      HARK_S3_BUCKET: settings.bucket,
      HARK_S3_PREFIX: settings.prefix,
      HARK_S3_REGION: settings.region,
      HARK_S3_ENDPOINT: endpoint,
      HARK_S3_FORCE_PATH_STYLE: 'true',
      HARK_S3_CONNECT_TIMEOUT_MS: '200',
      HARK_S3_REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
    },
    get connections() {
      return connections;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
