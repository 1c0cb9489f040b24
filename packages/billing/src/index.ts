export * from './accounts';
export * from './holds';
export * from './api-keys';
