import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { takeContractViolations } from '@hark/core/testing';
import { REPO_ROOT } from '@hark/testing';
import request from 'supertest';
import { contractApp } from './fixtures/contract-app';

// The validator the whole integration suite runs behind (HARK_VALIDATE_RESPONSES=1, set by
// packages/testing/src/jest-env.ts): deliberately wrong responses must be caught.
const app = contractApp();

/** Violations recorded by the request just made; taking them keeps this file's own hook quiet. */
function violations() {
  return takeContractViolations().map((v) => ({
    operation: v.operation,
    status: v.status,
    problems: v.problems,
  }));
}

describe('response validator', () => {
  it('lets a conforming response through unchanged', async () => {
    const res = await request(app).get('/v1/balance').expect(200);
    expect(res.body).toEqual({ data: { currency: 'USD', total: 1, reserved: 0, available: 1 } });
    expect(violations()).toEqual([]);
  });

  it('a body outside its schema becomes a 500 naming the problem, and is recorded', async () => {
    const res = await request(app).get('/v1/balance?wrong=body').expect(500);
    expect(res.body.error).toMatchObject({
      code: 'internal',
      message: expect.stringContaining('body/data/currency must be equal to constant'),
    });
    expect(violations()).toEqual([
      {
        operation: 'GET /v1/balance',
        status: 200,
        problems: ['body/data/currency must be equal to constant'],
      },
    ]);
  });

  it('an undocumented status is caught', async () => {
    await request(app).get('/v1/balance?wrong=status').expect(500);
    expect(violations()).toEqual([
      {
        operation: 'GET /v1/balance',
        status: 418,
        problems: [expect.stringMatching(/^status 418 is not documented/)],
      },
    ]);
  });

  it('a missing documented header is caught', async () => {
    await request(app).get('/v1/balance?wrong=headers').expect(500);
    expect(violations()).toEqual([
      { operation: 'GET /v1/balance', status: 200, problems: ['required header RateLimit-Reset is missing'] },
    ]);
  });

  it('a leaked internal field (closed objects) and a missing Cache-Control are caught', async () => {
    await request(app).get('/v1/uploads/up_1').expect(500);
    expect(violations()[0]?.problems).toEqual([
      'required header Cache-Control is missing',
      'body/data must NOT have additional properties (hashState)',
    ]);
  });

  it('an error code the operation does not document at that status is caught', async () => {
    await request(app).get('/v1/transcripts/tr_1').expect(500);
    expect(violations()[0]?.problems).toEqual([
      expect.stringMatching(/^body\/error\/code must be equal to one of the allowed values/),
    ]);
  });

  it('a non-JSON response in an undocumented content type is caught when it finishes', async () => {
    await request(app).get('/v1/transcripts/tr_1/subtitles').expect(200);
    await new Promise((r) => setImmediate(r));
    expect(violations()[0]?.problems).toEqual([
      'required header Content-Disposition is missing',
      expect.stringMatching(/^content type text\/html is not documented/),
    ]);
  });

  it('an undocumented route must still answer with the error envelope', async () => {
    await request(app).get('/v1/nowhere').expect(500);
    expect(violations()[0]?.problems[0]).toMatch(/^status 200 on an undocumented operation/);
  });

  it('operator endpoints outside /v1 that the document does not name are not checked', async () => {
    await request(app).get('/metrics').expect(200);
    expect(violations()).toEqual([]);
  });

  it('fails the test that caused a violation, even when its own assertions pass', () => {
    const base = (
      createRequire(__filename)(path.join(REPO_ROOT, 'jest.config.js')) as {
        projects: Record<string, unknown>[];
      }
    ).projects.find((p) => p.displayName === 'integration')!;
    const config = {
      ...base,
      rootDir: REPO_ROOT,
      testMatch: ['<rootDir>/apps/api/test/fixtures/contract-violation.fixture.ts'],
    };
    const run = spawnSync(
      process.execPath,
      [
        path.join(REPO_ROOT, 'node_modules/jest/bin/jest.js'),
        '--config',
        JSON.stringify(config),
        '--ci',
        '--colors=false',
      ],
      { cwd: REPO_ROOT, env: process.env, encoding: 'utf8', timeout: 50_000 },
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('1 response(s) outside the OpenAPI document');
    expect(run.stderr).toContain('GET /v1/uploads/up_1 -> 200 (GET /v1/uploads/{id})');
    expect(run.stderr).toMatch(/Tests:\s+1 failed, 1 total/);
  });
});
