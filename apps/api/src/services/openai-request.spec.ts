import {
  OpenAiError,
  afterTranscriptCreated,
  toOpenAiError,
  transcriptFailure,
  transcriptTimedOut,
} from './openai-errors';
import { HarkError } from '@hark/core';
import { PROMPT_FIELD_MAX_CHARS, PROMPT_MAX_CHARS, parseAudioRequest } from './openai-request';

const MODELS = ['whisper-1', 'whisper-base'];

function refusal(run: () => unknown): OpenAiError {
  try {
    run();
  } catch (e) {
    if (e instanceof OpenAiError) return e;
    throw e;
  }
  throw new Error('not refused');
}

describe('parseAudioRequest', () => {
  it('defaults: json, no granularities, engine defaults, an empty create body', () => {
    expect(parseAudioRequest({ model: 'whisper-1' }, true, MODELS)).toEqual({
      responseFormat: 'json',
      granularities: [],
      temperature: null,
      prompt: null,
      createBody: {},
    });
  });

  it('reads every OpenAI field and the Hark extensions', () => {
    const req = parseAudioRequest(
      {
        model: 'whisper-base',
        language: 'de',
        prompt: 'Hark, Whisper.',
        response_format: 'verbose_json',
        temperature: '0.2',
        timestamp_granularities: ['word', 'segment', 'word'],
        stream: 'false',
        speakers: '2',
        glossary: '{"hark":"Hark"}',
        chunking_strategy: 'auto',
      },
      true,
      MODELS,
    );
    expect(req).toEqual({
      responseFormat: 'verbose_json',
      granularities: ['word', 'segment'],
      temperature: 0.2,
      prompt: 'Hark, Whisper.',
      createBody: { language: 'de', speakers: 2, glossary: { hark: 'Hark' } },
    });
  });

  it.each([
    [{ model: 'gpt-4o-transcribe' }, true, 'model', 'model_not_found'],
    [{}, true, 'model', 'missing_required_parameter'],
    [{ model: 'whisper-1' }, false, 'file', 'missing_required_parameter'],
    [{ model: 'whisper-1', response_format: 'diarized_json' }, true, 'response_format', 'invalid_value'],
    [{ model: 'whisper-1', temperature: '1.5' }, true, 'temperature', 'invalid_value'],
    [{ model: 'whisper-1', temperature: 'hot' }, true, 'temperature', 'invalid_value'],
    [
      { model: 'whisper-1', timestamp_granularities: ['char'] },
      true,
      'timestamp_granularities',
      'invalid_value',
    ],
    [{ model: 'whisper-1', language: 'xx' }, true, 'language', 'invalid_language'],
    [{ model: 'whisper-1', stream: 'true' }, true, 'stream', 'unsupported_value'],
    [{ model: 'whisper-1', temperature: 'NaN' }, true, 'temperature', 'invalid_value'],
    [{ model: 'whisper-1', temperature: 'Infinity' }, true, 'temperature', 'invalid_value'],
    [{ model: 'whisper-1', temperature: '0x1' }, true, 'temperature', 'invalid_value'],
    [{ model: 'whisper-1', temperature: ' ' }, true, 'temperature', 'invalid_value'],
    [{ model: 'whisper-1', temperature: '.' }, true, 'temperature', 'invalid_value'],
    [{ model: 'whisper-1', temperature: '1e' }, true, 'temperature', 'invalid_value'],
    [{ model: 'whisper-1', temperature: '1.0000001' }, true, 'temperature', 'invalid_value'],
    [{ model: 'whisper-1', temperature: '2e-0' }, true, 'temperature', 'invalid_value'],
    [{ model: 'whisper-1', temperature: '-0.1' }, true, 'temperature', 'invalid_value'],
    [{ model: 'whisper-1', stream: 'True' }, true, 'stream', 'unsupported_value'],
    [{ model: 'whisper-1', stream: '1' }, true, 'stream', 'unsupported_value'],
    [{ model: 'whisper-1', stream: 'yes' }, true, 'stream', 'invalid_value'],
    [{ model: 'whisper-1', stream: '' }, true, 'stream', 'invalid_value'],
    [{ model: 'whisper-1', prompt: 'p'.repeat(PROMPT_FIELD_MAX_CHARS + 1) }, true, 'prompt', 'invalid_value'],
    [{ model: 'whisper-1', prompt: 'a\u0000b' }, true, 'prompt', 'invalid_value'],
  ])('%j (file: %s) is a 400 on %s', (fields, hasFile, param, code) => {
    const e = refusal(() => parseAudioRequest(fields, hasFile, MODELS));
    expect(e.body()).toEqual({
      error: { message: expect.any(String), type: 'invalid_request_error', param, code },
    });
    expect(e.status).toBe(400);
  });

  it.each([
    ['0', 0],
    ['1', 1],
    ['0.', 0],
    ['.5', 0.5],
    ['1.0', 1],
    ['1e-05', 0.00001], // Python's str(0.00001)
    ['1e-7', 1e-7], // Node's String(0.0000001)
    ['2.5E-1', 0.25],
    ['1e+0', 1],
    ['-0', 0],
    [' 0.2 ', 0.2],
  ])('temperature %j is %s', (temperature, expected) => {
    expect(parseAudioRequest({ model: 'whisper-1', temperature }, true, MODELS).temperature).toBe(expected);
  });

  it.each(['false', 'False', 'FALSE', '0', ' false '])('stream %j is not streaming', (stream) => {
    expect(parseAudioRequest({ model: 'whisper-1', stream }, true, MODELS).responseFormat).toBe('json');
  });

  it('a long prompt keeps its last words, up to PROMPT_MAX_CHARS (the previous chunk as context)', () => {
    const words = Array.from({ length: 1000 }, (_, i) => `word${i}`);
    const prompt = parseAudioRequest({ model: 'whisper-1', prompt: words.join(' ') }, true, MODELS).prompt!;
    expect(prompt.length).toBeLessThanOrEqual(PROMPT_MAX_CHARS);
    expect(prompt.length).toBeGreaterThan(PROMPT_MAX_CHARS - 20);
    expect(prompt.endsWith(' word999')).toBe(true);
    // Cut between words, never inside one.
    expect(words.join(' ').endsWith(prompt)).toBe(true);
    expect(prompt.split(' ')[0]).toMatch(/^word\d+$/);
    expect(words).toContain(prompt.split(' ')[0]);
    const at = parseAudioRequest({ model: 'whisper-1', prompt: 'p'.repeat(PROMPT_MAX_CHARS) }, true, MODELS);
    expect(at.prompt).toBe('p'.repeat(PROMPT_MAX_CHARS));
  });

  it('a long prompt without spaces keeps its last characters, never half a surrogate pair', () => {
    const longest = parseAudioRequest(
      { model: 'whisper-1', prompt: 'x'.repeat(PROMPT_FIELD_MAX_CHARS) },
      true,
      MODELS,
    );
    expect(longest.prompt).toBe('x'.repeat(PROMPT_MAX_CHARS));
    const emoji = parseAudioRequest(
      { model: 'whisper-1', prompt: `${'\u{1F600}'.repeat(3000)}z` },
      true,
      MODELS,
    );
    expect(emoji.prompt).toBe(`${'\u{1F600}'.repeat(PROMPT_MAX_CHARS / 2 - 1)}z`);
  });

  it('names the models served when the model is unknown', () => {
    const e = refusal(() => parseAudioRequest({ model: 'nope' }, true, MODELS));
    expect(e.message).toBe(
      "The model 'nope' does not exist or is not served here; use 'whisper-1' or 'whisper-base'.",
    );
  });
});

