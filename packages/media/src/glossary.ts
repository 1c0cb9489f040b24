import { type TimedWord } from './words';

export { wordsToText } from './words';

/** What the engine hears -> what to write (the create request's `glossary`). */
export type Glossary = Readonly<Record<string, string>>;

/**
 * Built-in corrections (api-spec "Glossary": applied before the caller's glossary):
 *  1. whitespace inside a word collapses to single spaces, and empty words are dropped;
 *  2. `[BLANK_AUDIO]`, whisper.cpp's marker for silence, is dropped: it is not speech;
 *  3. a word that is only closing punctuation (the " ," / " ." artefact) joins the word before
 *     it, whose end time stretches to cover it.
 */
export function applyBuiltInCorrections<W extends TimedWord>(words: readonly W[]): W[] {
  const out: W[] = [];
  for (const word of words) {
    const text = word.text.replace(/\s+/g, ' ').trim();
    if (text === '' || text === '[BLANK_AUDIO]') continue;
    const previous = out[out.length - 1];
    if (previous && CLOSING_ONLY.test(text)) {
      out[out.length - 1] = {
        ...previous,
        text: previous.text + text,
        end: Math.max(previous.end, word.end),
      };
    } else {
      out.push(text === word.text ? word : { ...word, text });
    }
  }
  return out;
}

const CLOSING_ONLY = /^[.,;:!?…)\]}»”’"']+$/u;

/** Built-in corrections, then the caller's glossary. Words are never mutated. */
export function applyCorrections<W extends TimedWord>(words: readonly W[], glossary?: Glossary | null): W[] {
  const corrected = applyBuiltInCorrections(words);
  return glossary ? applyGlossary(corrected, glossary) : corrected;
}

interface Part {
  lead: string;
  core: string;
  trail: string;
}
interface Entry {
  parts: Part[];
  value: string;
}

/**
 * Replaces whole words and multi-word phrases, case-insensitively, longest phrase first, left to
 * right; replaced text is not searched again, so entries never chain. A phrase match becomes one
 * word from the first word's start to the last word's end (other fields from the first word).
 * Punctuation around the matched words stays (`kubernetes,` -> `Kubernetes,`) unless the key
 * itself holds it; punctuation between the words of a phrase must match the key's.
 */
export function applyGlossary<W extends TimedWord>(words: readonly W[], glossary: Glossary): W[] {
  const entries = compile(glossary);
  if (entries.length === 0) return [...words];
  const parts = words.map((w) => split(w.text));
  const out: W[] = [];
  for (let i = 0; i < words.length; ) {
    const match = entries.find((e) => matchesAt(e, parts, i));
    const first = words[i] as W;
    if (!match) {
      out.push(first);
      i++;
      continue;
    }
    const n = match.parts.length;
    const last = words[i + n - 1] as W;
    const keyFirst = match.parts[0] as Part;
    const keyLast = match.parts[n - 1] as Part;
    const wordLead = (parts[i] as Part).lead;
    const lead = wordLead.slice(0, wordLead.length - keyFirst.lead.length);
    const trail = (parts[i + n - 1] as Part).trail.slice(keyLast.trail.length);
    out.push({ ...first, end: last.end, text: lead + match.value + trail });
    i += n;
  }
  return out;
}

function compile(glossary: Glossary): Entry[] {
  const entries: Entry[] = [];
  for (const [key, value] of Object.entries(glossary)) {
    const parts = key.trim().split(/\s+/).map(split);
    if (parts.some((p) => p.core === '') || value.trim() === '') continue;
    entries.push({ parts, value: value.trim() });
  }
  // Longest phrase first, then longest text; a stable sort keeps the caller's order for ties.
  const length = (e: Entry) => e.parts.reduce((sum, p) => sum + p.core.length, 0);
  return entries.sort((a, b) => b.parts.length - a.parts.length || length(b) - length(a));
}

function matchesAt(entry: Entry, parts: readonly Part[], at: number): boolean {
  const n = entry.parts.length;
  if (at + n > parts.length) return false;
  return entry.parts.every((key, j) => {
    const word = parts[at + j] as Part;
    if (word.core !== key.core) return false;
    // Outer edges may carry extra punctuation (kept); inner edges must be exactly the key's.
    const leadOk = j === 0 ? word.lead.endsWith(key.lead) : word.lead === key.lead;
    const trailOk = j === n - 1 ? word.trail.startsWith(key.trail) : word.trail === key.trail;
    return leadOk && trailOk;
  });
}

/** Leading punctuation, the word (compared case-insensitively), trailing punctuation. */
function split(text: string): Part {
  const m = /^(\p{P}*)(.*?)(\p{P}*)$/su.exec(text.trim()) as RegExpExecArray;
  return { lead: m[1] ?? '', core: (m[2] ?? '').normalize('NFC').toLowerCase(), trail: m[3] ?? '' };
}
