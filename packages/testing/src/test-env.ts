import path from 'node:path';
import { REPO_ROOT } from './processes';

/** The models and audio the tests use: HARK_SHARED_DIR (the test command sets it), else beside the repository. */
export const SHARED_DIR = process.env.HARK_SHARED_DIR ?? path.resolve(REPO_ROOT, '../shared');

/** The models folder (the test command exports HARK_MODELS_DIR). */
const MODELS_DIR = process.env.HARK_MODELS_DIR ?? path.join(SHARED_DIR, 'models');

/**
 * The engine the tests run (the test command exports WHISPER_BIN and WHISPER_MODEL): the test
 * model loads and runs but transcribes to nothing.
 */
export const testEngine = {
  whisperBin: process.env.WHISPER_BIN ?? path.join(REPO_ROOT, '.hark/whisper/bin/whisper-cli'),
  whisperModel: process.env.WHISPER_MODEL ?? path.join(MODELS_DIR, 'for-tests-ggml-base.en.bin'),
  /** The real multilingual base model. */
  baseModel: path.join(MODELS_DIR, 'ggml-base.bin'),
  /** Whisper models and `diarization/` (segmentation and embedding ONNX models). */
  modelsDir: MODELS_DIR,
  /** whisper.cpp's Silero VAD model, as scripts/vad-model.sh makes it (the test command does). */
  vadModel: process.env.WHISPER_VAD_MODEL ?? path.join(REPO_ROOT, '.hark/models/ggml-silero-v5.1.2.bin'),
};

/** Speech the tests transcribe: jfk.wav (11 s), a 60 s file, and a real meeting excerpt (30 s, 4 people). */
export const testAudio = {
  jfkWav: path.join(SHARED_DIR, 'audio/jfk.wav'),
  speech60Wav: path.join(SHARED_DIR, 'audio/speech-60s.wav'),
  meetingTrn05Wav: path.join(SHARED_DIR, 'eval/diar/trn05.wav'),
};
