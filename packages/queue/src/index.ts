export * from './catalog';
export * from './connection';
export * from './consumer';
export * from './producers';
export * from './webhook-retry';
export * from './shutdown';
export * from './consumer-close';
