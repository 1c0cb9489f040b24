export * from './blob-store';
export * from './local-blob-store';
export * from './resumable-sha256';
export * from './hashing-thread';
export * from './upload-hashing';
export * from './native-sha256';
export * from './choose-upload-hashing';
