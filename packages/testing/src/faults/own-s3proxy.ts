// A private S3Proxy (filesystem backend, a temp folder, a free port, credentials of its own) that
// a fault scenario may kill and start again: its objects stay on disk in between, as a real
// store's would. faults/run.sh provides the jar and Java (FAULTS_S3PROXY_JAR, FAULTS_JAVA).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { s3Endpoint } from '../s3';
import { waitFor } from '../wait-for';
import { freePort } from './own-redis';

export class OwnS3Proxy {
  private port = 0;
  private dir = '';
  private proc: ChildProcess | undefined;
  private readonly identity = `hark-faults-${randomBytes(4).toString('hex')}`;
  private readonly credential = randomBytes(18).toString('base64url');
  readonly bucket = `hark-faults-${randomBytes(4).toString('hex')}`;

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The AWS variables an app needs to reach it (its credentials travel the usual way). */
  get credentials(): Record<string, string> {
    return {
      AWS_ACCESS_KEY_ID: this.identity,
      AWS_SECRET_ACCESS_KEY: this.credential,
      AWS_REGION: 'us-east-1',
    };
  }

  /**
   * The environment of an app using this store through `endpoint` (itself, or a gate in front of
   * it), with short client time-outs so that a failure shows within seconds.
   */
  appEnv(endpoint = this.endpoint, timeouts = { connectTimeoutMs: 300, requestTimeoutMs: 1000 }) {
    return { ...s3Endpoint(endpoint, this.bucket, timeouts).env, ...this.credentials };
  }

  /** Starts it (again, on the same port and folder after `kill`); the bucket is made the first time. */
  async start(): Promise<void> {
    const jar = process.env.FAULTS_S3PROXY_JAR;
    if (!jar) throw new Error('FAULTS_S3PROXY_JAR is not set: run the scenarios through faults/run.sh');
    const first = !this.port;
    if (first) {
      this.port = await freePort();
      this.dir = await mkdtemp(path.join(tmpdir(), 'hark-faults-s3-'));
      writeFileSync(
        path.join(this.dir, 's3proxy.properties'),
        [
          `s3proxy.endpoint=${this.endpoint}`,
          's3proxy.authorization=aws-v2-or-v4',
          `s3proxy.identity=${this.identity}`,
          `s3proxy.credential=${this.credential}`,
          'jclouds.provider=filesystem',
          'jclouds.identity=hark',
          'jclouds.credential=hark',
          `jclouds.filesystem.basedir=${path.join(this.dir, 'data')}`,
        ].join('\n'),
        { mode: 0o600 },
      );
    }
    const p = spawn(
      process.env.FAULTS_JAVA ?? 'java',
      ['-jar', jar, '--properties', path.join(this.dir, 's3proxy.properties')],
      { stdio: 'ignore' },
    );
    this.proc = p;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    await waitFor(
      async () => {
        if (p.exitCode !== null || p.signalCode !== null) throw new Error('S3Proxy exited at start');
        return fetch(this.endpoint).then(
          () => true, // any answer (403 without credentials) means it is listening
          () => false,
        );
      },
      { timeout: 60_000, interval: 100, message: 'own S3Proxy' },
    ).catch(async (e: unknown) => {
      p.kill('SIGKILL');
      await exited;
      throw e;
    });
    if (first) {
      const client = new S3Client({
        region: 'us-east-1',
        endpoint: this.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: this.identity, secretAccessKey: this.credential },
      });
      try {
        await client.send(new CreateBucketCommand({ Bucket: this.bucket }));
      } finally {
        client.destroy();
      }
    }
  }

  /** SIGKILL, as a crash would stop it; resolves once the process has exited. */
  async kill(): Promise<void> {
    const p = this.proc;
    if (!p) return;
    const exited = new Promise((r) => p.once('exit', r));
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await exited;
    this.proc = undefined;
  }

  /** Kills it and removes its folder. */
  async dispose(): Promise<void> {
    await this.kill();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}
