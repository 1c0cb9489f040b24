import { readFile } from 'node:fs/promises';

/** One speaker turn: `speaker` talks from `start` to `end` seconds in `file`. */
export interface Turn {
  file: string;
  start: number;
  end: number;
  speaker: string;
}

/**
 * Parses RTTM `SPEAKER` lines (NIST format: type file channel start duration <NA> <NA> speaker
 * <NA> <NA>). Other line types (SPKR-INFO, LEXEME...) and `;;` comments are skipped.
 */
export function parseRttm(text: string): Turn[] {
  const turns: Turn[] = [];
  text.split('\n').forEach((line, i) => {
    const fields = line.trim().split(/\s+/);
    if (fields[0] !== 'SPEAKER') return;
    const [, file, , start, duration, , , speaker] = fields;
    const s = Number(start);
    const d = Number(duration);
    if (!file || !speaker || !Number.isFinite(s) || !Number.isFinite(d) || d < 0) {
      throw new Error(`RTTM line ${i + 1}: malformed: ${line}`);
    }
    turns.push({ file, start: s, end: s + d, speaker });
  });
  return turns;
}

export async function readRttm(path: string): Promise<Turn[]> {
  return parseRttm(await readFile(path, 'utf8'));
}

export function formatRttm(turns: Turn[]): string {
  return turns
    .map(
      (t) =>
        `SPEAKER ${t.file} 1 ${t.start.toFixed(3)} ${(t.end - t.start).toFixed(3)} <NA> <NA> ${t.speaker} <NA> <NA>\n`,
    )
    .join('');
}
