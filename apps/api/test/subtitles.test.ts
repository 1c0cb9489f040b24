import type { TestAccount } from '@hark/testing';
import { completeTranscript, failTranscript } from '@hark/transcripts';
import request from 'supertest';
import { apiTest, envelope } from './helpers';

const api = apiTest({ account: { toppedUp: true, credits: 1000 } });

const w = (start: number, end: number, text: string, speaker: string | null = null) => ({
  start,
  end,
  text,
  speaker,
});

const newTranscript = (body: Record<string, unknown> = {}, a: TestAccount = api.account) =>
  api.createTranscript(a, body);

/** A done transcript, finished through the worker's own transition. */
async function doneTranscript(diarized: boolean, a: TestAccount = api.account): Promise<string> {
  const id = await newTranscript(diarized ? { speakers: 2 } : {}, a);
  const words = diarized
    ? [w(0.5, 0.9, 'Hello', 'A'), w(0.9, 1.4, 'there.', 'A'), w(2, 2.4, 'Hi', 'B'), w(2.4, 3, 'Alice!', 'B')]
    : [
        w(0.5, 0.9, 'Hello', null),
        w(0.9, 1.4, 'there.', null),
        w(62.345, 62.8, 'How', null),
        w(62.8, 63.5, 'goes?', null),
      ];
  await completeTranscript(api.db, id, {
    durationSeconds: 64,
    language: 'en',
    model: 'whisper-test',
    speakerCount: diarized ? 2 : null,
    content: {
      text: diarized ? 'Hello there. Hi Alice!' : 'Hello there. How goes?',
      words,
      utterances: diarized
        ? [
            { start: 0.5, end: 1.4, text: 'Hello there.', speaker: 'A', overlap: false },
            { start: 2, end: 3, text: 'Hi Alice!', speaker: 'B', overlap: false },
          ]
        : [
            { start: 0.5, end: 1.4, text: 'Hello there.', speaker: null, overlap: false },
            { start: 62.345, end: 63.5, text: 'How goes?', speaker: null, overlap: false },
          ],
      diarizationSegments: diarized ? [] : null,
    },
  });
  return id;
}

const subtitles = (id: string, query = '', a: TestAccount = api.account) =>
  request(api.app).get(`/v1/transcripts/${id}/subtitles${query}`).set(a.auth);

