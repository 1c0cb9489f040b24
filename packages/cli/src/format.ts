/** Plain-text rendering of command results: `key: value` lines, tables for lists. */
export function formatHuman(title: string, value: unknown): string {
  const lines = [title];
  if (Array.isArray(value)) {
    if (value.length === 0) return `${title}: none`;
    const cols = Object.keys(value[0] as object);
    const rows = value.map((r) => cols.map((c) => cell((r as Record<string, unknown>)[c])));
    const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
    lines.push(cols.map((c, i) => c.padEnd(widths[i]!)).join('  '));
    for (const r of rows) lines.push(r.map((v, i) => v.padEnd(widths[i]!)).join('  '));
    return lines.join('\n');
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (Array.isArray(v)) lines.push(formatHuman(`  ${k}`, v).replace(/\n/g, '\n  '));
    else lines.push(`  ${k}: ${cell(v)}`);
  }
  return lines.join('\n');
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  return typeof v === 'object' ? JSON.stringify(v) : String(v as string | number | boolean);
}
