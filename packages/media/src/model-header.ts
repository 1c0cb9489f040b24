import { open } from 'node:fs/promises';

/** The parts of a ggml whisper model's header that tell its shape (whisper.cpp `whisper_model_load`). */
export interface ModelHeader {
  nVocab: number;
  nAudioState: number;
  nTextLayer: number;
  /** 0 f32, 1 f16, else quantised (the quantisation version dropped). */
  ftype: number;
}

/** The magic and the int32 hparams: the first 48 bytes; throws unless the file starts with the ggml magic. */
async function readHeaderBytes(modelPath: string): Promise<Buffer> {
  const file = await open(modelPath, 'r');
  try {
    const b = Buffer.alloc(48);
    const { bytesRead } = await file.read(b, 0, 48, 0);
    if (bytesRead < 48 || b.readUInt32LE(0) !== 0x67676d6c)
      throw new Error(`${modelPath} is not a ggml model`);
    return b;
  } finally {
    await file.close();
  }
}

function parseHeader(b: Buffer): ModelHeader {
  return {
    nVocab: b.readInt32LE(4),
    nAudioState: b.readInt32LE(12),
    nTextLayer: b.readInt32LE(36),
    ftype: b.readInt32LE(44) % 1000,
  };
}

/** Reads the header: the magic, then int32 hparams n_vocab (byte 4), n_audio_state (12), n_text_layer (36), ftype (44). */
export async function readModelHeader(modelPath: string): Promise<ModelHeader> {
  return parseHeader(await readHeaderBytes(modelPath));
}

/**
 * Throws, saying why, unless `modelPath` can be read and is a whisper model in ggml format (what
 * whisper-cli loads): the magic, then hparams of a whisper's shape (n_mels, byte 40, 80 or 128).
 * A ggml file of another kind, such as the Silero VAD model, has other numbers there.
 */
export async function checkWhisperModel(modelPath: string): Promise<ModelHeader> {
  const b = await readHeaderBytes(modelPath);
  const header = parseHeader(b);
  const nMels = b.readInt32LE(40);
  if (header.nVocab <= 0 || header.nAudioState <= 0 || header.nTextLayer <= 0 || ![80, 128].includes(nMels))
    throw new Error(`${modelPath} is not a ggml whisper model (its header has no whisper shape)`);
  return header;
}
