import { PassThrough } from 'node:stream';
import { isHarkError } from '@hark/core';
import { watchIdle } from './idle-body';

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
