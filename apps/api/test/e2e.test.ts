import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { checkAccountInvariants, testAudio, waitFor, whisperPids } from '@hark/testing';
import { stackTest } from '@hark/testing/jest';

// The whole stack as operators run it: built API and worker processes, real Postgres, Redis,
// ffmpeg and whisper-cli (the test model: it transcribes to nothing, so text is empty).
const stack = stackTest({ name: 'e2e' });
const call = (method: string, p: string, auth: Record<string, string>, body?: Buffer | object) =>
  stack.api.call(method, p, auth, body);
/** whisper-cli processes of this stack's worker (its job folders are under the scratch folder). */
const enginePids = () => whisperPids(path.join(stack.root, 'tmp'));

describe('end to end through real processes', () => {
  it('upload -> create with speakers -> wait -> done, exact cost, diarization fields', async () => {
    const acct = await stack.newAccount({ toppedUp: true, credits: 100 });
    const audio = await readFile(testAudio.jfkWav);
    const sha = createHash('sha256').update(audio).digest('hex');
    const up = await call('POST', `/uploads?expectedBytes=${audio.length}&sha256=${sha}`, acct.auth, audio);
    expect(up.status).toBe(201);
    const created = await call('POST', '/transcripts', acct.auth, {
      uploadId: up.body.data.id,
      speakers: true,
      glossary: { hark: 'Hark' },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    let t = created.body.data;
    for (let i = 0; i < 3 && t.status === 'processing'; i++)
      t = (await call('GET', `/transcripts/${id}?wait=60`, acct.auth)).body.data;
    expect(t).toMatchObject({
      status: 'done',
      error: null,
      language: 'en',
      durationSeconds: 11,
      cost: 0.1466666667, // 11 s x 48 cents/h (speakers rate) / 3600, rounded to 10 places
      model: 'whisper-base.en',
      text: expect.any(String),
      words: expect.any(Array),
      utterances: expect.any(Array),
      diarizationSegments: expect.any(Array),
      speakerCount: expect.any(Number),
    });
    const bal = await call('GET', '/balance', acct.auth);
    expect(bal.body.data).toEqual({
      currency: 'USD',
      total: 99.8533333333,
      reserved: 0,
      available: 99.8533333333,
    });
    expect(await checkAccountInvariants(stack.db, acct.accountId)).toEqual([]);
  });

  it('cancel mid-transcription: the engine process is gone within a second, nothing charged', async () => {
    const acct = await stack.newAccount({ toppedUp: true, credits: 100 });
    const audio = await readFile(testAudio.speech60Wav);
    const up = await call('POST', '/uploads', acct.auth, audio);
    const created = await call('POST', '/transcripts', acct.auth, { uploadId: up.body.data.id });
    const id = created.body.data.id as string;
    const running = await waitFor(
      () => {
        const p = enginePids();
        return p.length > 0 ? p : null;
      },
      { timeout: 30_000, interval: 20, message: 'whisper-cli to start' },
    );
    const t0 = Date.now();
    const canceled = await call('POST', `/transcripts/${id}/cancel`, acct.auth);
    expect(canceled.status).toBe(200);
    expect(canceled.body.data).toMatchObject({ status: 'canceled', error: null, cost: 0 });
    await waitFor(() => enginePids().filter((p) => running.includes(p)).length === 0, {
      timeout: 1000,
      interval: 10,
      message: 'whisper-cli to exit',
    });
    expect(Date.now() - t0).toBeLessThan(1000);
    const bal = await call('GET', '/balance', acct.auth);
    expect(bal.body.data).toEqual({ currency: 'USD', total: 100, reserved: 0, available: 100 });
    expect(await checkAccountInvariants(stack.db, acct.accountId)).toEqual([]);
  });
});
