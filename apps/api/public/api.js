// @ts-check
// The page's client of the Hark API (same origin). The key travels only in the Authorization
// header; it is never put in a URL, a cookie or localStorage.

/** An API error as the API gives it (the envelope), or a network failure (`code` `network`). */
export class ApiError extends Error {
  /**
   * @param {number} status HTTP status, 0 when no answer came
   * @param {{code: string, message: string, retryable?: boolean, requestId?: string | null, fields?: Record<string, string>}} e
   * @param {number | null} [retryAfter] seconds, from the `Retry-After` header (`rate_limited`)
   */
  constructor(status, e, retryAfter = null) {
    super(e.message);
    this.status = status;
    this.code = e.code;
    this.retryable = e.retryable ?? status === 0;
    this.requestId = e.requestId ?? null;
    this.fields = e.fields ?? null;
    this.retryAfter = retryAfter;
  }
}

/**
 * A `Retry-After` header in seconds: delta-seconds (what the API sends) or an HTTP date.
 * @param {string | null} value
 * @returns {number | null}
 */
export function parseRetryAfter(value) {
  if (value === null || value.trim() === '') return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/**
 * A key as issued (decisions: `tk_` + at least 32 URL-safe characters), checked before it is
 * sent: a character a header cannot carry (a copied `…`, say) makes the browser refuse the
 * request before it leaves, which would read as "the API could not be reached". The message never
 * repeats the key.
 * @param {string} key
 * @returns {string | null} what is wrong, or null
 */
export function keyProblem(key) {
  if (/^tk_[A-Za-z0-9_-]{32,}$/.test(key)) return null;
  return (
    'That is not a Hark API key: a key is tk_ followed by at least 32 letters, digits, "-" or "_", ' +
    'with no spaces. Copy the whole key again (a shortened one ending in "…" will not do).'
  );
}

/**
 * Whether sending again can succeed: no answer, a 5xx, or an error the API marks retryable
 * (`upload_busy` while the previous writer's lock lasts, `rate_limited`).
 * @param {unknown} err
 * @returns {err is ApiError}
 */
export function transient(err) {
  return err instanceof ApiError && (err.status === 0 || err.status >= 500 || err.retryable);
}

/** The longest one run of `rate_limited` answers is waited out before the error is shown. */
export const RATE_LIMITED_BUDGET_MS = 5 * 60_000;

/**
 * When to try a failed request again: exponential backoff from 0.5 s, but never before the
 * API's `Retry-After`, plus up to 25 % jitter (only ever later: many tabs of one account should
 * not come back in step, and none earlier than told).
 * @param {number} failures consecutive failures so far, from 1
 * @param {number | null} retryAfter seconds
 */
export function retryDelayMs(failures, retryAfter) {
  const backoff = Math.min(500 * 2 ** (failures - 1), 60_000);
  const floor = Math.max(backoff, (retryAfter ?? 0) * 1000);
  return Math.round(floor * (1 + Math.random() * 0.25));
}

/**
 * The retry budget of one operation. Transient failures get `maxAttempts` tries in a row;
 * `rate_limited` answers do not count against them (the request was refused, not lost, and the
 * API says when to come back) but a run of them is waited out for at most
 * {@link RATE_LIMITED_BUDGET_MS} in all, so a limit that never lifts still ends in the error.
 */
export class Retries {
  /** @param {number} maxAttempts */
  constructor(maxAttempts) {
    this.maxAttempts = maxAttempts;
    this.failures = 0;
    this.limited = 0;
    this.limitedMs = 0;
  }

  /**
   * Records a failure; the wait before the next try, or null when `err` is to be shown instead.
   * @param {unknown} err
   * @returns {number | null}
   */
  next(err) {
    if (!transient(err)) return null;
    if (err.code === 'rate_limited') {
      const ms = retryDelayMs(++this.limited, err.retryAfter);
      if (this.limitedMs + ms > RATE_LIMITED_BUDGET_MS) return null;
      this.limitedMs += ms;
      return ms;
    }
    if (++this.failures >= this.maxAttempts) return null;
    return retryDelayMs(this.failures, err.retryAfter);
  }

  /** Failures recorded since the last success, rate limits included (for "attempt n" notes). */
  get attempts() {
    return this.failures + this.limited;
  }

  /** A request went through: the budgets start again. */
  succeeded() {
    this.failures = 0;
    this.limited = 0;
    this.limitedMs = 0;
  }
}

/**
 * Waits `ms`; an abort of `signal` ends the wait at once with its reason.
 * @param {number} ms  @param {AbortSignal} [signal]
 */
export const pause = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(undefined);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Turns a finished response into its `data`, or throws the envelope's error.
 * @param {number} status
 * @param {string} text
 * @param {(name: string) => string | null} header a response header (X-Request-Id, Retry-After)
 */
function unwrap(status, text, header) {
  const requestId = header('X-Request-Id');
  const retryAfter = parseRetryAfter(header('Retry-After'));
  /** @type {any} */
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: a proxy's page, say
  }
  if (status >= 200 && status < 300 && body && 'data' in body) return body.data;
  if (body && body.error && typeof body.error.code === 'string')
    throw new ApiError(status, body.error, retryAfter);
  throw new ApiError(
    status,
    {
      code: `http_${status}`,
      message: `Unexpected answer (HTTP ${status}).`,
      retryable: status >= 500,
      requestId,
    },
    retryAfter,
  );
}

