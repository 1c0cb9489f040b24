export * from './errors';
export * from './money';
export * from './ids';
export * from './api-keys';
export * from './limits';
export * from './env';
export * from './validation';
export * from './languages';