describe('GET /v1/transcripts/{id}/subtitles', () => {
  it('SRT by default: body, content type, inline file name, rate-limit and request-id headers', async () => {
    const id = await doneTranscript(false);
    const res = await subtitles(id).expect(200);
    expect(res.headers['content-type']).toBe('application/x-subrip; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`inline; filename="${id}.srt"`);
    expect(res.headers['ratelimit-limit']).toBe(String(api.deps.config.otherRouteLimit.max));
    expect(res.headers['ratelimit-remaining']).toMatch(/^\d+$/);
    expect(res.headers['ratelimit-reset']).toMatch(/^\d+$/);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect(res.text).toBe(
      '1\n00:00:00,500 --> 00:00:01,400\nHello there.\n\n2\n00:01:02,345 --> 00:01:03,500\nHow goes?\n',
    );
  });

  it('VTT and txt', async () => {
    const id = await doneTranscript(false);
    const vtt = await subtitles(id, '?format=vtt').expect(200);
    expect(vtt.headers['content-type']).toBe('text/vtt; charset=utf-8');
    expect(vtt.headers['content-disposition']).toBe(`inline; filename="${id}.vtt"`);
    expect(vtt.text).toBe(
      'WEBVTT\n\n00:00:00.500 --> 00:00:01.400\nHello there.\n\n00:01:02.345 --> 00:01:03.500\nHow goes?\n',
    );
    const txt = await subtitles(id, '?format=txt').expect(200);
    expect(txt.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(txt.headers['content-disposition']).toBe(`inline; filename="${id}.txt"`);
    expect(txt.text).toBe('Hello there. How goes?\n');
  });

  it('options: line length, lines and cue duration shape the cues', async () => {
    const id = await doneTranscript(false);
    const res = await subtitles(id, '?maxLineLength=10&maxLines=1&maxCueDuration=1').expect(200);
    expect(res.text).toBe(
      '1\n00:00:00,500 --> 00:00:00,900\nHello\n\n2\n00:00:00,900 --> 00:00:01,400\nthere.\n\n' +
        '3\n00:01:02,345 --> 00:01:02,800\nHow\n\n4\n00:01:02,800 --> 00:01:03,500\ngoes?\n',
    );
  });

  it('diarized: SRT labels, VTT voice tags, txt paragraphs; speakerLabels=false drops them', async () => {
    const id = await doneTranscript(true);
    expect((await subtitles(id).expect(200)).text).toBe(
      '1\n00:00:00,500 --> 00:00:01,400\nA: Hello there.\n\n2\n00:00:02,000 --> 00:00:03,000\nB: Hi Alice!\n',
    );
    expect((await subtitles(id, '?format=vtt').expect(200)).text).toBe(
      'WEBVTT\n\n00:00:00.500 --> 00:00:01.400\n<v A>Hello there.\n\n00:00:02.000 --> 00:00:03.000\n<v B>Hi Alice!\n',
    );
    expect((await subtitles(id, '?format=txt').expect(200)).text).toBe('A: Hello there.\n\nB: Hi Alice!\n');
    expect((await subtitles(id, '?format=txt&speakerLabels=false').expect(200)).text).toBe(
      'Hello there.\n\nHi Alice!\n',
    );
    expect((await subtitles(id, '?speakerLabels=false').expect(200)).text).not.toMatch(/[AB]: /);
  });

  it('400 validation with a stable key per bad option', async () => {
    const id = await doneTranscript(false);
    const bad = await subtitles(
      id,
      '?format=docx&maxLineLength=9&maxCueDuration=31&maxLines=4&speakerLabels=yes',
    ).expect(400);
    expect(bad.body).toEqual(
      envelope('validation', false, {
        format: 'format_invalid',
        maxLineLength: 'max_line_length_invalid',
        maxCueDuration: 'max_cue_duration_invalid',
        maxLines: 'max_lines_invalid',
        speakerLabels: 'speaker_labels_invalid',
      }),
    );
    for (const [query, field, key] of [
      ['maxLineLength=201', 'maxLineLength', 'max_line_length_invalid'],
      ['maxLineLength=4.5', 'maxLineLength', 'max_line_length_invalid'],
      ['maxCueDuration=0.5', 'maxCueDuration', 'max_cue_duration_invalid'],
      ['maxCueDuration=abc', 'maxCueDuration', 'max_cue_duration_invalid'],
      ['maxLines=0', 'maxLines', 'max_lines_invalid'],
      ['format=srt&format=vtt', 'format', 'format_invalid'],
    ] as const) {
      const res = await subtitles(id, `?${query}`).expect(400);
      expect(res.body).toEqual(envelope('validation', false, { [field]: key }));
    }
    // Fractional durations are fine.
    await subtitles(id, '?maxCueDuration=2.5').expect(200);
  });

  it('409 transcript_processing (retryable, Retry-After) while processing', async () => {
    const id = await newTranscript();
    const res = await subtitles(id).expect(409);
    expect(res.body).toEqual(envelope('transcript_processing', true));
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('409 transcript_not_done for failed and canceled transcripts', async () => {
    const failed = await newTranscript();
    await failTranscript(api.db, failed, 'audio_invalid', 'The audio could not be decoded.');
    const f = await subtitles(failed).expect(409);
    expect(f.body).toEqual(envelope('transcript_not_done', false));
    expect(f.body.error.message).toBe('The transcript has no content: it failed or was canceled.');
    const canceled = await newTranscript();
    await request(api.app).post(`/v1/transcripts/${canceled}/cancel`).set(api.auth).expect(200);
    expect((await subtitles(canceled, '?format=txt').expect(409)).body).toEqual(
      envelope('transcript_not_done', false),
    );
  });

  it("404 not_found: unknown, malformed, another account's, deleted, retention-erased", async () => {
    const id = await doneTranscript(false);
    const other = await api.newAccount();
    for (const [a, target] of [
      [other, id],
      [api.account, 'tr_nope'],
      [api.account, 'x%22y'],
    ] as const) {
      expect((await subtitles(target, '', a).expect(404)).body).toEqual(envelope('not_found', false));
    }
    await request(api.app).delete(`/v1/transcripts/${id}`).set(api.auth).expect(200);
    expect((await subtitles(id).expect(404)).body).toEqual(envelope('not_found', false));
    // What the retention sweeper does to an expired transcript.
    const expired = await doneTranscript(false);
    await api.db.$transaction([
      api.db.transcriptContent.deleteMany({ where: { transcriptId: expired } }),
      api.db.transcript.update({ where: { id: expired }, data: { deletedAt: new Date() } }),
    ]);
    expect((await subtitles(expired, '?format=vtt').expect(404)).body).toEqual(envelope('not_found', false));
  });

  it('401 without a key', async () => {
    const res = await request(api.app).get('/v1/transcripts/tr_x/subtitles').expect(401);
    expect(res.body).toEqual(envelope('invalid_api_key', false));
  });
});
