/** The spec's limits, in one place. Values the operator may change live in configuration. */
export const LIMITS = {
  maxAudioSeconds: 10 * 3600,
  maxDownloadBytes: 2 * 1024 ** 3,
  maxUploadRequestBytes: 100_000_000,
  maxChunkBytes: 16 * 1024 ** 2,
  maxUploadBytes: 2 * 1024 ** 3,
  idempotencyKeyMaxChars: 64,
  /** decisions: idempotency keys are kept 24 hours per account (transcripts' and uploads'). */
  idempotencyKeyTtlMs: 24 * 3600 * 1000,
  urlMaxChars: 2048,
  uploadIdMaxChars: 36,
  languageMaxChars: 16,
  externalIdMaxChars: 128,
  glossaryMaxEntries: 100,
  glossaryMaxTermChars: 80,
  metadataMaxPairs: 20,
  metadataKeyMaxChars: 40,
  metadataValueMaxChars: 500,
  retentionDaysMin: 1,
  retentionDaysMax: 365,
  speakersMin: 1,
  speakersMax: 20,
  pageMax: 100_000,
  perPageMax: 100,
  perPageDefault: 20,
  cursorMaxChars: 200,
  waitMinSeconds: 1,
  waitMaxSeconds: 60,
  freeConcurrentTranscripts: 2,
} as const;

/**
 * Container formats we accept (video for its audio track), each with the ffmpeg demuxer that
 * reads it. The one list: GET /v1/limits advertises the keys, and @hark/media lets ffmpeg and
 * ffprobe run these demuxers and no other (`-format_whitelist`).
 */
export const AUDIO_CONTAINERS = {
  wav: 'wav',
  mp3: 'mp3',
  flac: 'flac',
  ogg: 'ogg',
  opus: 'ogg',
  m4a: 'mov',
  aac: 'aac',
  webm: 'matroska',
  mp4: 'mov',
  mov: 'mov',
  mkv: 'matroska',
  avi: 'avi',
  amr: 'amr',
  aiff: 'aiff',
  wma: 'asf',
} as const;

export type AudioFormat = keyof typeof AUDIO_CONTAINERS;

/** The formats GET /v1/limits advertises (`audio.formats`). */
export const AUDIO_FORMATS = Object.keys(AUDIO_CONTAINERS) as readonly AudioFormat[];
