import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createDb } from '@hark/db';
import { ResumableSha256 } from '@hark/storage';
import { whileUploadLocked } from './helpers';
import { createTestAccount, startApiProcess, waitFor } from '@hark/testing';
import { scratchFolders } from '@hark/testing/jest';

// Scratch folders the tests make, removed once the file is done.
const scratch = scratchFolders();

const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
afterAll(() => db.$disconnect());

type UploadData = { id: string; receivedBytes: number };

describe('uploads survive a killed API process', () => {
  it('SIGKILL mid-chunk: state stays consistent, the lock frees itself, the upload resumes', async () => {
    const storage = await scratch('hark-crash-');
    const env = {
      PORT: '0',
      HARK_STORAGE_DIR: storage,
      HARK_UPLOAD_LOCK_TTL_MS: '2000',
      HARK_REDIS_PREFIX: `hark-crash-${process.pid}`,
    };
    const acct = await createTestAccount(db, process.env.HARK_SECRET!);
    let api = await startApiProcess(env);
    // The bundled process loads the native hasher (a fallback to the thread would be silent).
    expect(api.listening.uploadHasher).toMatch(/^native/);

    const head = randomBytes(300_000);
    const created = await api.call<UploadData>('POST', '/uploads', acct.auth, head);
    expect(created.status).toBe(201);
    const id = created.body.data.id;

    // Start a 4 MiB chunk, send half of it, then kill the API process.
    const req = http.request({
      host: '127.0.0.1',
      port: api.port,
      method: 'PUT',
      path: `/v1/uploads/${id}`,
      headers: { ...acct.auth, 'Content-Length': 4 * 1024 * 1024 },
    });
    req.on('error', () => undefined);
    req.write(randomBytes(2 * 1024 * 1024));
    await waitFor(async () => (await readFile(path.join(storage, id))).length > head.length, {
      message: 'partial chunk reached the disk',
    });
    api.proc.kill('SIGKILL');
    await api.proc.exited;
    req.destroy();

    // The replica that takes over hashes on the wasm thread: the state the native hasher saved
    // for the first bytes must carry on there (a mixed fleet, or a platform without koffi).
    api = await startApiProcess({ ...env, HARK_UPLOAD_HASHER: 'thread' });
    expect(api.listening.uploadHasher).toMatch(/^thread/);
    try {
      const after = await api.call<UploadData>('GET', `/uploads/${id}`, acct.auth);
      expect(after.body.data.receivedBytes).toBe(head.length);
      // The dead writer's lock expires (TTL 2 s here, 30 s by default); then the upload resumes.
      const tail = randomBytes(1000);
      const resumed = await whileUploadLocked(
        () => api.call<UploadData>('PUT', `/uploads/${id}`, acct.auth, tail),
        5000,
      );
      expect(resumed.body.data.receivedBytes).toBe(head.length + tail.length);
      const stored = await readFile(path.join(storage, id));
      const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      expect(sha(stored)).toBe(sha(Buffer.concat([head, tail])));
      const row = await db.upload.findUniqueOrThrow({ where: { id } });
      expect(await (await ResumableSha256.start(row.hashState)).digestHex()).toBe(sha(stored));
    } finally {
      api.proc.kill('SIGTERM');
      await api.proc.exited;
    }
  });
});
