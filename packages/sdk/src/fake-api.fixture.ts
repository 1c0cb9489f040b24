// An in-memory stand-in for the API, answering through a `fetch` passed to the client, so unit
// specs drive retries, idempotency and upload resumes without a network. Faults are scripted per
// request. Not part of the build (tsconfig.build.json excludes *.fixture.ts).
import { createHash } from 'node:crypto';
import type { Fetch } from './transport';
import type { Transcript, Upload } from './types';

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: Uint8Array | null;
}

/**
 * What a fault does to a matching request: answer with `response` without handling it, fail as a
 * network error before it arrives (`'network'`), or handle it and then lose the answer
 * (`'lose-answer'`: the side effect happens, the client sees a network error).
 */
type Action = Response | 'network' | 'lose-answer';
export type FaultAction = Action | ((r: Recorded) => Action);

interface Fault {
  match: (r: Recorded) => boolean;
  action: FaultAction;
  times: number;
}

const pathTest = (path: RegExp | string) => (p: string) =>
  typeof path === 'string' ? p.startsWith(path) : path.test(p);

export function envelope(
  status: number,
  code: string,
  retryable: boolean,
  headers: Record<string, string> = {},
  fields?: Record<string, string>,
): Response {
  const body = {
    error: {
      code,
      message: `${code} happened`,
      retryable,
      requestId: 'req_fake',
      ...(fields ? { fields } : {}),
    },
  };
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'req_fake', ...headers },
  });
}

const data = (v: unknown, status = 200) =>
  new Response(JSON.stringify({ data: v }), {
    status,
    headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'req_ok' },
  });

