import { readFileSync, readdirSync, statSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { checkAccountInvariants, waitFor } from '@hark/testing';
import { testEnv, workerTest } from './worker-test-env';

// The quantised model the built worker makes at start and keeps (HARK_MODEL_CACHE_DIR): a copy
// that a failed write cut short must not fail every job after it.
jest.setTimeout(120_000);

const h = workerTest();

it('a kept model copy cut short (a disk that filled up) is made again at the next start; jobs are done, not failed', async () => {
  const cacheDir = path.join(path.dirname(h.config.tmpDir), 'model-cache');
  const env = { HARK_MODEL_CACHE_DIR: cacheDir, WHISPER_QUANTIZE: 'q8_0' };
  const first = await h.startProcess(env);
  expect(first.logs.find((l) => l.msg === 'engine model')).toMatchObject({ outcome: 'made' });
  first.kill('SIGTERM');
  expect(await first.exited).toBe(0);

  const copy = path.join(cacheDir, readdirSync(cacheDir).find((n) => n.endsWith('-q8_0.bin'))!);
  const whole = statSync(copy).size;
  truncateSync(copy, whole - 1000);

  const second = await h.startProcess(env);
  expect(second.logs.find((l) => l.msg === 'engine model')).toMatchObject({
    level: 40, // warn
    outcome: 'remade',
    rejected: expect.stringMatching(/bytes/),
  });
  expect(statSync(copy).size).toBe(whole);
  const { acct, id } = await h.submit(readFileSync(testEnv.jfkWav));
  await h.enqueue(id);
  await waitFor(async () => (await h.row(id)).status !== 'processing', { timeout: 60_000 });
  expect((await h.row(id)).status).toBe('done');
  expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
});
