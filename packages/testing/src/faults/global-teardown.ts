// jest globalTeardown of the `faults` project (runs after jest's own summary): the table of
// scenarios (scenario | result | time | figures), the total time and "N passed, M failed".
import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { ReportRow } from './scenario';

export default function globalTeardown(): void {
  const file = process.env.FAULTS_REPORT;
  const rows = (file && existsSync(file) ? readFileSync(file, 'utf8') : '')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ReportRow)
    .sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
  console.log('\n| scenario | result | time | figures |\n|---|---|---|---|');
  for (const r of rows)
    console.log(`| ${r.name} | ${r.ok ? 'pass' : 'FAIL'} | ${r.secs.toFixed(1)} s | ${r.figures} |`);
  const failed = rows.filter((r) => !r.ok).length;
  const t0 = Number(process.env.FAULTS_STARTED_AT ?? Date.now());
  console.log(`\ntotal ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  console.log(`${rows.length - failed} passed, ${failed} failed`);
  if (file && process.env.FAULTS_REPORT_MADE === '1') rmSync(file, { force: true });
}
