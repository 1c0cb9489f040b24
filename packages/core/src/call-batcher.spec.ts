import { CallBatcher } from './call-batcher';

const turn = () => new Promise((r) => setImmediate(r));

/** A `run` that records its batches and answers each input doubled, when released. */
function recorder() {
  const batches: number[][] = [];
  const releases: (() => void)[] = [];
  const run = async (inputs: readonly number[]) => {
    batches.push([...inputs]);
    await new Promise<void>((r) => releases.push(r));
    return inputs.map((x) => x * 2);
  };
  const releaseAll = () => releases.splice(0).forEach((r) => r());
  return { batches, run, releaseAll };
}

describe('CallBatcher', () => {
  it('sends the calls of one event-loop turn as one batch and answers each in order', async () => {
    const r = recorder();
    const b = new CallBatcher(r.run, { maxBatch: 100 });
    const answers = Promise.all([1, 2, 3].map((x) => b.call(x)));
    expect(r.batches).toEqual([]); // nothing leaves before the turn ends
    await turn();
    expect(r.batches).toEqual([[1, 2, 3]]);
    r.releaseAll();
    await expect(answers).resolves.toEqual([2, 4, 6]);
  });

  it('calls made in promise continuations of the same turn join the batch', async () => {
    const r = recorder();
    const b = new CallBatcher(r.run, { maxBatch: 100 });
    const first = b.call(1);
    const later = Promise.resolve().then(() => b.call(2));
    await turn();
    expect(r.batches).toEqual([[1, 2]]);
    r.releaseAll();
    await expect(Promise.all([first, later])).resolves.toEqual([2, 4]);
  });

  it('splits at maxBatch', async () => {
    const r = recorder();
    const b = new CallBatcher(r.run, { maxBatch: 2 });
    const answers = Promise.all([1, 2, 3, 4, 5].map((x) => b.call(x)));
    await turn();
    expect(r.batches).toEqual([[1, 2], [3, 4], [5]]);
    r.releaseAll();
    await expect(answers).resolves.toEqual([2, 4, 6, 8, 10]);
  });

  it('a call made while its turn-mate batch runs goes in a later batch (never answered by an earlier read)', async () => {
    const r = recorder();
    const b = new CallBatcher(r.run, { maxBatch: 100 });
    const first = b.call(1);
    await turn();
    const second = b.call(2);
    await turn();
    expect(r.batches).toEqual([[1], [2]]);
    r.releaseAll();
    await expect(Promise.all([first, second])).resolves.toEqual([2, 4]);
  });

  it('a failed batch rejects each of its calls and leaves the next batch working', async () => {
    let fail = true;
    const b = new CallBatcher(
      async (inputs: readonly number[]) => {
        if (fail) throw new Error('store down');
        return inputs.map((x) => x + 1);
      },
      { maxBatch: 10 },
    );
    const failed = [b.call(1), b.call(2)].map((p) =>
      p.then(
        () => 'ok',
        (e: Error) => e.message,
      ),
    );
    await expect(Promise.all(failed)).resolves.toEqual(['store down', 'store down']);
    fail = false;
    await expect(b.call(5)).resolves.toBe(6);
  });

  it('an answer of the wrong length fails the batch instead of mismatching results', async () => {
    const b = new CallBatcher(async (inputs: readonly number[]) => inputs.slice(1), { maxBatch: 10 });
    await expect(Promise.all([b.call(1), b.call(2)])).rejects.toThrow('batch answered 1 of 2 calls');
  });

  it('refuses a maxBatch below 1', () => {
    expect(() => new CallBatcher(async () => [], { maxBatch: 0 })).toThrow(RangeError);
  });
});
