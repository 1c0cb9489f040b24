import { writeFileSync } from 'node:fs';

export interface FakeTensor {
  name: string;
  /** ggml type: 0 f32, 1 f16, 8 q8_0 ... */
  type: number;
  dims: number[];
}

const BYTES: Record<number, [number, number]> = { 0: [4, 1], 1: [2, 1], 8: [34, 32] };

/** The tensors of a small whisper-shaped model: a 2-D matrix (quantised by whisper-quantize) and a bias. */
export const FAKE_TENSORS: FakeTensor[] = [
  { name: 'encoder.conv1.weight', type: 1, dims: [64, 4] },
  { name: 'encoder.conv1.bias', type: 0, dims: [4] },
  { name: 'decoder.token_embedding.weight', type: 1, dims: [64, 3] },
];

/**
 * Writes a ggml whisper model of whisper.cpp's layout (magic, 11 int32 hparams with n_mels 80,
 * mel filters, vocabulary, tensors), small enough for unit tests; the data is zeros.
 */
export function writeGgmlModel(path: string, ftype: number, tensors: FakeTensor[] = FAKE_TENSORS): string {
  const parts: Buffer[] = [];
  const i32 = (...values: number[]) => {
    const b = Buffer.alloc(4 * values.length);
    values.forEach((v, i) => b.writeInt32LE(v, 4 * i));
    parts.push(b);
  };
  // magic, n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer, n_text_ctx,
  // n_text_state, n_text_head, n_text_layer, n_mels, ftype
  i32(0x67676d6c, 3, 1500, 64, 1, 1, 448, 64, 1, 1, 80, ftype);
  i32(2, 3); // mel filters: n_mel x n_fft floats
  parts.push(Buffer.alloc(2 * 3 * 4));
  i32(3); // vocabulary
  for (const word of ['a', 'bc', 'def']) {
    i32(word.length);
    parts.push(Buffer.from(word));
  }
  for (const t of tensors) {
    i32(t.dims.length, t.name.length, t.type, ...t.dims);
    parts.push(Buffer.from(t.name));
    // A type the table lacks gets no data: enough for a test of the walk's refusal.
    const [bytes, block] = BYTES[t.type] ?? [0, 1];
    const elements = t.dims.reduce((a, b) => a * b, 1);
    parts.push(Buffer.alloc((elements / block) * bytes));
  }
  writeFileSync(path, Buffer.concat(parts));
  return path;
}