describe('toOpenAiError', () => {
  it('maps Hark errors to the statuses and codes the OpenAI clients raise on', () => {
    const shape = (e: OpenAiError) => [e.status, e.type, e.code, e.headers['x-should-retry'] ?? null];
    expect(shape(toOpenAiError(new HarkError('invalid_api_key')))).toEqual([
      401,
      'invalid_request_error',
      'invalid_api_key',
      null,
    ]);
    expect(shape(toOpenAiError(new HarkError('insufficient_balance')))).toEqual([
      429,
      'insufficient_quota',
      'insufficient_quota',
      'false',
    ]);
    expect(
      shape(toOpenAiError(new HarkError('rate_limited', undefined, undefined, { 'Retry-After': '3' }))),
    ).toEqual([429, 'requests', 'rate_limit_exceeded', null]);
    expect(
      toOpenAiError(new HarkError('rate_limited', undefined, undefined, { 'Retry-After': '3' })).headers[
        'Retry-After'
      ],
    ).toBe('3');
    expect(shape(toOpenAiError(new HarkError('concurrency_limit')))).toEqual([
      429,
      'requests',
      'concurrency_limit_exceeded',
      null,
    ]);
    expect(shape(toOpenAiError(new HarkError('payload_too_large')))).toEqual([
      413,
      'invalid_request_error',
      'file_too_large',
      'false',
    ]);
    expect(shape(toOpenAiError(new Error('boom')))).toEqual([500, 'server_error', 'internal', null]);
    // Codes without a mapping of their own keep their status and code.
    expect(shape(toOpenAiError(new HarkError('upload_too_large')))).toEqual([
      413,
      'invalid_request_error',
      'upload_too_large',
      'false',
    ]);
    expect(shape(toOpenAiError(new HarkError('upload_busy')))).toEqual([
      409,
      'invalid_request_error',
      'upload_busy',
      null,
    ]);
  });

  it('names the invalid extension field as the form parameter', () => {
    const e = toOpenAiError(HarkError.validation({ glossary: 'glossary_invalid' }));
    expect(e.body().error).toEqual({
      message: "Invalid value for 'glossary' (glossary_invalid).",
      type: 'invalid_request_error',
      param: 'glossary',
      code: 'glossary_invalid',
    });
  });

  it("failed transcripts: the caller's problems are 400, engine failures 500 without client retries", () => {
    expect(transcriptFailure('audio_invalid', 'x', 'tr_1').status).toBe(400);
    expect(transcriptFailure('audio_too_long', 'too long', 'tr_1').status).toBe(400);
    expect(transcriptFailure('insufficient_balance', null, 'tr_1').status).toBe(429);
    const engine = transcriptFailure('engine_failed', 'crashed', 'tr_1');
    expect([engine.status, engine.headers['x-should-retry']]).toEqual([500, 'false']);
  });

  it('an unexpected error once the transcript exists: 500 naming it, not retried (a retry is a second transcript)', () => {
    const boom = new Error('connection reset');
    const e = afterTranscriptCreated(boom, 'tr_abc');
    expect([e.status, e.type, e.code, e.headers]).toEqual([
      500,
      'server_error',
      'internal',
      { 'x-should-retry': 'false' },
    ]);
    expect(e.message).toContain('GET /v1/transcripts/tr_abc');
    expect(e.cause).toBe(boom);
    // Refusals keep their own status and headers.
    const canceled = new OpenAiError(409, 'x', 'invalid_request_error', null, 'transcription_canceled');
    expect(afterTranscriptCreated(canceled, 'tr_abc')).toBe(canceled);
    expect(afterTranscriptCreated(new HarkError('rate_limited'), 'tr_abc').status).toBe(429);
  });

  it('a timeout names the transcript and where to fetch it', () => {
    const e = transcriptTimedOut('tr_abc', 600);
    expect(e.status).toBe(504);
    expect(e.message).toContain('tr_abc');
    expect(e.message).toContain('GET /v1/transcripts/tr_abc');
    expect(e.headers).toEqual({ 'x-should-retry': 'false', Location: '/v1/transcripts/tr_abc' });
  });
});
