import { mkdtempSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_TENSORS, writeGgmlModel } from './__fixtures__/ggml-model';
import { checkModelCopy, readModelLayout } from './model-layout';

describe('readModelLayout', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hark-layout-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('walks the header, mel filters and vocabulary to the tensors, each with its bytes, to the end of the file', async () => {
    const path = writeGgmlModel(join(dir, 'm.bin'), 1, [
      ...FAKE_TENSORS,
      { name: 'decoder.blocks.0.mlp.0.weight', type: 8, dims: [64, 2] },
    ]);
    const layout = await readModelLayout(path);
    expect(layout.ftype).toBe(1);
    expect(layout.tensors.map((t) => [t.name, t.type, t.dims, t.bytes])).toEqual([
      ['encoder.conv1.weight', 1, [64, 4], 64 * 4 * 2],
      ['encoder.conv1.bias', 0, [4], 16],
      ['decoder.token_embedding.weight', 1, [64, 3], 64 * 3 * 2],
      ['decoder.blocks.0.mlp.0.weight', 8, [64, 2], 2 * 2 * 34],
    ]);
    expect(layout.end).toBe(statSync(path).size);
  });

  it('throws where the file ends inside any part, and on a ggml type no whisper model holds', async () => {
    const path = join(dir, 'm.bin');
    const size = statSync(writeGgmlModel(path, 1)).size;
    // In the mel filters, at the vocabulary's count, in a word, in a tensor's header, in its data.
    for (const keep of [60, 80, 90, 110, size - 1]) {
      writeGgmlModel(path, 1);
      truncateSync(path, keep);
      await expect(readModelLayout(path)).rejects.toThrow(/cut short/);
    }
    writeGgmlModel(path, 1, [{ name: 'x', type: 12, dims: [256] }]);
    await expect(readModelLayout(path)).rejects.toThrow(/ggml type 12/);
  });

  it('checkModelCopy: null for a whole copy; says what differs otherwise', async () => {
    const source = writeGgmlModel(join(dir, 'f16.bin'), 1);
    const copy = writeGgmlModel(join(dir, 'q8.bin'), 8, FAKE_TENSORS);
    await expect(checkModelCopy(source, copy)).resolves.toBeNull();
    writeGgmlModel(copy, 8, [FAKE_TENSORS[1]!, FAKE_TENSORS[0]!, FAKE_TENSORS[2]!]);
    await expect(checkModelCopy(source, copy)).resolves.toMatch(/tensor 0 is encoder.conv1.bias/);
    truncateSync(copy, 30);
    await expect(checkModelCopy(source, copy)).resolves.toMatch(/not a ggml model/);
  });
});
