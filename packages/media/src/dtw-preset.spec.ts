import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dtwPreset, dtwPresetFor } from './dtw-preset';
import { checkWhisperModel, readModelHeader } from './model-header';

/** A ggml whisper header: magic, then n_vocab, n_audio_ctx, n_audio_state, ..., n_text_layer, n_mels, ftype. */
function header(nVocab: number, nAudioState: number, nTextLayer: number, ftype = 1): Buffer {
  const b = Buffer.alloc(64);
  b.writeUInt32LE(0x67676d6c, 0);
  [nVocab, 1500, nAudioState, 8, nTextLayer, 448, nAudioState, 8, nTextLayer, 80, ftype].forEach((v, i) =>
    b.writeInt32LE(v, 4 + 4 * i),
  );
  return b;
}

describe('dtwPresetFor', () => {
  it.each([
    [51864, 384, 4, 'tiny.en'],
    [51865, 384, 4, 'tiny'],
    [51864, 512, 6, 'base.en'],
    [51865, 512, 6, 'base'],
    [51864, 768, 12, 'small.en'],
    [51865, 768, 12, 'small'],
    [51864, 1024, 24, 'medium.en'],
    [51865, 1024, 24, 'medium'],
    [51866, 1280, 32, 'large.v3'],
    [51866, 1280, 4, 'large.v3.turbo'],
  ])('vocabulary %i, width %i, %i text layers: %s', (nVocab, nAudioState, nTextLayer, preset) => {
    expect(dtwPresetFor({ nVocab, nAudioState, nTextLayer, ftype: 1 })).toBe(preset);
  });

  it('has none for shapes it cannot tell apart or does not know (large v1/v2, fine-tunes of other sizes)', () => {
    expect(dtwPresetFor({ nVocab: 51865, nAudioState: 1280, nTextLayer: 32, ftype: 1 })).toBeNull();
    expect(dtwPresetFor({ nVocab: 51865, nAudioState: 512, nTextLayer: 2, ftype: 1 })).toBeNull();
  });
});

describe('readModelHeader / dtwPreset', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hark-dtw-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the shape from the file (quantised files keep it)', async () => {
    const path = join(dir, 'm.bin');
    writeFileSync(path, header(51865, 512, 6, 2007));
    await expect(readModelHeader(path)).resolves.toEqual({
      nVocab: 51865,
      nAudioState: 512,
      nTextLayer: 6,
      ftype: 7,
    });
    await expect(dtwPreset(path)).resolves.toBe('base');
  });

  it('rejects a file that is not a ggml model', async () => {
    const path = join(dir, 'x.bin');
    writeFileSync(path, Buffer.alloc(64));
    await expect(readModelHeader(path)).rejects.toThrow('not a ggml model');
  });

  it('checkWhisperModel: a whisper model passes; a missing file, another file or another ggml model (Silero VAD) fails', async () => {
    const model = join(dir, 'ggml-base.bin');
    writeFileSync(model, header(51865, 512, 6));
    await expect(checkWhisperModel(model)).resolves.toMatchObject({ nAudioState: 512 });
    await expect(checkWhisperModel(join(dir, 'none.bin'))).rejects.toThrow('ENOENT');
    const html = join(dir, 'page.bin');
    writeFileSync(html, '<html>not found</html>'.repeat(4));
    await expect(checkWhisperModel(html)).rejects.toThrow('not a ggml model');
    // ggml-silero-v5.1.2.bin's first bytes: the magic, then a length-prefixed name.
    const vad = join(dir, 'ggml-silero.bin');
    const b = Buffer.alloc(64);
    b.writeUInt32LE(0x67676d6c, 0);
    b.writeInt32LE(10, 4);
    b.write('silero-16k', 8);
    [5, 1, 2, 512, 64, 4, 129, 128].forEach((v, i) => b.writeInt32LE(v, 18 + 4 * i));
    writeFileSync(vad, b);
    await expect(checkWhisperModel(vad)).rejects.toThrow('not a ggml whisper model');
  });
});
