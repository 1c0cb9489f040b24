// jest globalSetup of the `faults` project: checks that the run can start at all and opens the
// report the scenarios write their rows to (FAULTS_REPORT, unless given).
import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { requiredFiles } from './config';

export default function globalSetup(): void {
  for (const f of requiredFiles) {
    if (!existsSync(f)) throw new Error(`missing ${f} (build first: pnpm -s turbo run build)`);
  }
  if (!process.env.FAULTS_REPORT) {
    process.env.FAULTS_REPORT = path.join(tmpdir(), `hark-faults-report-${process.pid}.jsonl`);
    process.env.FAULTS_REPORT_MADE = '1'; // globalTeardown removes it once the table is printed
  }
  writeFileSync(process.env.FAULTS_REPORT, '');
  process.env.FAULTS_STARTED_AT = String(Date.now());
}
