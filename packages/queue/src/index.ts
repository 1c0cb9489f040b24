export * from './catalog';
export * from './connection';
