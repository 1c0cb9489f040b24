// Loaded after the test framework in every integration test file (jest `setupFilesAfterEnv`).
// jest-env.ts turns on the API's response validator (HARK_VALIDATE_RESPONSES=1); every response
// outside docs/openapi.json is recorded, and this fails the test during which it was sent.
import { formatContractViolation, takeContractViolations } from '@hark/core/testing';

export function assertNoContractViolations(): void {
  const found = takeContractViolations();
  if (found.length === 0) return;
  throw new Error(
    `${found.length} response(s) outside the OpenAPI document (fix the API or apps/api/src/openapi, then pnpm openapi):\n` +
      found.map((v) => `  ${formatContractViolation(v)}`).join('\n'),
  );
}

afterEach(assertNoContractViolations);
afterAll(assertNoContractViolations);
