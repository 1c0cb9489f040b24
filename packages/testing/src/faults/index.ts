// Building blocks for fault-injection tests (`@hark/testing/faults`): a private Redis to flush
// and restart, the fault Postgres to crash and restart, a private S3Proxy to kill and restart,
// stand-in engines, the app processes of a scenario, loopback servers, a never-throwing HTTP
// client, and the invariants checked after each scenario. faults/scenarios/*.fault.ts use them through `faultScenario`.
export * from './checks';
export * from './config';
export * from './engines';
export * from './fleet';
export * from './http';
export * from './loopback';
export * from './own-postgres';
export * from './own-redis';
export * from './own-s3proxy';
export * from './scenario';
export * from './small-disk';
export * from './timing';
