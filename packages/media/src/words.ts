/** A word with its time span in seconds from the start of the audio (millisecond precision). */
export interface TimedWord {
  start: number;
  end: number;
  text: string;
}

/** The transcript text from its words: single spaces between words, punctuation stays attached. */
export function wordsToText(words: readonly Pick<TimedWord, 'text'>[]): string {
  return words
    .map((w) => w.text.trim())
    .filter((t) => t.length > 0)
    .join(' ');
}
