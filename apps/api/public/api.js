// @ts-check
// The page's client of the Hark API (same origin). The key travels only in the Authorization
// header; it is never put in a URL, a cookie or localStorage.

/** An API error as the API gives it (the envelope), or a network failure (`code` `network`). */
export class ApiError extends Error {
  /**
   * @param {number} status HTTP status, 0 when no answer came
   * @param {{code: string, message: string, retryable?: boolean, requestId?: string | null, fields?: Record<string, string>}} e
   */
  constructor(status, e) {
    super(e.message);
    this.status = status;
    this.code = e.code;
    this.retryable = e.retryable ?? status === 0;
    this.requestId = e.requestId ?? null;
    this.fields = e.fields ?? null;
  }
}

/**
 * Turns a finished response into its `data`, or throws the envelope's error.
 * @param {number} status
 * @param {string} text
 * @param {string | null} requestId the X-Request-Id header
 */
function unwrap(status, text, requestId) {
  /** @type {any} */
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: a proxy's page, say
  }
  if (status >= 200 && status < 300 && body && 'data' in body) return body.data;
  if (body && body.error && typeof body.error.code === 'string') throw new ApiError(status, body.error);
  throw new ApiError(status, {
    code: `http_${status}`,
    message: `Unexpected answer (HTTP ${status}).`,
    retryable: status >= 500,
    requestId,
  });
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
   * @param {{json?: unknown, body?: BodyInit, signal?: AbortSignal}} [opts]
   * @returns {Promise<any>} the response's `data`
   */
  async request(method, path, opts = {}) {
    const headers = this.headers(opts.json === undefined ? {} : { 'Content-Type': 'application/json' });
    const body = opts.json === undefined ? opts.body : JSON.stringify(opts.json);
    let res;
    try {
      res = await fetch(this.base + path, { method, headers, body, signal: opts.signal, cache: 'no-store' });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      throw new ApiError(0, { code: 'network', message: 'The API could not be reached.' });
    }
    return unwrap(res.status, await res.text(), res.headers.get('X-Request-Id'));
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
    if (!res.ok) unwrap(res.status, await res.text(), res.headers.get('X-Request-Id'));
    return res.blob();
  }

  /**
   * Appends one chunk with PUT /v1/uploads/{id}. XMLHttpRequest rather than fetch: it reports the
   * bytes sent, so the progress bar moves inside a 16 MiB chunk too.
   * @param {string} id
   * @param {Blob} chunk
   * @param {(sent: number) => void} onSent
   * @returns {Promise<{id: string, receivedBytes: number, expectedBytes: number | null}>}
   */
  putChunk(id, chunk, onSent) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('PUT', `${this.base}/uploads/${encodeURIComponent(id)}`);
      for (const [k, v] of Object.entries(this.headers())) xhr.setRequestHeader(k, v);
      xhr.upload.onprogress = (e) => onSent(e.loaded);
      xhr.onload = () => {
        try {
          resolve(unwrap(xhr.status, xhr.responseText, xhr.getResponseHeader('X-Request-Id')));
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
