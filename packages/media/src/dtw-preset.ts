import { type ModelHeader, readModelHeader } from './model-header';

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
