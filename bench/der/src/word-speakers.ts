import type { Turn } from './rttm';

/** A transcribed word with the speaker label the pipeline gave it (null: none). */
export interface LabelledWord {
  start: number;
  end: number;
  speaker: string | null;
}

export interface WordScore {
  /** Every word given. */
  words: number;
  /** Words that fall in reference speech: the rate's denominator. */
  scored: number;
  /** Scored words whose label is not a reference speaker saying them. */
  wrong: number;
  /** Words no reference turn touches (the engine heard speech the reference does not have). */
  outside: number;
  /** wrong / scored (0 when nothing is scored). */
  wder: number;
}

/**
 * Word diarization error rate (WDER, Shafey et al. 2019): of the words said in reference speech,
 * the share whose speaker label is wrong. A word's reference speakers are those whose turns cover
 * at least half of it (both voices of an overlap), or, when none does, the one covering most of
 * it; a label is right when `mapping` (reference speaker to system speaker, one-to-one, as the
 * DER's) takes one of them to it. No label, or a reference speaker the system never found, is
 * wrong. This is what a transcript's reader sees: misses and false alarms in silence between
 * words do not count, a mislabelled word does.
 */
export function scoreWords(
  words: readonly LabelledWord[],
  reference: readonly Turn[],
  mapping: Readonly<Record<string, string>>,
): WordScore {
  let scored = 0;
  let wrong = 0;
  let outside = 0;
  for (const w of words) {
    const speakers = sayers(w, reference);
    if (speakers.length === 0) {
      outside++;
      continue;
    }
    scored++;
    if (w.speaker === null || !speakers.some((r) => mapping[r] === w.speaker)) wrong++;
  }
  return { words: words.length, scored, wrong, outside, wder: scored > 0 ? wrong / scored : 0 };
}

/** The reference speakers of a word (see `scoreWords`). */
function sayers(w: LabelledWord, reference: readonly Turn[]): string[] {
  const span = Math.max(w.end - w.start, 1e-3);
  const covered = new Map<string, number>();
  for (const t of reference) {
    const o = Math.min(t.end, w.start + span) - Math.max(t.start, w.start);
    if (o > 0) covered.set(t.speaker, (covered.get(t.speaker) ?? 0) + o);
  }
  if (covered.size === 0) return [];
  const half = [...covered].filter(([, s]) => s >= span / 2 - 1e-9).map(([r]) => r);
  if (half.length > 0) return half;
  const most = Math.max(...covered.values());
  return [...covered].filter(([, s]) => s === most).map(([r]) => r);
}
