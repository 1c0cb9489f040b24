import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT, testAudio, testEngine, waitFor } from '@hark/testing';
import { stackTest, teardownFirst } from '@hark/testing/jest';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import request from 'supertest';
import { PAGE_CSP } from '../src/routes/try-page.routes';
import {
  type PageRecord,
  cspViolations,
  keptKey,
  launchChromium,
  prop,
  recordPage,
  textOf,
} from './fixtures/browser';

// The try page (GET /try) in Debian's chromium, headless, against built API and worker
// processes, real Postgres, Redis, ffmpeg and whisper-cli. The worker runs the real multilingual
// base model (the suite's test model transcribes to nothing), so there are words to click.
const AUDIO = testAudio.jfkWav;
/** Screenshots and downloads of the last run (gitignored). */
const OUT = path.join(REPO_ROOT, '.hark/test-output/try-page');

const stack = stackTest({
  name: 'try-page',
  env: () => ({ WHISPER_MODEL: testEngine.baseModel }),
  setupMs: 60_000,
});
let origin: string;
let browser: Browser;

beforeAll(async () => {
  await rm(OUT, { recursive: true, force: true });
  await mkdir(OUT, { recursive: true });
  origin = `http://127.0.0.1:${stack.api.port}`;
  browser = await launchChromium();
}, 60_000);
teardownFirst(stack, () => browser?.close());

