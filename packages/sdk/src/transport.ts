import { HarkApiError, HarkNetworkError } from './errors';
import { KeyScrubber } from './scrub-key';

/** The `fetch` the client calls; the global one by default. */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;
/** Waits `ms`; rejects with `signal.reason` when aborted. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RetryOptions {
  /** Retries after the first attempt of a request that may be repeated. Default 3. */
  maxRetries?: number;
  /** First backoff step, in ms; each retry doubles it, with jitter. Default 500. */
  baseDelayMs?: number;
  /** Largest backoff step, in ms. Default 20 000. */
  maxDelayMs?: number;
  /** Longest `Retry-After` honoured, in ms; a longer one is not waited for. Default 60 000. */
  maxRetryAfterMs?: number;
}

export interface TransportOptions extends RetryOptions {
  apiKey: string;
  baseUrl: string;
  fetch?: Fetch;
  sleep?: Sleep;
  /** Source of jitter in [0, 1). Default `Math.random`. */
  random?: () => number;
  /** Per-request time-out in ms (a `wait` request gets its wait on top). Default 60 000. */
  timeoutMs?: number;
}

/** Per-call options accepted by every method. */
export interface CallOptions {
  /** Aborts the call (and its retries); the promise rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Overrides the client's per-request time-out, in ms. */
  timeoutMs?: number;
}

/**
 * When a failed request is sent again.
 * - `safe`: repeating cannot do harm (reads, creates keyed by Idempotency-Key): network errors,
 *   408, 429, 5xx and any envelope with `retryable: true`.
 * - `refused`: only 429, which the service answers before doing anything.
 * - `never`: the caller handles failures (upload chunks resume from the stored length instead).
 */
export type RetryPolicy = 'safe' | 'refused' | 'never';

export interface ApiRequest<T> extends CallOptions {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path below the base URL, starting with `/v1/`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  bytes?: Uint8Array;
  headers?: Record<string, string>;
  retry: RetryPolicy;
  /** Added to the time-out (a `wait` the service may hold the answer for). */
  extraTimeoutMs?: number;
  /** `text` returns the body as is (subtitles); `json` returns its `data`. Default `json`. */
  responseType?: 'json' | 'text';
  /**
   * Called when the final error follows an attempt that may have taken effect (no answer, unless
   * it failed before sending, or 5xx): a repeated cancel or delete then meets its own earlier
   * success. Returns the result to use instead, or undefined to throw.
   */
  recover?: (err: HarkApiError) => Promise<T | undefined>;
}

export const SDK_VERSION = '1.0.0';

export const defaultSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    // An abort rejects with whatever the caller aborted with, as fetch does.
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** `Retry-After` as seconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

function isAbort(signal: AbortSignal | undefined): signal is AbortSignal {
  return signal?.aborted === true;
}

/** HTTP with the API's conventions: bearer auth, `{data}` / `{error}` bodies, retries. */
export class Transport {
  readonly maxRetries: number;
  private readonly base: string;
  private readonly fetchImpl: Fetch;
  readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxRetryAfterMs: number;
  /** Each request's time-out unless the call sets its own. */
  readonly timeoutMs: number;

  /** Private (#): not an enumerable property, so logging or serialising a client never shows it. */
  readonly #apiKey: string;
  /**
   * The last line of defence for the key: the constructor refuses one fetch would choke on, but a
   * custom fetch (a proxy's, say) may still quote the Authorization header in its error.
   */
  readonly #scrubber: KeyScrubber;

