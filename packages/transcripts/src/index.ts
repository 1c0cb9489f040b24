export * from './transitions';
export * from './list-item';
export * from './feed';
export * from './upload-readers';
export * from './erase';
export * from './visibility';
