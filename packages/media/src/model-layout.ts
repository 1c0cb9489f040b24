import { type FileHandle, open } from 'node:fs/promises';
import { readModelHeader } from './model-header';

/** One tensor of a ggml whisper model: its name, ggml type, dimensions, and where its data lies. */
export interface ModelTensor {
  name: string;
  type: number;
  dims: number[];
  /** Byte offset of the data. */
  offset: number;
  bytes: number;
}

export interface ModelLayout {
  /** The header's `ftype` (0 f32, 1 f16, else quantised), the quantisation version dropped. */
  ftype: number;
  /** Where the tensors start: the header, mel filters and vocabulary take the bytes before. */
  tensorsAt: number;
  tensors: ModelTensor[];
  /** Where the last tensor's data ends: the file's whole length when it is complete. */
  end: number;
}

/** Bytes per block and elements per block of the ggml types a whisper model holds (ggml.c `type_traits`). */
const TYPE_SIZES: Record<number, { bytes: number; block: number }> = {
  0: { bytes: 4, block: 1 }, // f32
  1: { bytes: 2, block: 1 }, // f16
  2: { bytes: 18, block: 32 }, // q4_0
  3: { bytes: 20, block: 32 }, // q4_1
  6: { bytes: 22, block: 32 }, // q5_0
  7: { bytes: 24, block: 32 }, // q5_1
  8: { bytes: 34, block: 32 }, // q8_0
};

/** A model's structure is wrong: cut short, or not what whisper.cpp's loader reads. */
export class ModelLayoutError extends Error {
  override name = 'ModelLayoutError';
}

/** Reads forward through a file in blocks: the headers are small and far apart, the data is skipped. */
class Cursor {
  private buf = Buffer.alloc(0);
  private bufAt = 0;
  constructor(
    private readonly file: FileHandle,
    readonly size: number,
    public pos: number,
  ) {}

  private async need(n: number): Promise<Buffer> {
    if (this.pos + n > this.size) throw new ModelLayoutError(`cut short at byte ${this.size}`);
    if (this.pos < this.bufAt || this.pos + n > this.bufAt + this.buf.length) {
      const want = Math.min(Math.max(n, 16 * 1024), this.size - this.pos);
      this.buf = Buffer.alloc(want);
      const { bytesRead } = await this.file.read(this.buf, 0, want, this.pos);
      if (bytesRead < n) throw new ModelLayoutError(`cut short at byte ${this.pos + bytesRead}`);
      this.bufAt = this.pos;
    }
    const at = this.pos - this.bufAt;
    this.pos += n;
    return this.buf.subarray(at, at + n);
  }

  async int32(): Promise<number> {
    return (await this.need(4)).readInt32LE(0);
  }

  async text(n: number): Promise<string> {
    return (await this.need(n)).toString('latin1');
  }

  skip(n: number): void {
    if (this.pos + n > this.size)
      throw new ModelLayoutError(`cut short: ${this.pos + n - this.size} bytes missing`);
    this.pos += n;
  }
}

/** The int32 hparams after the magic: n_vocab ... n_mels, ftype (11 of them). */
const HPARAMS_END = 4 + 11 * 4;

/**
 * Walks a ggml whisper model as whisper.cpp's loader reads it (header, mel filters, vocabulary,
 * then tensors to the end of the file), reading only the headers, and returns its tensors. Throws
 * `ModelLayoutError` when the file ends inside any part of it, or a tensor's shape or type is not
 * one the loader reads: a copy that a failed write cut short (whisper-quantize exits 0 even when
 * its writes fail) is found here before anything trusts it.
 */
export async function readModelLayout(modelPath: string): Promise<ModelLayout> {
  const { ftype } = await readModelHeader(modelPath);
  const file = await open(modelPath, 'r');
  try {
    const c = new Cursor(file, (await file.stat()).size, HPARAMS_END);
    const nMel = await c.int32();
    const nFft = await c.int32();
    if (nMel < 0 || nFft < 0) throw new ModelLayoutError('mel filter sizes are negative');
    c.skip(nMel * nFft * 4);
    const nVocab = await c.int32();
    if (nVocab < 0) throw new ModelLayoutError('vocabulary size is negative');
    for (let i = 0; i < nVocab; i++) c.skip(await c.int32());
    const tensorsAt = c.pos;
    const tensors: ModelTensor[] = [];
    while (c.pos < c.size) {
      const nDims = await c.int32();
      const nameLength = await c.int32();
      const type = await c.int32();
      if (nDims < 1 || nDims > 4 || nameLength < 1 || nameLength > 4096)
        throw new ModelLayoutError(`tensor ${tensors.length} has a header no loader reads`);
      const dims: number[] = [];
      for (let d = 0; d < nDims; d++) dims.push(await c.int32());
      const name = await c.text(nameLength);
      const bytes = tensorBytes(name, type, dims);
      tensors.push({ name, type, dims, offset: c.pos, bytes });
      c.skip(bytes);
    }
    return { ftype, tensorsAt, tensors, end: c.pos };
  } finally {
    await file.close();
  }
}

function tensorBytes(name: string, type: number, dims: number[]): number {
  const size = TYPE_SIZES[type];
  if (!size) throw new ModelLayoutError(`tensor ${name} has ggml type ${type}, which no whisper model holds`);
  if (dims.some((d) => d < 1)) throw new ModelLayoutError(`tensor ${name} has an empty dimension`);
  const row = dims[0]!;
  if (row % size.block !== 0) throw new ModelLayoutError(`tensor ${name}'s rows do not fill whole blocks`);
  const rows = dims.slice(1).reduce((a, b) => a * b, 1);
  return (row / size.block) * size.bytes * rows;
}

/**
 * Why `copy` is not a whole quantised copy of `source`, or null when it is: the same tensors by
 * name and shape in the same order after a header of the same length, each whole, and nothing
 * after the last. (Types differ: the
 * copy's large matrices are quantised, its small ones and 1-D tensors stay as they were.)
 */
export async function checkModelCopy(source: string, copy: string): Promise<string | null> {
  let made: ModelLayout;
  try {
    made = await readModelLayout(copy);
  } catch (error) {
    return (error as Error).message;
  }
  const original = await readModelLayout(source);
  // whisper-quantize copies the header, mel filters and vocabulary as they are.
  if (made.tensorsAt !== original.tensorsAt)
    return `its tensors start at byte ${made.tensorsAt}, the model's at ${original.tensorsAt}`;
  if (made.tensors.length !== original.tensors.length)
    return `it holds ${made.tensors.length} tensors, the model ${original.tensors.length}`;
  for (let i = 0; i < made.tensors.length; i++) {
    const [a, b] = [made.tensors[i]!, original.tensors[i]!];
    if (a.name !== b.name || a.dims.join('x') !== b.dims.join('x'))
      return `tensor ${i} is ${a.name} [${a.dims.join(', ')}], the model's ${b.name} [${b.dims.join(', ')}]`;
  }
  return null;
}
