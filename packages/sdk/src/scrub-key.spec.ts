import { inspect } from 'node:util';
import { KeyScrubber } from './scrub-key';

const key = 'tk_SECRETsecretSECRETsecretSECRETsecret';
const auth = `Bearer ${key}`;
const s = new KeyScrubber(key);
const shown = (x: unknown) => inspect(x, { depth: 20, showHidden: true });

describe('KeyScrubber.text', () => {
  it('replaces the key, and a run of 12 or more of its first characters where a message cut it short', () => {
    expect(s.text(`bad header "${auth}"`)).toBe('bad header "Bearer [api key]"');
    expect(s.text(`header "Bearer ${key.slice(0, 16)}..."`)).toBe('header "Bearer [api key]..."');
    expect(s.text(`${key} and ${key}`)).toBe('[api key] and [api key]');
    // Fewer than 12 characters of it is not the key.
    expect(s.text(`id ${key.slice(0, 11)}`)).toBe(`id ${key.slice(0, 11)}`);
  });
});

describe('KeyScrubber.error', () => {
  it('leaves an error that quotes nothing of the key as it is', () => {
    const e = Object.assign(new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') }), {
      code: 'UND_ERR',
    });
    expect(s.error(e)).toBe(e);
    expect(s.error('fine')).toBe('fine');
  });

  it('drops a plain-object cause that quotes the key, keeping the scrubbed message', () => {
    const e = new TypeError(`x ${auth}`, { cause: { headers: { authorization: auth } } });
    const copy = s.error(e) as TypeError;
    expect(copy).toBeInstanceOf(TypeError);
    expect(copy.message).toBe('x Bearer [api key]');
    expect(copy.cause).toBeUndefined();
    expect(shown(copy)).not.toContain('SECRET');
    // Quoted only in the plain object: still copied.
    const only = s.error(new TypeError('fetch failed', { cause: { message: auth } })) as TypeError;
    expect(only).toMatchObject({ message: 'fetch failed' });
    expect(shown(only)).not.toContain('SECRET');
  });

  it("keeps an AggregateError's class and its errors' codes, scrubbed", () => {
    const errors = [
      Object.assign(new Error(`connect ECONNREFUSED via ${auth}`), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('connect ENETUNREACH ::1'), { code: 'ENETUNREACH' }),
    ];
    const e = new TypeError('fetch failed', { cause: new AggregateError(errors, 'all failed') });
    const copy = s.error(e) as TypeError & { cause: AggregateError };
    expect(shown(copy)).not.toContain('SECRET');
    expect(copy).toBeInstanceOf(TypeError);
    expect(copy.cause).toBeInstanceOf(AggregateError);
    expect(copy.cause.errors.map((x: Error & { code?: string }) => x.code)).toEqual([
      'ECONNREFUSED',
      'ENETUNREACH',
    ]);
    expect(copy.cause.errors[0].message).toBe('connect ECONNREFUSED via Bearer [api key]');
    // The link that quotes nothing is kept as it is.
    expect(copy.cause.errors[1]).toBe(errors[1]);
  });

  it('finds the key in any property, and in a stack, and keeps classes made with their own constructors', () => {
    class ProxyError extends Error {
      constructor(readonly request: { headers: Record<string, string> }) {
        super('proxy refused');
        this.name = 'ProxyError';
      }
    }
    const e = new ProxyError({ headers: { authorization: auth } });
    const copy = s.error(e) as ProxyError;
    expect(copy).toBeInstanceOf(ProxyError);
    expect(copy).toMatchObject({ name: 'ProxyError', message: 'proxy refused' });
    expect(copy.request).toBeUndefined();
    const stacked = new Error('plain');
    stacked.stack = `Error: plain\n    at send (${key}.js:1:1)`;
    expect(shown(s.error(stacked))).not.toContain('SECRET');
  });

  it('ends on a cycle and cuts a chain deeper than 8 links', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error(`b ${auth}`, { cause: a });
    a.cause = b;
    expect(shown(s.error(b))).not.toContain('SECRET');
    let deep: Error = new Error(auth);
    for (let i = 0; i < 20; i++) deep = new Error(`level ${i}`, { cause: deep });
    const copy = s.error(deep);
    expect(copy).not.toBe(deep);
    expect(shown(copy)).not.toContain('SECRET');
  });

  it('treats a property getter that throws as quoting the key', () => {
    const e = new Error('odd');
    Object.defineProperty(e, 'boom', {
      enumerable: true,
      get() {
        throw new Error('no');
      },
    });
    const copy = s.error(e) as Error;
    expect(copy).not.toBe(e);
    expect(copy.message).toBe('odd');
  });
});
