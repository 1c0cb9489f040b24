import http from 'node:http';
import { createDb } from '@hark/db';
import { type AppProcess, createTestAccount, startApp } from '@hark/testing';
import { scratchFolders } from '@hark/testing/jest';

// Scratch folders the tests make, removed once the file is done.
const scratch = scratchFolders();

// SIGTERM on the built API process: it keeps serving for a drain period (readiness 503,
// `Connection: close` on every answer) so requests already on their way are answered, not reset.
const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
afterAll(() => db.$disconnect());

interface Answer {
  status: number;
  connection?: string;
  body?: unknown;
  err?: string;
}

/** One request on its own connection (no keep-alive): a reset means this very request was dropped. */
function fresh(
  port: number,
  method: string,
  p: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> {
  return new Promise((resolve) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const r = http.request(
      {
        host: '127.0.0.1',
        port,
        path: p,
        method,
        agent: false,
        headers: {
          ...headers,
          ...(data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            body: JSON.parse(text) as unknown,
          }),
        );
        res.on('error', (e: NodeJS.ErrnoException) => resolve({ status: 0, err: e.code ?? e.message }));
      },
    );
    r.on('error', (e: NodeJS.ErrnoException) => resolve({ status: 0, err: e.code ?? e.message }));
    r.end(data);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('SIGTERM under load: requests arriving during the drain are answered, readiness is 503, then exit 0', async () => {
  const storage = await scratch('hark-shutdown-');
  const api: AppProcess = startApp('api', {
    PORT: '0',
    HARK_STORAGE_DIR: storage,
    HARK_REDIS_PREFIX: `hark-shutdown-${process.pid}`,
    HARK_SHUTDOWN_DRAIN_MS: '1500',
  });
  try {
    const port = (await api.waitForLog('api listening')).port as number;
    const acct = await createTestAccount(db, process.env.HARK_SECRET!, {
      toppedUp: true,
      credits: 1000,
    });
    expect((await fresh(port, 'GET', '/readyz', {})).status).toBe(200);

    // 30 creates on fresh connections over ~750 ms; SIGTERM after ~200 ms.
    const creates = Array.from({ length: 30 }, async (_, i) => {
      await sleep(i * 25);
      return fresh(port, 'POST', '/v1/transcripts', acct.auth, { url: 'https://example.com/a.wav' });
    });
    await sleep(200);
    const t0 = Date.now();
    api.kill('SIGTERM');
    await api.waitForLog('shutting down: draining', 5000);
    const ready = await fresh(port, 'GET', '/readyz', {});
    const answers = await Promise.all(creates);

    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ data: { status: 'draining' } });
    expect(answers.map((a) => a.err ?? a.status)).toEqual(answers.map(() => 201));
    // Answers sent after the signal tell keep-alive clients to reconnect (to another replica).
    expect(answers.slice(-5).map((a) => a.connection)).toEqual(answers.slice(-5).map(() => 'close'));
    expect(await db.transcript.count({ where: { accountId: acct.accountId } })).toBe(30);

    expect(await api.exited).toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    // After the drain the port is closed: a new client is refused, not left hanging.
    expect((await fresh(port, 'GET', '/healthz', {})).err).toBe('ECONNREFUSED');
  } finally {
    api.kill('SIGKILL');
  }
});

it('SIGTERM ends long-polls at once: GET ?wait= answers the transcript still processing, then a quick exit 0', async () => {
  const storage = await scratch('hark-shutdown-wait-');
  const api: AppProcess = startApp('api', {
    PORT: '0',
    HARK_STORAGE_DIR: storage,
    HARK_REDIS_PREFIX: `hark-shutdown-wait-${process.pid}`,
    HARK_SHUTDOWN_DRAIN_MS: '1500',
  });
  try {
    const port = (await api.waitForLog('api listening')).port as number;
    const acct = await createTestAccount(db, process.env.HARK_SECRET!, { toppedUp: true, credits: 1000 });
    // No worker runs: the transcript stays processing.
    const created = await fresh(port, 'POST', '/v1/transcripts', acct.auth, {
      url: 'https://example.com/a.wav',
    });
    expect(created.status).toBe(201);
    const id = (created.body as { data: { id: string } }).data.id;
    const waiting = fresh(port, 'GET', `/v1/transcripts/${id}?wait=60`, acct.auth);
    await sleep(500);

    const t0 = Date.now();
    api.kill('SIGTERM');
    await api.waitForLog('shutting down: draining', 5000);
    const answered = await waiting;
    const answeredMs = Date.now() - t0;
    // One that arrives during the drain does not wait either.
    const t1 = Date.now();
    const late = await fresh(port, 'GET', `/v1/transcripts/${id}?wait=60`, acct.auth);
    const lateMs = Date.now() - t1;

    for (const a of [answered, late]) {
      expect(a.err ?? a.status).toBe(200);
      expect(a.body).toMatchObject({ data: { id, status: 'processing' } });
      expect(a.connection).toBe('close');
    }
    expect(answeredMs).toBeLessThan(1000);
    expect(lateMs).toBeLessThan(1000);
    expect(await api.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(api.logs.filter((l) => typeof l.level === 'number' && l.level >= 50)).toEqual([]);
  } finally {
    api.kill('SIGKILL');
  }
});
