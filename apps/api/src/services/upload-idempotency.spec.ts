import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { HarkError } from '@hark/core';
import { ERASED_REQUEST_HASH } from '@hark/transcripts';
import { BodyPrint, printBody, replayOf, requestHash } from './upload-idempotency';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('upload idempotency prints', () => {
  it('printBody reads a body in pieces to its length and digest, the same as BodyPrint', async () => {
    const body = Buffer.alloc(300_000, 9);
    const pieces = [body.subarray(0, 1), body.subarray(1, 70_000), body.subarray(70_000)];
    expect(await printBody(Readable.from(pieces), 300_000, () => new Error('too large'))).toEqual({
      bodyBytes: 300_000,
      bodySha256: sha(body),
    });
    const print = new BodyPrint();
    pieces.forEach((p) => print.update(p));
    expect(print.finish()).toEqual({ bodyBytes: 300_000, bodySha256: sha(body) });
    expect(await printBody(Readable.from([]), 10, () => new Error('too large'))).toEqual({
      bodyBytes: 0,
      bodySha256: sha(Buffer.alloc(0)),
    });
  });

  it('printBody refuses a body past its limit and stops reading it', async () => {
    let pulled = 0;
    const stream = Readable.from(
      (function* () {
        for (let i = 0; i < 100; i++) {
          pulled++;
          yield Buffer.alloc(8);
        }
      })(),
    );
    await expect(printBody(stream, 15, () => new HarkError('payload_too_large'))).rejects.toMatchObject({
      code: 'payload_too_large',
    });
    expect(pulled).toBeLessThan(10);
    expect(stream.destroyed).toBe(true);
  });

  it('requestHash tells every field apart (no declared size is not size 0; the digest counts)', () => {
    const base = { expectedBytes: 10, sha256: null, bodyBytes: 0, bodySha256: sha(Buffer.alloc(0)) };
    const hashes = [
      base,
      { ...base, expectedBytes: null },
      { ...base, expectedBytes: 11 },
      { ...base, sha256: 'a'.repeat(64) },
      { ...base, bodyBytes: 1 },
      { ...base, bodySha256: sha(Buffer.from('x')) },
    ].map(requestHash);
    expect(new Set(hashes).size).toBe(hashes.length);
    expect(requestHash({ ...base })).toBe(hashes[0]);
  });

  it('replayOf answers the recorded upload for the same request, 409 idempotency_conflict otherwise', () => {
    const prior = { requestHash: 'h1', uploadId: 'up_1' };
    expect(replayOf(prior, 'h1')).toBe('up_1');
    expect(() => replayOf(prior, 'h2')).toThrow(expect.objectContaining({ code: 'idempotency_conflict' }));
  });

  it('replayOf: once the upload is erased (its fingerprint replaced), every request is 404 upload_not_found', () => {
    const erased = { requestHash: ERASED_REQUEST_HASH, uploadId: 'up_1' };
    for (const hash of ['h1', 'h2', ERASED_REQUEST_HASH])
      expect(() => replayOf(erased, hash)).toThrow(expect.objectContaining({ code: 'upload_not_found' }));
  });
});
