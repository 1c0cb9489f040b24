import Decimal from 'decimal.js';

// Marks an exact amount inside JSON.stringify's output, where it becomes a bare numeral.
const MARK = '\u0000';
const MARKED = /"\\u0000(-?\d+(?:\.\d+)?)\\u0000"/g;

/**
 * A money amount printed with every digit: decisions say amounts are exact decimals, and a JS
 * number prints 1000123456789012345.6789012344 as 1000123456789012400. In JSON it is a numeral
 * (`formatJson`), in text its digits.
 */
export class Money {
  readonly digits: string;

  constructor(value: Decimal.Value | { toString(): string }) {
    // Parsing keeps every digit given (precision applies to arithmetic only).
    this.digits = new Decimal(value.toString()).toFixed();
  }

  toJSON(): string {
    return `${MARK}${this.digits}${MARK}`;
  }
}

/** JSON of a command result, amounts as exact numerals. */
export function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(MARKED, '$1');
}

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
  if (v instanceof Money) return v.digits;
  return typeof v === 'object' ? JSON.stringify(v) : String(v as string | number | boolean);
}
