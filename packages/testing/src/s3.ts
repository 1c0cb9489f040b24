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

/** S3 settings and app environment for `endpoint`, with the client's time-outs given. */
export function s3Endpoint(
  endpoint: string,
  bucket: string,
  timeouts: { connectTimeoutMs: number; requestTimeoutMs: number },
): { settings: S3Settings; env: Record<string, string> } {
  const settings: S3Settings = {
    bucket,
    prefix: 'uploads/',
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    ...timeouts,
  };
  return {
    settings,
    env: {
      HARK_STORAGE: 's3',
      HARK_S3_BUCKET: bucket,
      HARK_S3_PREFIX: settings.prefix,
      HARK_S3_REGION: settings.region,
      HARK_S3_ENDPOINT: endpoint,
      HARK_S3_FORCE_PATH_STYLE: 'true',
      HARK_S3_CONNECT_TIMEOUT_MS: String(timeouts.connectTimeoutMs),
      HARK_S3_REQUEST_TIMEOUT_MS: String(timeouts.requestTimeoutMs),
    },
  };
}

/**
 * A TCP gate in front of an object store: in `pass` it relays every byte both ways; in `hang` it
 * still accepts connections and reads what it is sent, but relays nothing and answers nothing,
 * on new connections and on those already open (the SDK keeps its sockets alive): a wedged
 * proxy, a load balancer whose backends are gone. With no upstream it always hangs.
 */
export class S3Gate {
  mode: 'pass' | 'hang';
  /** Connections it accepted so far. */
  connections = 0;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly endpoint: string,
    upstream: { host: string; port: number } | null,
  ) {
    this.mode = upstream ? 'pass' : 'hang';
  }

  static async open(upstream: string | null): Promise<S3Gate> {
    const to = upstream ? new URL(upstream) : null;
    const target = to ? { host: to.hostname, port: Number(to.port) } : null;
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const gate = new S3Gate(server, `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, target);
    server.on('connection', (client: net.Socket) => gate.accept(client, target));
    return gate;
  }

  private accept(client: net.Socket, target: { host: string; port: number } | null): void {
    this.connections++;
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => undefined);
    if (!target || this.mode === 'hang') {
      client.resume();
      return;
    }
    const store = net.connect(target);
    this.sockets.add(store);
    store.on('close', () => (this.sockets.delete(store), client.destroy()));
    store.on('error', () => client.destroy());
    client.on('close', () => store.destroy());
    client.on('data', (d: Buffer) => void (this.mode === 'pass' && store.write(d)));
    store.on('data', (d: Buffer) => void (this.mode === 'pass' && client.write(d)));
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

/**
 * An "object store" that accepts every connection, reads what it is sent and never answers
 * (`S3Gate` with no upstream): the S3 settings and app environment that point at it, with short
 * time-outs (`requestTimeoutMs`, default 300 ms: a call then fails after the SDK's three
 * attempts, about a second). `connections` counts the connections it took.
 */
export async function silentS3Store(requestTimeoutMs = 300): Promise<{
  settings: S3Settings;
  env: Record<string, string>;
  readonly connections: number;
  close(): Promise<void>;
}> {
  const gate = await S3Gate.open(null);
  return {
    ...s3Endpoint(gate.endpoint, 'hark-silent', { connectTimeoutMs: 200, requestTimeoutMs }),
    get connections() {
      return gate.connections;
    },
    close: () => gate.close(),
  };
}
