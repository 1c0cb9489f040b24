import { open } from 'node:fs/promises';

/** The parts of a ggml whisper model's header that tell its shape (whisper.cpp `whisper_model_load`). */
export interface ModelHeader {
  nVocab: number;
  nAudioState: number;
  nTextLayer: number;
  /** 0 f32, 1 f16, else quantised (the quantisation version dropped). */
  ftype: number;
}

/** Reads the header: the magic, then int32 hparams n_vocab (byte 4), n_audio_state (12), n_text_layer (36), ftype (44). */
export async function readModelHeader(modelPath: string): Promise<ModelHeader> {
  const file = await open(modelPath, 'r');
  try {
    const b = Buffer.alloc(48);
    const { bytesRead } = await file.read(b, 0, 48, 0);
    if (bytesRead < 48 || b.readUInt32LE(0) !== 0x67676d6c)
      throw new Error(`${modelPath} is not a ggml model`);
    return {
      nVocab: b.readInt32LE(4),
      nAudioState: b.readInt32LE(12),
      nTextLayer: b.readInt32LE(36),
      ftype: b.readInt32LE(44) % 1000,
    };
  } finally {
    await file.close();
  }
}

const SIZES: Record<number, { layers: number; name: string }> = {
  384: { layers: 4, name: 'tiny' },
  512: { layers: 6, name: 'base' },
  768: { layers: 12, name: 'small' },
  1024: { layers: 24, name: 'medium' },
};

/**
 * The whisper-cli `-dtw` preset (the model's alignment heads, as OpenAI published them) for a
 * model of this shape, or null when the shape does not name one: large v1 and v2 share a shape
 * but not their heads, and a model of another shape has no published heads. English-only models
 * have 51864 tokens, large v3 51866.
 */
export function dtwPresetFor(h: ModelHeader): string | null {
  if (h.nVocab === 51866 && h.nAudioState === 1280) {
    if (h.nTextLayer === 32) return 'large.v3';
    if (h.nTextLayer === 4) return 'large.v3.turbo';
    return null;
  }
  const size = SIZES[h.nAudioState];
  if (!size || size.layers !== h.nTextLayer) return null;
  if (h.nVocab === 51864) return `${size.name}.en`;
  if (h.nVocab === 51865) return size.name;
  return null;
}

/** The `-dtw` preset of the model file, or null (see `dtwPresetFor`). */
export async function dtwPreset(modelPath: string): Promise<string | null> {
  return dtwPresetFor(await readModelHeader(modelPath));
}