export class HarkClient {
  /** @param {() => string} getKey reads the key at each call (the field can change) */
  constructor(getKey, base = '/v1') {
    this.getKey = getKey;
    this.base = base;
  }

  /** @param {Record<string, string>} [extra] */
  headers(extra = {}) {
    return { Authorization: `Bearer ${this.getKey()}`, ...extra };
  }

  /**
   * @param {string} method
   * @param {string} path under /v1
   * @param {{json?: unknown, body?: BodyInit, signal?: AbortSignal, headers?: Record<string, string>}} [opts]
   *   `headers` more request headers (`Idempotency-Key`)
   * @returns {Promise<any>} the response's `data`
   */
  async request(method, path, opts = {}) {
    const headers = this.headers({
      ...(opts.json === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...opts.headers,
    });
    const body = opts.json === undefined ? opts.body : JSON.stringify(opts.json);
    let res;
    try {
      res = await fetch(this.base + path, { method, headers, body, signal: opts.signal, cache: 'no-store' });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      throw new ApiError(0, { code: 'network', message: 'The API could not be reached.' });
    }
    return unwrap(res.status, await res.text(), (name) => res.headers.get(name));
  }

  /**
   * A text export (subtitles) as a Blob; errors as {@link ApiError}.
   * @param {string} path
   */
  async download(path) {
    let res;
    try {
      res = await fetch(this.base + path, { headers: this.headers(), cache: 'no-store' });
    } catch {
      throw new ApiError(0, { code: 'network', message: 'The API could not be reached.' });
    }
    if (!res.ok) unwrap(res.status, await res.text(), (name) => res.headers.get(name));
    return res.blob();
  }

  /**
   * Appends one chunk with PUT /v1/uploads/{id}. XMLHttpRequest rather than fetch: it reports the
   * bytes sent, so the progress bar moves inside a 16 MiB chunk too.
   * @param {string} id
   * @param {Blob} chunk
   * @param {(sent: number) => void} onSent
   * @param {AbortSignal} [signal] aborts the request (the promise rejects with its reason)
   * @returns {Promise<{id: string, receivedBytes: number, expectedBytes: number | null}>}
   */
  putChunk(id, chunk, onSent, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const xhr = new XMLHttpRequest();
      // Removed when the request ends: one signal lasts a whole upload of many chunks.
      const onAbort = () => xhr.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      xhr.onloadend = () => signal?.removeEventListener('abort', onAbort);
      // An abort not ours (the page unloading) reads as a request that did not arrive.
      xhr.onabort = () =>
        reject(
          signal?.aborted
            ? signal.reason
            : new ApiError(0, { code: 'network', message: 'The chunk did not reach the API.' }),
        );
      xhr.open('PUT', `${this.base}/uploads/${encodeURIComponent(id)}`);
      for (const [k, v] of Object.entries(this.headers())) xhr.setRequestHeader(k, v);
      xhr.upload.onprogress = (e) => onSent(e.loaded);
      xhr.onload = () => {
        try {
          resolve(unwrap(xhr.status, xhr.responseText, (name) => xhr.getResponseHeader(name)));
        } catch (err) {
          reject(err);
        }
      };
      xhr.onerror = () =>
        reject(new ApiError(0, { code: 'network', message: 'The chunk did not reach the API.' }));
      xhr.send(chunk);
    });
  }
}
