import request from 'supertest';
import { createLogger } from '../src/logger';
import { apiTest, REQUEST_ID, startTestApi } from './helpers';

/** The production logger (its redaction included), writing JSON lines into an array. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const logger = createLogger('info', 'api', {
    write(line: string) {
      raw.push(line);
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  return { logger, lines, raw };
}

const log = capturedLogger();

const api = apiTest({ logger: log.logger, account: {} });

const linesOf = (requestId: string) => log.lines.filter((l) => l.requestId === requestId);

describe('request log', () => {
  it('one line per request, carrying its request id, route, status, duration and account; never the key', async () => {
    const res = await request(api.app).get('/v1/balance').set(api.auth).expect(200);
    const id = res.headers['x-request-id'] as string;
    expect(id).toMatch(REQUEST_ID);
    expect(linesOf(id)).toEqual([
      expect.objectContaining({
        level: 30,
        app: 'api',
        msg: 'request',
        requestId: id,
        method: 'GET',
        path: '/v1/balance',
        status: 200,
        accountId: api.account.accountId,
        durationMs: expect.any(Number),
      }),
    ]);
    expect(log.raw.join('')).not.toContain(api.account.apiKey);
  });

  it('refused and unknown requests are logged too, without an account', async () => {
    const res = await request(api.app)
      .get('/v1/balance')
      .set('Authorization', 'Bearer hark_nope')
      .expect(401);
    const id = res.headers['x-request-id'] as string;
    expect(linesOf(id)).toEqual([
      expect.objectContaining({ msg: 'request', status: 401, path: '/v1/balance' }),
    ]);
    expect(linesOf(id)[0]).not.toHaveProperty('accountId');
    const missing = await request(api.app).get('/nowhere').expect(404);
    expect(linesOf(missing.headers['x-request-id'] as string)).toEqual([
      expect.objectContaining({ msg: 'request', status: 404, path: '/nowhere' }),
    ]);
  });

  it('an unexpected error is logged with the request id the client got', async () => {
    const broken = capturedLogger();
    const api2 = startTestApi(
      { databaseUrl: 'postgresql://hark@127.0.0.1:1/none' },
      process.env,
      broken.logger,
    );
    try {
      const res = await request(api2.app).get('/v1/balance').set(api.auth).expect(500);
      const id = res.headers['x-request-id'] as string;
      expect(res.body.error.requestId).toBe(id);
      const lines = broken.lines.filter((l) => l.requestId === id);
      expect(lines.map((l) => [l.level, l.msg])).toEqual([
        [50, 'unhandled error'],
        [30, 'request'],
      ]);
      expect(lines[1]).toMatchObject({ status: 500 });
      expect(broken.raw.join('')).not.toContain(api.account.apiKey);
    } finally {
      await api2.close();
    }
  });
});
