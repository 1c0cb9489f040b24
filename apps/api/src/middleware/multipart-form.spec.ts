import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { type FormRefusal, readMultipartForm } from './multipart-form';

// The reader on its own, on a stream standing in for the request: what it refuses and how, and
// that a refusal never becomes an unhandled rejection (which stops the API process), whichever of
// its two promises the route awaits.

const limits = { fieldBytes: 100, fieldSize: 60, fields: 10, parts: 10 };

class Refused extends Error {
  constructor(readonly refusal: FormRefusal) {
    super(refusal.kind);
  }
}
const refuse = (r: FormRefusal) => new Refused(r);

/** A request with `contentType` whose body is `body`, already ended. */
function request(contentType: string, body = ''): IncomingMessage {
  const req = new PassThrough() as PassThrough & { headers: Record<string, string>; complete: boolean };
  req.headers = { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)) };
  req.complete = true;
  req.end(body);
  return req as unknown as IncomingMessage;
}

function form(boundary: string, fields: [string, string][]): string {
  return (
    fields
      .map(([n, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`)
      .join('') + `--${boundary}--\r\n`
  );
}

/** Rejections no handler took while `run` and the turns after it ran. */
async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const note = (reason: unknown) => void seen.push(reason);
  process.on('unhandledRejection', note);
  try {
    await run();
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    process.off('unhandledRejection', note);
  }
  return seen;
}

describe('readMultipartForm', () => {
  it.each(['fields', 'file'] as const)(
    'multipart/form-data without a boundary: malformed, and awaiting only its %s leaves no unhandled rejection',
    async (awaited) => {
      const unhandled = await unhandledDuring(async () => {
        const parsed = readMultipartForm(request('multipart/form-data', 'hello'), limits, refuse);
        await expect(parsed[awaited]).rejects.toEqual(new Refused({ kind: 'malformed' }));
      });
      expect(unhandled).toEqual([]);
    },
  );

  it('reads the fields of a well-formed body', async () => {
    const body = form('b0', [
      ['model', 'whisper-1'],
      ['a[x]', '1'],
    ]);
    const parsed = readMultipartForm(request('multipart/form-data; boundary=b0', body), limits, refuse);
    expect(await parsed.file).toBeNull();
    expect(await parsed.fields).toEqual({ model: 'whisper-1', a: { x: '1' } });
  });

  it('holds all the fields to one budget: each under its own limit, too many bytes together', async () => {
    const body = form('b0', [
      ['a', 'x'.repeat(50)],
      ['b', 'x'.repeat(50)],
    ]);
    const unhandled = await unhandledDuring(async () => {
      const parsed = readMultipartForm(request('multipart/form-data; boundary=b0', body), limits, refuse);
      await expect(parsed.fields).rejects.toEqual(new Refused({ kind: 'fields_too_large' }));
    });
    expect(unhandled).toEqual([]);
  });

  it('one field past its own limit: field_too_long, naming it', async () => {
    const body = form('b0', [['prompt', 'x'.repeat(61)]]);
    const parsed = readMultipartForm(request('multipart/form-data; boundary=b0', body), limits, refuse);
    await expect(parsed.fields).rejects.toEqual(new Refused({ kind: 'field_too_long', field: 'prompt' }));
  });
});
