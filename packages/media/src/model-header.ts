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