describe('the page as files', () => {
  it('GET /try and GET / serve the page with no key, under a CSP that allows its own files and blob: audio only', async () => {
    const page = await fetch(`${origin}/try`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(PAGE_CSP).toContain("script-src 'self'");
    expect(PAGE_CSP).toContain('media-src blob:');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/try/try.js"></script>');
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/); // nothing from another host

    const root = await fetch(`${origin}/`);
    expect(root.status).toBe(200);
    expect(await root.text()).toBe(html);

    const script = await fetch(`${origin}/try/try.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    // An unchanged file revalidates to a 304 (supertest: fetch adds `Cache-Control: no-cache` to a
    // conditional request, which rightly bypasses the check).
    await request(origin).get('/try/try.js').set('If-None-Match', script.headers.get('etag')!).expect(304);
  });

  it('only the listed files are served; API routes keep their own headers', async () => {
    for (const p of ['/try/tsconfig.json', '/try/../package.json', '/try/nothing.js']) {
      const res = await fetch(`${origin}${p}`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
    }
    const v1 = await fetch(`${origin}/v1/balance`);
    expect(v1.status).toBe(401);
    expect(v1.headers.get('content-security-policy')).toBeNull();
  });
});

describe('the page in chromium', () => {
  let context: BrowserContext;
  let page: Page;
  let record: PageRecord;

  beforeEach(async () => {
    context = await browser.createBrowserContext({
      downloadBehavior: { policy: 'allow', downloadPath: OUT },
    });
    page = await context.newPage();
    record = await recordPage(page);
  });
  afterEach(async () => {
    expect(await cspViolations(page)).toEqual([]);
    expect(record.errors).toEqual([]);
    // The page talks to its own origin only.
    expect(
      record.requests.filter((r) => !r.url.startsWith(`${origin}/`) && !/^(blob|data):/.test(r.url)),
    ).toEqual([]);
    await context.close();
  });

  /** Fills the form and starts; resolves when the status leaves `uploading`/`processing`. */
  async function transcribe(
    key: string,
    opts: { language?: string; speakers?: string; glossary?: string } = {},
  ) {
    await page.goto(`${origin}/try`);
    await page.$eval('#api-key', (el) => ((el as unknown as { value: string }).value = '')); // a key kept from before
    await page.type('#api-key', key);
    const input = await page.$('#audio-file');
    await input!.uploadFile(AUDIO);
    if (opts.language) await page.type('#language', opts.language);
    if (opts.speakers) await page.type('#speakers', opts.speakers);
    if (opts.glossary) await page.type('#glossary', opts.glossary);
    await page.click('#start');
    await page.waitForSelector(
      ['done', 'failed', 'canceled', 'error'].map((s) => `#status.${s}`).join(', '),
      {
        timeout: 150_000,
      },
    );
    return textOf(page, '#status');
  }

  it('upload (resumed after a failed chunk) -> processing -> done; words seek the player; downloads', async () => {
    const acct = await stack.newAccount({ toppedUp: true, credits: 100 });
    // The first chunk fails on its way out, as a dropped connection would.
    await page.setRequestInterception(true);
    let aborted = 0;
    page.on('request', (req) => {
      if (req.method() === 'PUT' && aborted === 0) {
        aborted += 1;
        void req.abort('connectionreset');
      } else void req.continue();
    });

    const status = await transcribe(acct.apiKey, {
      language: 'en',
      speakers: 'auto',
      glossary: 'country => nation',
    });
    expect(await prop(page, '#error', 'hidden')).toBe(true);
    expect(status).toBe('done');
    await page.screenshot({ path: path.join(OUT, 'try-page.png'), fullPage: true });

    // The key: this tab's sessionStorage, the Authorization header of every API call, nowhere else.
    expect(await keptKey(page)).toEqual({ session: acct.apiKey, localItems: 0, cookie: '' });
    const calls = record.requests.filter((r) => r.url.startsWith(`${origin}/v1/`));
    expect(calls.every((r) => r.authorization === `Bearer ${acct.apiKey}`)).toBe(true);
    expect(record.requests.some((r) => r.url.includes(acct.apiKey))).toBe(false);

    // Resumable upload: create with the size, the aborted PUT, the server's offset, the PUT again.
    const uploadCalls = calls
      .filter((r) => r.url.includes('/v1/uploads'))
      .map((r) => `${r.method} ${new URL(r.url).pathname}`);
    const size = (await readFile(AUDIO)).length;
    expect(calls[0]!.url).toBe(`${origin}/v1/uploads?expectedBytes=${size}`);
    const uploadId = uploadCalls[1]!.split('/').pop()!;
    expect(uploadCalls).toEqual([
      'POST /v1/uploads',
      ...['PUT', 'GET', 'PUT'].map((m) => `${m} /v1/uploads/${uploadId}`),
    ]);
    expect(aborted).toBe(1);
    const upload = await stack.db.upload.findUniqueOrThrow({ where: { id: uploadId } });
    expect(Number(upload.receivedBytes)).toBe(size);
    // Long-poll, not a busy loop: every read of the transcript asks the API to wait.
    const reads = calls.filter((r) => r.method === 'GET' && /\/v1\/transcripts\/[^/]+\?/.test(r.url));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((r) => r.url.endsWith('?wait=60'))).toBe(true);

    // The transcript, with the glossary applied, in utterances coloured by speaker.
    const words = await page.$$eval('.word', (els) => els.map((e) => e.textContent));
    expect(words.join(' ')).toMatch(
      /ask not what your nation can do for you, ask what you can do for your nation/i,
    );
    const blocks = await page.$$eval('.utterance', (els) =>
      els.map((e) => [e.className, e.querySelector('.speaker')?.textContent]),
    );
    expect(blocks.length).toBeGreaterThan(0);
    for (const [cls, who] of blocks) {
      expect(cls).toMatch(/speaker-[0-7]/);
      expect(who).toMatch(/^Speaker [A-Z]$/);
    }

    // The player plays the chosen file; a click on a word moves it there, forwards and back.
    expect(await prop(page, '#player', 'src')).toMatch(/^blob:/);
    expect(await prop(page, '#player', 'duration')).toBeCloseTo(11, 0); // it loaded: the CSP lets blob: audio in
    const seekTo = async (index: number) => {
      const span = (await page.$$('.word'))[index]!;
      const start = Number(await span.evaluate((el) => el.getAttribute('data-start')));
      await span.click();
      await waitFor(
        async () => {
          const t = (await prop(page, '#player', 'currentTime')) as number;
          return t >= start - 0.01 && t < start + 1.5;
        },
        { timeout: 5000, message: `the player at ${start} s` },
      );
      return start;
    };
    const late = words.findIndex((w) => /^nation/i.test(w ?? ''));
    expect(await seekTo(late)).toBeGreaterThan(5);
    expect(await seekTo(1)).toBeLessThan(2);

    // Downloads: subtitles fetched with the key, the JSON as shown.
    const id = await textOf(page, '#transcript-id');
    for (const format of ['srt', 'vtt', 'txt', 'json'])
      await page.click(`#downloads [data-format="${format}"]`);
    const file = (ext: string) =>
      waitFor(() => readFile(path.join(OUT, `${id}.${ext}`), 'utf8').catch(() => null), {
        timeout: 10_000,
        message: `${id}.${ext}`,
      });
    expect(await file('srt')).toMatch(/^1\r?\n00:00:\d\d,\d{3} --> 00:00:\d\d,\d{3}\r?\n/);
    expect(await file('vtt')).toMatch(/^WEBVTT/);
    expect(await file('txt')).toMatch(/your nation can do for you/i);
    expect(JSON.parse(await file('json'))).toMatchObject({
      id,
      status: 'done',
      language: 'en',
      durationSeconds: 11,
    });
  }, 200_000);

  it('a processing transcript is canceled from the page: status canceled, nothing charged', async () => {
    const acct = await stack.newAccount({ toppedUp: true, credits: 100 });
    await page.goto(`${origin}/try`);
    await page.type('#api-key', acct.apiKey);
    // 60 s of speech: the base model takes several seconds on it, time enough to click.
    await (await page.$('#audio-file'))!.uploadFile(testAudio.speech60Wav);
    expect(await prop(page, '#cancel', 'hidden')).toBe(true);
    await page.click('#start');
    // While the file uploads the button is Stop (next test); once the transcript exists, Cancel.
    await page.waitForSelector('#status.processing', { timeout: 60_000 });
    await page.waitForSelector('#cancel:not([hidden])', { timeout: 10_000 });
    expect(await textOf(page, '#cancel')).toBe('Cancel');
    await page.click('#cancel');
    await page.waitForSelector('#status.canceled, #status.done, #status.failed, #status.error', {
      timeout: 60_000,
    });
    expect(await textOf(page, '#status')).toBe('canceled');
    expect(await prop(page, '#cancel', 'hidden')).toBe(true);
    expect(await prop(page, '#error', 'hidden')).toBe(true);
    expect(await prop(page, '#result', 'hidden')).toBe(true);

    const id = await textOf(page, '#transcript-id');
    const cancels = record.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/cancel'));
    expect(cancels.map((r) => [r.url, r.authorization])).toEqual([
      [`${origin}/v1/transcripts/${id}/cancel`, `Bearer ${acct.apiKey}`],
    ]);
    const shown = await request(origin)
      .get(`/v1/transcripts/${id}`)
      .set('Authorization', `Bearer ${acct.apiKey}`);
    expect(shown.body.data).toMatchObject({ id, status: 'canceled', error: null, cost: 0 });
  }, 120_000);

  it('Stop during the upload, then Start again: the same upload goes on, under the same Idempotency-Key', async () => {
    const acct = await stack.newAccount({ toppedUp: true, credits: 100 });
    // The first chunk is held on its way (never answered), as on a slow link, so Stop meets it.
    await page.setRequestInterception(true);
    let held = false;
    page.on('request', (req) => {
      if (req.method() === 'PUT' && !held) {
        held = true;
        return;
      }
      void req.continue();
    });
    await page.goto(`${origin}/try`);
    await page.type('#api-key', acct.apiKey);
    await (await page.$('#audio-file'))!.uploadFile(AUDIO);
    await page.click('#start');
    await waitFor(() => held, { message: 'the first PUT' });
    expect(await textOf(page, '#cancel')).toBe('Stop');
    await page.click('#cancel');
    await page.waitForSelector('#status.stopped', { timeout: 10_000 });
    expect(await prop(page, '#error', 'hidden')).toBe(true); // the user's own doing: a note, not an error
    expect(await textOf(page, '#upload-text')).toMatch(/^stopped: /);
    expect(await prop(page, '#cancel', 'hidden')).toBe(true);

    await page.click('#start');
    await page.waitForSelector('#status.done, #status.failed, #status.error, #status.stopped', {
      timeout: 150_000,
    });
    expect(await textOf(page, '#status')).toBe('done');
    const posts = record.requests.filter((r) => r.method === 'POST' && r.url.includes('/v1/uploads'));
    expect(posts).toHaveLength(2);
    expect(posts[0]!.idempotencyKey).toMatch(/^try-up-[0-9a-f]{32}$/);
    expect(posts[1]!.idempotencyKey).toBe(posts[0]!.idempotencyKey);
    expect(await stack.db.upload.count({ where: { accountId: acct.accountId } })).toBe(1);
    const puts = record.requests.filter((r) => r.method === 'PUT');
    expect(puts).toHaveLength(2); // the stopped one, and the whole file again (nothing was stored)
  }, 180_000);

  it('API errors are shown as the API gives them: code, message, request id, fields', async () => {
    // A wrong key: 401 on the first call, the upload.
    const responses: { url: string; requestId: string | undefined }[] = [];
    page.on('response', (res) =>
      responses.push({ url: res.url(), requestId: res.headers()['x-request-id'] }),
    );
    expect(await transcribe('tk_not-a-real-key-0123456789abcdefghij')).toBe('error');
    expect(await textOf(page, '#error-code')).toBe('invalid_api_key');
    expect(await textOf(page, '#error-message')).not.toBe('');
    const refused = responses.find((r) => r.url.startsWith(`${origin}/v1/uploads`));
    expect(await textOf(page, '#error-request-id')).toBe(refused?.requestId);
    expect(refused?.requestId).toMatch(/^req_/);

    // A real key and a speakers value the API refuses: 400 validation with its field.
    const acct = await stack.newAccount({ toppedUp: true, credits: 100 });
    expect(await transcribe(acct.apiKey, { speakers: '0-99' })).toBe('error');
    expect(await textOf(page, '#error-code')).toBe('validation');
    expect(await page.$$eval('#error-fields li', (els) => els.map((e) => e.textContent))).toEqual([
      'speakers: speakers_invalid',
    ]);
  }, 60_000);
});