  constructor(opts: TransportOptions) {
    if (typeof opts.apiKey !== 'string' || opts.apiKey === '') throw new TypeError('apiKey is required');
    // Visible ASCII only: fetch refuses anything else in a header with an error that quotes the
    // whole value ("Bearer <key>"). The message here never repeats the key.
    if (!/^[\x21-\x7e]+$/.test(opts.apiKey)) {
      throw new TypeError(
        'apiKey has a space, a line break or a character a header cannot carry: copy the key again',
      );
    }
    this.#apiKey = opts.apiKey;
    this.#scrubber = new KeyScrubber(opts.apiKey);
    if (typeof opts.baseUrl !== 'string' || !/^https?:\/\//.test(opts.baseUrl)) {
      throw new TypeError('baseUrl must be the http(s) address of the service, e.g. http://127.0.0.1:3000');
    }
    this.base = opts.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = opts.fetch ?? ((input, init) => fetch(input, init));
    this.sleep = opts.sleep ?? defaultSleep;
    this.random = opts.random ?? Math.random;
    this.maxRetries = opts.maxRetries ?? 3;
    this.baseDelayMs = opts.baseDelayMs ?? 500;
    this.maxDelayMs = opts.maxDelayMs ?? 20_000;
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? 60_000;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
  }

  /**
   * Delay before retry number `retry` (1-based): `Retry-After` when the service sent one, else
   * exponential backoff with equal jitter (half the step fixed, half random). Null when the
   * service asks for longer than `maxRetryAfterMs`.
   */
  delayBeforeRetry(retry: number, retryAfterSeconds: number | null): number | null {
    if (retryAfterSeconds !== null) {
      const ms = retryAfterSeconds * 1000;
      return ms > this.maxRetryAfterMs ? null : ms;
    }
    const step = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (retry - 1));
    return Math.round(step / 2 + (this.random() * step) / 2);
  }

  /** Whether `err` may be retried under `policy`. */
  static shouldRetry(policy: RetryPolicy, err: unknown): boolean {
    if (policy === 'never') return false;
    if (err instanceof HarkNetworkError) return policy === 'safe';
    if (!(err instanceof HarkApiError)) return false;
    if (err.status === 429) return true;
    return policy === 'safe' && (err.retryable || err.status >= 500);
  }

  async request<T>(req: ApiRequest<T>): Promise<T> {
    let ambiguous = false;
    for (let attempt = 1; ; attempt++) {
      req.signal?.throwIfAborted();
      try {
        return await this.once<T>(req, attempt);
      } catch (err) {
        if (isAbort(req.signal)) throw req.signal.reason;
        const retry = attempt <= this.maxRetries && Transport.shouldRetry(req.retry, err);
        const delay = retry ? this.delayBeforeRetry(attempt, retryAfterOf(err)) : null;
        if (delay === null) {
          if (ambiguous && req.recover && err instanceof HarkApiError) {
            const recovered = await req.recover(err);
            if (recovered !== undefined) return recovered;
          }
          throw err;
        }
        if (mayHaveTakenEffect(err)) ambiguous = true;
        await this.sleep(delay, req.signal);
      }
    }
  }

  private url(path: string, query: ApiRequest<unknown>['query']): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${this.base}${path}${qs ? `?${qs}` : ''}`;
  }

  private async once<T>(req: ApiRequest<T>, attempt: number): Promise<T> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.#apiKey}`,
      Accept: req.responseType === 'text' ? '*/*' : 'application/json',
      'User-Agent': `hark-sdk-node/${SDK_VERSION}`,
      ...req.headers,
    };
    let body: string | Uint8Array | undefined;
    if (req.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(req.json);
    } else if (req.bytes !== undefined) {
      headers['Content-Type'] = 'application/octet-stream';
      body = req.bytes;
    }

    const timeout = new AbortController();
    const onAbort = () => timeout.abort(req.signal?.reason);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        timeout.abort(new Error('request timed out'));
      },
      (req.timeoutMs ?? this.timeoutMs) + (req.extraTimeoutMs ?? 0),
    );
    const what = `${req.method} ${req.path}`;
    try {
      let res: Response;
      let text: string;
      try {
        res = await this.fetchImpl(this.url(req.path, req.query), {
          method: req.method,
          headers,
          ...(body !== undefined ? { body } : {}),
          signal: timeout.signal,
          redirect: 'error',
        });
        text = await res.text();
      } catch (cause) {
        if (isAbort(req.signal)) throw req.signal.reason;
        const reason = timedOut ? 'timed out' : cause instanceof Error ? cause.message : String(cause);
        throw new HarkNetworkError(`${what}: ${this.#scrubber.text(reason)}`, timedOut, attempt, {
          cause: this.#scrubber.error(cause),
        });
      }
      const requestId = res.headers.get('x-request-id');
      if (!res.ok) throw apiError(res, text, requestId, attempt);
      if (req.responseType === 'text') return text as T;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (typeof parsed !== 'object' || parsed === null || !('data' in parsed)) {
        throw new HarkApiError({
          code: 'invalid_response',
          message: `${what}: the answer (HTTP ${res.status}) was not a JSON {data} body`,
          status: res.status,
          retryable: false,
          requestId,
          attempts: attempt,
        });
      }
      return (parsed as { data: T }).data;
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    }
  }
}