export function transcriptFixture(id: string, status: Transcript['status'] = 'processing'): Transcript {
  return {
    id,
    status,
    text: status === 'done' ? '' : null,
    words: status === 'done' ? [] : null,
    utterances: status === 'done' ? [] : null,
    diarizationSegments: null,
    error: null,
    language: status === 'processing' ? null : 'en',
    durationSeconds: status === 'done' ? 11 : 0,
    speakerCount: null,
    cost: status === 'done' ? 0.11 : 0,
    currency: 'USD',
    model: 'whisper-test',
    url: null,
    retentionDays: null,
    externalId: null,
    metadata: null,
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}

export class FakeApi {
  readonly requests: Recorded[] = [];
  readonly uploads = new Map<string, { data: Buffer; expectedBytes: number | null; sha256: string | null }>();
  readonly transcripts = new Map<string, Transcript>();
  /** Idempotency-Key -> transcript id. */
  readonly keys = new Map<string, string>();
  /** POST /v1/uploads' Idempotency-Key to upload id. */
  readonly uploadKeys = new Map<string, string>();
  /** GETs of a processing transcript before it turns `done`. */
  doneAfterGets = Infinity;
  private readonly faults: Fault[] = [];
  private seq = 0;

  /** Scripts `action` for the next `times` requests matching `method` and `path` (a RegExp or a prefix). */
  fault(method: string, path: RegExp | string, action: FaultAction, times = 1): this {
    const test = pathTest(path);
    this.faults.push({ match: (r) => r.method === method && test(r.path), action, times });
    return this;
  }

  /** Scripts `action` for the n-th requests (1-based, in `nth`) matching `method` and `path`. */
  faultNth(method: string, path: RegExp | string, nth: number[], action: FaultAction): this {
    const test = pathTest(path);
    let n = 0;
    this.faults.push({
      match: (r) => r.method === method && test(r.path) && nth.includes(++n),
      action,
      times: Infinity,
    });
    return this;
  }

  of(method: string, path?: string): Recorded[] {
    return this.requests.filter(
      (r) => r.method === method && (path === undefined || r.path.startsWith(path)),
    );
  }

  readonly fetch: Fetch = async (input, init) => {
    const url = new URL(input);
    const body =
      init.body === undefined || init.body === null
        ? null
        : typeof init.body === 'string'
          ? Buffer.from(init.body)
          : Buffer.from(init.body as Uint8Array);
    const r: Recorded = {
      method: init.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: new Headers(init.headers),
      body,
    };
    this.requests.push(r);
    if (init.signal?.aborted) throw init.signal.reason;
    // Every matcher sees every request, so the n-th counters stay exact.
    const fault = this.faults.filter((f) => f.times > 0 && f.match(r))[0];
    if (fault) {
      fault.times--;
      const action = typeof fault.action === 'function' ? fault.action(r) : fault.action;
      if (action === 'network') throw new TypeError('fetch failed');
      if (action === 'lose-answer') {
        this.handle(r);
        throw new TypeError('fetch failed');
      }
      return action;
    }
    return this.handle(r);
  };

  private upload(id: string): Upload | null {
    const u = this.uploads.get(id);
    return u
      ? {
          id,
          receivedBytes: u.data.length,
          expectedBytes: u.expectedBytes,
          sha256: u.sha256,
          createdAt: '2026-01-01T00:00:00.000Z',
        }
      : null;
  }

  handle(r: Recorded): Response {
    const m = /^\/v1\/(uploads|transcripts)(?:\/([^/]+))?(?:\/([a-z-]+))?$/.exec(r.path);
    if (!m) return envelope(404, 'not_found', false);
    const [, kind, id, sub] = m;
    if (kind === 'uploads') {
      if (r.method === 'POST' && !id) {
        // Keyed like the service: a repeat answers the first upload as it stands.
        const key = r.headers.get('idempotency-key');
        const prior = key ? this.uploadKeys.get(key) : undefined;
        if (prior) return data(this.upload(prior), 201);
        const newId = `up_${++this.seq}`;
        if (key) this.uploadKeys.set(key, newId);
        const expected = r.query.get('expectedBytes');
        this.uploads.set(newId, {
          data: Buffer.from(r.body ?? []),
          expectedBytes: expected === null ? null : Number(expected),
          sha256: r.query.get('sha256'),
        });
        return data(this.upload(newId), 201);
      }
      const u = id ? this.uploads.get(id) : undefined;
      if (!u || !id) return envelope(404, 'upload_not_found', false);
      if (r.method === 'PUT') {
        if (!r.body || r.body.length === 0) return envelope(400, 'chunk_empty', false);
        u.data = Buffer.concat([u.data, r.body]);
      }
      return data(this.upload(id));
    }
    if (r.method === 'POST' && !id) {
      const key = r.headers.get('idempotency-key');
      const existing = key ? this.keys.get(key) : undefined;
      if (existing) return data(this.transcripts.get(existing), 201);
      const t = transcriptFixture(`tr_${++this.seq}`);
      this.transcripts.set(t.id, t);
      if (key) this.keys.set(key, t.id);
      return data(t, 201);
    }
    const t = id ? this.transcripts.get(id) : undefined;
    if (!t || !id) return envelope(404, 'not_found', false);
    if (r.method === 'GET' && !sub) {
      if (t.status === 'processing' && --this.doneAfterGets <= 0)
        Object.assign(t, transcriptFixture(id, 'done'));
      return data(t);
    }
    if (r.method === 'POST' && sub === 'cancel') {
      if (t.status !== 'processing') return envelope(409, 'transcript_finished', false);
      t.status = 'canceled';
      return data(t);
    }
    if (r.method === 'DELETE' && !sub) {
      if (t.status === 'processing') return envelope(409, 'transcript_processing', false);
      this.transcripts.delete(id);
      return data({ id, deleted: true });
    }
    return envelope(404, 'not_found', false);
  }

  /** The bytes an upload holds, and their digest. */
  stored(id: string): { bytes: Buffer; sha256: string } {
    const bytes = this.uploads.get(id)?.data ?? Buffer.alloc(0);
    return { bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
  }
}
