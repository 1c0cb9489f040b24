import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createS3Client } from '@hark/storage';
import { s3TestBucket, testAudio, waitFor } from '@hark/testing';
import { stackTest } from '@hark/testing/jest';

// The API and a worker as separate processes, each with its own local folders. With the S3
// driver they share nothing on disk: the upload goes up in chunks (one interrupted), the
// worker fetches it into its own scratch folder, transcribes, and the deletion erases the
// objects. With the local driver the store is the one folder they share, as before.
const MiB = 1 << 20;

/** jfk.wav (11 s) as 96 kHz stereo float: about 8 MiB, so the upload spans S3 parts. */
async function bigWav(dir: string): Promise<Buffer> {
  const out = path.join(dir, 'jfk-96k.wav');
  await promisify(execFile)('ffmpeg', [
    '-v',
    'error',
    '-i',
    testAudio.jfkWav,
    '-ar',
    '96000',
    '-ac',
    '2',
    '-c:a',
    'pcm_f32le',
    out,
  ]);
  return readFile(out);
}

describe.each(['s3', 'local'] as const)(
  'uploads through the %s driver, API and worker on separate folders',
  (driver) => {
    let bucket: Awaited<ReturnType<typeof s3TestBucket>> | null = null;
    const dirs = (root: string) => ({
      api: path.join(root, 'api'),
      worker: path.join(root, 'worker'),
      workerTmp: path.join(root, 'worker-tmp'),
    });
    const stack = stackTest({
      name: `e2e-${driver}`,
      env: async () => {
        bucket = driver === 's3' ? await s3TestBucket() : null;
        return bucket?.env ?? {};
      },
      // S3: each process its own folder. Local: the store is the folder both must share.
      apiEnv: (root) => ({ HARK_STORAGE_DIR: dirs(root).api, HARK_TMP_DIR: path.join(root, 'api-tmp') }),
      workerEnv: (root) => ({
        HARK_STORAGE_DIR: driver === 's3' ? dirs(root).worker : dirs(root).api,
        HARK_TMP_DIR: dirs(root).workerTmp,
        HARK_MODEL_CACHE_DIR: path.join(root, 'worker-models'),
      }),
    });
    beforeAll(() => {
      expect(stack.api.listening.storage).toMatch(driver === 's3' ? /^s3 \(bucket hark-test-/ : /^local /);
      expect(stack.workerReady.storage).toMatch(driver === 's3' ? /^s3 / : /^local /);
    });
    const call = (method: string, p: string, auth: Record<string, string>, body?: Buffer | object) =>
      stack.api.call(method, p, auth, body);

    /** Sends `head` of a chunk announced as `announced` bytes, then drops the connection. */
    async function interruptedPut(id: string, auth: Record<string, string>, head: Buffer, announced: number) {
      const url = new URL(`${stack.base}/uploads/${id}`);
      const req = http.request({
        host: url.hostname,
        port: url.port,
        method: 'PUT',
        path: url.pathname,
        headers: { ...auth, 'Content-Length': announced },
      });
      req.on('error', () => undefined);
      await new Promise<void>((resolve) => req.write(head, () => resolve()));
      req.destroy();
    }

    it('chunks with an interruption, transcribe, erase', async () => {
      const acct = await stack.newAccount({ toppedUp: true, credits: 100 });
      const audio = await bigWav(stack.root);
      expect(audio.length).toBeGreaterThan(7 * MiB);
      const sha = createHash('sha256').update(audio).digest('hex');
      const first = audio.subarray(0, 3 * MiB + 123);
      const up = await call('POST', `/uploads?expectedBytes=${audio.length}&sha256=${sha}`, acct.auth, first);
      expect(up.status).toBe(201);
      const id = up.body.data.id as string;

      // Most of a 4 MiB chunk (past the first 5 MiB boundary), then the connection drops.
      await interruptedPut(id, acct.auth, Buffer.alloc(3 * MiB, 7), 4 * MiB);
      const resumed = await waitFor(
        async () => {
          const r = await call(
            'PUT',
            `/uploads/${id}`,
            acct.auth,
            audio.subarray(first.length, first.length + 4 * MiB),
          );
          return r.status === 409 ? null : r;
        },
        { timeout: 35_000, interval: 100, message: 'the interrupted writer to let go' },
      );
      expect(resumed.status).toBe(200);
      expect(resumed.body.data.receivedBytes).toBe(first.length + 4 * MiB);
      let offset = first.length + 4 * MiB;
      while (offset < audio.length) {
        const r = await call('PUT', `/uploads/${id}`, acct.auth, audio.subarray(offset, offset + MiB + 17));
        expect(r.status).toBe(200);
        offset = r.body.data.receivedBytes as number;
      }
      expect((await call('GET', `/uploads/${id}`, acct.auth)).body.data).toMatchObject({
        receivedBytes: audio.length,
        expectedBytes: audio.length,
        sha256: sha,
      });

      const created = await call('POST', '/transcripts', acct.auth, { uploadId: id });
      expect(created.status).toBe(201);
      const tid = created.body.data.id as string;
      let t = created.body.data;
      for (let i = 0; i < 3 && t.status === 'processing'; i++)
        t = (await call('GET', `/transcripts/${tid}?wait=60`, acct.auth)).body.data;
      // The worker checked the declared sha256 against what it fetched (audio_mismatch otherwise).
      expect(t).toMatchObject({ status: 'done', error: null, durationSeconds: 11 });
      // The job's scratch folder goes with the job (removed just after the transcript is marked done).
      await waitFor(async () => (await readdir(dirs(stack.root).workerTmp).catch(() => [])).length === 0, {
        timeout: 5000,
        message: "the worker's scratch folder to be emptied",
      });

      if (driver === 's3') {
        // Nothing of the upload ever touched the API's or the worker's own folders.
        expect(await readdir(dirs(stack.root).api).catch(() => [])).toEqual([]);
        expect(await readdir(dirs(stack.root).worker).catch(() => [])).toEqual([]);
        const s3 = createS3Client(bucket!.settings);
        // S3Proxy's filesystem backend lists the folder under the prefix as `uploads/`.
        const names = async () =>
          ((await s3.send(new ListObjectsV2Command({ Bucket: bucket!.settings.bucket }))).Contents ?? [])
            .map((o) => o.Key)
            .filter((k) => !k?.endsWith('/'));
        expect(await names()).toEqual([`uploads/${id}`]); // sealed into one object
        expect((await call('DELETE', `/transcripts/${tid}`, acct.auth)).status).toBe(200);
        expect(await names()).toEqual([]);
        const mpus = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket!.settings.bucket }));
        expect(mpus.Uploads ?? []).toEqual([]);
        s3.destroy();
      } else {
        expect(await readdir(dirs(stack.root).api)).toEqual([id]);
        expect((await call('DELETE', `/transcripts/${tid}`, acct.auth)).status).toBe(200);
        expect(await readdir(dirs(stack.root).api)).toEqual([]);
      }
      expect((await call('GET', `/uploads/${id}`, acct.auth)).status).toBe(404);
    });
  },
);
