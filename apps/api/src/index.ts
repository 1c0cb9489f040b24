// `@hark/api`: the API as an embeddable app, wired as main.ts wires it (used by bench/api).
// `@hark/api/config` is configuration alone, for processes that only need to read it.
export { createApp, type HarkApp } from './app';
export { loadApiConfig, type ApiConfig } from './config';
export type { ApiDeps } from './context';
export { createLogger, type Logger } from './logger';
export { buildApiDeps, connectApiDeps, type BuiltApiDeps, type ConnectedApiDeps } from './wiring';
