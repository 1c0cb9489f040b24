// `@hark/core/testing`: code for tests only, kept out of `@hark/core`. The OpenAPI response
// validator runs in the API behind HARK_VALIDATE_RESPONSES=1, which only the test suite sets.
export * from './openapi-contract';
