export * from './blob-store';
export * from './local-blob-store';
export * from './resumable-sha256';
export * from './hashing-thread';
