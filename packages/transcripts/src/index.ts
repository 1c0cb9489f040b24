export * from './transitions';
export * from './list-item';
