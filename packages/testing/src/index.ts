export * from './wait-for';
export * from './factories';
export * from './invariants';
export * from './processes';
export * from './prometheus';
export * from './s3';
export * from './test-env';
export * from './webhook-receiver';
