#!/usr/bin/env node
// `hark`: the operator CLI. Talks to Postgres directly (DATABASE_URL, HARK_SECRET).
import '@hark/core/require-node'; // first: an older Node stops here, saying which it needs
import { ConfigError, commonConfig, isHarkError } from '@hark/core';
import { createDb } from '@hark/db';
import { CommanderError, buildProgram } from './program';

async function main(): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(
    async () => {
      const cfg = commonConfig(process.env);
      return { db: createDb({ databaseUrl: cfg.databaseUrl, poolSize: 2 }), secret: cfg.secret };
    },
    (code) => (exitCode = code),
  );
  await program.parseAsync(process.argv);
  return exitCode;
}

main()
  .then((code) => process.exit(code))
  .catch((e: unknown) => {
    // commander already printed help or the argument error.
    if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
    const msg =
      e instanceof ConfigError || isHarkError(e) ? e.message : `unexpected error: ${(e as Error).message}`;
    console.error(`hark: ${msg}`);
    process.exit(1);
  });
