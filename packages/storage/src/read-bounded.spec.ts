import { readBounded } from './read-bounded';

async function* body(...sizes: number[]): AsyncIterable<Buffer> {
  for (const n of sizes) yield Buffer.alloc(n, n);
}

describe('readBounded', () => {
  it('hands every chunk to onData, then to the store, in order, and resolves with the bytes read', async () => {
    const seen: string[] = [];
    const n = await readBounded(
      body(3, 4),
      {
        maxBytes: 7,
        tooLarge: () => new Error('too large'),
        onData: (c) => void seen.push(`data ${c.length}`),
      },
      async (c) => void seen.push(`store ${c.length}`),
    );
    expect(n).toBe(7);
    expect(seen).toEqual(['data 3', 'store 3', 'data 4', 'store 4']);
  });

  it('throws tooLarge at the first chunk past maxBytes, before that chunk is seen or stored', async () => {
    const stored: number[] = [];
    const onData = jest.fn();
    await expect(
      readBounded(
        body(5, 5, 5),
        { maxBytes: 9, tooLarge: () => new Error('too large'), onData },
        async (c) => void stored.push(c.length),
      ),
    ).rejects.toThrow('too large');
    expect(stored).toEqual([5]);
    expect(onData).toHaveBeenCalledTimes(1);
  });

  it('waits for a promise from onData before storing the chunk (backpressure)', async () => {
    const order: string[] = [];
    await readBounded(
      body(1),
      {
        maxBytes: 1,
        tooLarge: () => new Error('too large'),
        onData: () =>
          new Promise<void>((resolve) =>
            setTimeout(() => {
              order.push('hashed');
              resolve();
            }, 10),
          ),
      },
      async () => void order.push('stored'),
    );
    expect(order).toEqual(['hashed', 'stored']);
  });
});
