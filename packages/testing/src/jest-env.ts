// Loaded before every integration test file. scripts/test.sh starts Postgres and Redis and
// exports DATABASE_URL / REDIS_URL; running jest by hand needs the same variables.
process.env.HARK_SECRET ??= 'test-secret-0123456789abcdef';
process.env.LOG_LEVEL ??= 'silent';
process.env.ALLOW_PRIVATE_URLS ??= 'true';
// Every response of an API app built in a test is checked against the OpenAPI document.
process.env.HARK_VALIDATE_RESPONSES ??= '1';
if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
  throw new Error(
    'integration tests need DATABASE_URL and REDIS_URL: run them through `bash scripts/test.sh`',
  );
}
