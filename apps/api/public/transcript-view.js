// @ts-check
// Renders a finished transcript: utterances coloured by speaker, every word a button that seeks
// the player to it, and the word being played highlighted.

/**
 * @typedef {{start: number, end: number, text: string, speaker: string | null}} Word
 * @typedef {{start: number, end: number, text: string, speaker: string | null, overlap?: boolean}} Utterance
 * @typedef {{text: string | null, words: Word[] | null, utterances: Utterance[] | null}} Content
 */

/** Colours in try.css (`.speaker-0` ... `.speaker-7`); more speakers reuse them. */
const SPEAKER_COLOURS = 8;

/** @param {number} s seconds */
export function clock(s) {
  const whole = Math.max(0, Math.floor(s));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/**
 * Blocks to show with the words of each: a word belongs to the last block that starts at or
 * before it (the first block takes any word before it). Without utterances, one block.
 * @param {Content} t
 * @returns {{block: Utterance, words: Word[]}[]}
 */
export function groupWords(t) {
  const words = t.words ?? [];
  const blocks = t.utterances?.length
    ? t.utterances
    : [{ start: 0, end: words.at(-1)?.end ?? 0, text: t.text ?? '', speaker: null }];
  const groups = blocks.map((block) => ({ block, words: /** @type {Word[]} */ ([]) }));
  let b = 0;
  for (const word of words) {
    while (b + 1 < blocks.length && /** @type {Utterance} */ (blocks[b + 1]).start <= word.start) b += 1;
    groups[b]?.words.push(word);
  }
  return groups;
}

/**
 * @param {HTMLElement} container
 * @param {Content} t
 * @param {HTMLAudioElement} player
 */
export function renderTranscript(container, t, player) {
  container.replaceChildren();
  /** @type {Map<string, number>} */
  const speakers = new Map();
  /** @type {{el: HTMLElement, word: Word}[]} */
  const spans = [];
  for (const { block, words } of groupWords(t)) {
    if (!block.text && words.length === 0) continue;
    const item = document.createElement('article');
    item.className = 'utterance';
    const head = document.createElement('header');
    if (block.speaker !== null) {
      if (!speakers.has(block.speaker)) speakers.set(block.speaker, speakers.size);
      item.classList.add(`speaker-${(speakers.get(block.speaker) ?? 0) % SPEAKER_COLOURS}`);
      const who = document.createElement('span');
      who.className = 'speaker';
      who.textContent = `Speaker ${block.speaker}`;
      head.append(who);
    }
    const at = document.createElement('span');
    at.className = 'at';
    at.textContent = `${clock(block.start)}${block.overlap ? ' · overlapping speech' : ''}`;
    head.append(at);
    const text = document.createElement('p');
    if (words.length === 0) text.textContent = block.text;
    for (const [i, word] of words.entries()) {
      const el = document.createElement('span');
      el.className = 'word';
      el.tabIndex = 0;
      el.setAttribute('role', 'button');
      el.dataset.start = String(word.start);
      el.title = `${word.start.toFixed(2)} s`;
      el.textContent = word.text;
      if (i > 0) text.append(' ');
      text.append(el);
      spans.push({ el, word });
    }
    item.append(head, text);
    container.append(item);
  }
  if (container.childElementCount === 0) {
    const none = document.createElement('p');
    none.className = 'empty';
    none.textContent = 'No speech was found in this audio.';
    container.append(none);
  }

  /** @param {Event} e */
  const seek = (e) => {
    const el = /** @type {HTMLElement | null} */ (
      e.target instanceof Element ? e.target.closest('.word') : null
    );
    if (!el || (e instanceof KeyboardEvent && e.key !== 'Enter' && e.key !== ' ')) return;
    e.preventDefault();
    player.currentTime = Number(el.dataset.start);
    player.play().catch(() => {}); // autoplay refused: the position is still set
  };
  container.onclick = seek;
  container.onkeydown = seek;

  let current = /** @type {HTMLElement | null} */ (null);
  player.ontimeupdate = () => {
    const now = player.currentTime;
    const hit = spans.find(({ word }) => word.start <= now && now < Math.max(word.end, word.start + 0.05));
    if (hit?.el === current) return;
    current?.classList.remove('current');
    current = hit?.el ?? null;
    current?.classList.add('current');
  };
}
