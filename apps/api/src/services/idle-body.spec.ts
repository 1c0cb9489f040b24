import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { isHarkError } from '@hark/core';
import { watchIdle } from './idle-body';

const MiB = 1024 * 1024;

describe('watchIdle', () => {
  const read = async (body: PassThrough) => {
    let bytes = 0;
    for await (const c of body) bytes += (c as Buffer).length;
    return bytes;
  };

  it('destroys a body that goes silent with 408 request_timeout; its reader throws that', async () => {
    const body = new PassThrough();
    const watch = watchIdle(body, 50);
    body.write(Buffer.alloc(10));
    const err = await read(body).catch((e: unknown) => e);
    watch.stop();
    expect(isHarkError(err) && [err.code, err.status, err.retryable]).toEqual(['request_timeout', 408, true]);
  });

  it('leaves a body alone while it holds bytes its reader has not taken (the store is slow, not the client)', async () => {
    const body = new PassThrough();
    body.on('error', () => undefined); // no reader is waiting to take it
    const watch = watchIdle(body, 50);
    body.write(Buffer.alloc(10));
    await new Promise((r) => setTimeout(r, 200));
    expect(body.destroyed).toBe(false);
    // Taken, and nothing more arrives: now it is the client's silence.
    body.read();
    await new Promise((r) => setTimeout(r, 150));
    expect(body.destroyed).toBe(true);
    watch.stop();
  });

  it("a real request whose reader is slow is not the client's silence: its bytes wait in the body", async () => {
    // What the S3 driver does while a part uploads: it takes no byte for a while, and Node keeps
    // the client's next bytes in the request (readableLength) until it does.
    let seen: { destroyed: boolean; waiting: number } | undefined;
    const server = http.createServer((req, res) => {
      const watch = watchIdle(req, 100);
      setTimeout(() => {
        seen = { destroyed: req.destroyed, waiting: req.readableLength };
        void (async () => {
          let bytes = 0;
          for await (const c of req) {
            bytes += (c as Buffer).length;
            watch.touch();
          }
          watch.stop();
          res.end(String(bytes));
        })();
      }, 500);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await new Promise<string>((resolve, reject) => {
        const req = http.request({
          port,
          host: '127.0.0.1',
          method: 'POST',
          headers: { 'Content-Length': MiB },
        });
        req.on('response', (r) => {
          let body = '';
          r.on('data', (c: Buffer) => (body += c.toString()));
          r.on('end', () => resolve(body));
        });
        req.on('error', reject);
        req.end(Buffer.alloc(MiB));
      });
      expect(seen?.destroyed).toBe(false);
      expect(seen?.waiting).toBeGreaterThan(0);
      expect(answer).toBe(String(MiB));
    } finally {
      server.close();
    }
  });

  it('leaves a body alone whose source ended while its reader stores the last bytes (a form file part)', async () => {
    // What a slow store does with a form's file part: it takes the last chunk, then writes it for
    // longer than the watch, reading nothing. The part's end has come; nothing is the client's.
    const body = new PassThrough();
    const watch = watchIdle(body, 50);
    body.write(Buffer.alloc(10));
    const stored = (async () => {
      let bytes = 0;
      for await (const c of body) {
        bytes += (c as Buffer).length;
        body.end(); // the end arrives while the reader is busy with the last chunk
        await new Promise((r) => setTimeout(r, 200)); // the slow write
      }
      return bytes;
    })();
    expect(await stored).toBe(10);
    expect(body.destroyed).toBe(true); // by the end of the stream, not the watch
    expect(body.errored).toBe(null);
    watch.stop();
  });

  it('leaves a body alone while bytes keep arriving (touch), and once stopped', async () => {
    const body = new PassThrough();
    const watch = watchIdle(body, 80);
    const reading = read(body);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 40));
      body.write(Buffer.alloc(10));
      watch.touch();
    }
    watch.stop();
    await new Promise((r) => setTimeout(r, 120));
    body.end();
    expect(await reading).toBe(50);
  });
});