/**
 * Codes of failures that happen before a byte of the request is sent (the connection or the
 * address could not be had, or the request could not be built), so it cannot have taken effect.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EAI_FAIL',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_INVALID_URL',
  'ERR_INVALID_CHAR',
  'ERR_INVALID_HTTP_TOKEN',
  'UND_ERR_INVALID_ARG',
]);

/** fetch's own refusal of a header it cannot carry, thrown before connecting (it has no code). */
const INVALID_HEADER = /invalid header|ByteString/i;

/**
 * Whether `cause` (fetch's error, with the system error as its `cause`, or an AggregateError of
 * one per address tried) provably happened before anything was sent.
 */
function failedBeforeSending(cause: unknown, depth = 0): boolean {
  if (!(cause instanceof Error) || depth > 4) return false;
  const code = (cause as { code?: unknown }).code;
  if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true;
  if (cause instanceof AggregateError && cause.errors.length > 0)
    return cause.errors.every((e) => failedBeforeSending(e, depth + 1));
  if (cause instanceof TypeError && cause.cause === undefined && INVALID_HEADER.test(cause.message))
    return true;
  return failedBeforeSending(cause.cause, depth + 1);
}

/**
 * Whether a failed attempt may still have been carried out: no answer (unless it never left), or
 * a 5xx. A repeated cancel or delete may then meet its own earlier success.
 */
function mayHaveTakenEffect(err: unknown): boolean {
  if (err instanceof HarkNetworkError) return err.timedOut || !failedBeforeSending(err.cause);
  return err instanceof HarkApiError && err.status >= 500;
}

function retryAfterOf(err: unknown): number | null {
  return err instanceof HarkApiError ? err.retryAfterSeconds : null;
}

interface Envelope {
  error: {
    code: string;
    message: string;
    retryable: boolean;
    requestId?: string;
    fields?: Record<string, string>;
  };
}

function isEnvelope(v: unknown): v is Envelope {
  const e = (v as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  return typeof e === 'object' && e !== null && typeof e.code === 'string' && typeof e.message === 'string';
}

function apiError(res: Response, text: string, requestId: string | null, attempts: number): HarkApiError {
  const retryAfterSeconds = parseRetryAfter(res.headers.get('retry-after'));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (isEnvelope(parsed)) {
    const e = parsed.error;
    return new HarkApiError({
      code: e.code,
      message: e.message,
      status: res.status,
      retryable: e.retryable === true,
      requestId: e.requestId ?? requestId,
      ...(e.fields ? { fields: e.fields } : {}),
      retryAfterSeconds,
      attempts,
    });
  }
  return new HarkApiError({
    code: 'http_error',
    message: `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`,
    status: res.status,
    // 408: the request did not arrive in time (a proxy's own answer, say): sending it again can work.
    retryable: res.status === 408 || res.status === 429 || res.status >= 500,
    requestId,
    retryAfterSeconds,
    attempts,
  });
}
