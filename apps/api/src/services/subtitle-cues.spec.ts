import { type CueOptions, MIN_CUE_SECONDS, type SubtitleWord, buildCues, layoutLines } from './subtitle-cues';

const OPTS: CueOptions = { maxLineLength: 42, maxCueDuration: 6, maxLines: 2 };

/** Words from a sentence, each `step` seconds long, back to back from `at`. */
function words(text: string, at = 0, step = 0.3, speaker: string | null = null): SubtitleWord[] {
  return text.split(' ').map((t, i) => ({
    start: +(at + i * step).toFixed(3),
    end: +(at + (i + 1) * step).toFixed(3),
    text: t,
    speaker,
  }));
}

const texts = (cues: ReturnType<typeof buildCues>) => cues.map((c) => c.lines.join(' | '));

describe('buildCues', () => {
  it('no words: no cues; blank words are skipped', () => {
    expect(buildCues([], OPTS)).toEqual([]);
    expect(buildCues([{ start: 0, end: 1, text: '  ', speaker: null }], OPTS)).toEqual([]);
  });

  it('a short sentence is one cue timed from its first word start to its last word end', () => {
    const cues = buildCues(words('Hello there, how are you?', 1.2), OPTS);
    expect(cues).toEqual([{ start: 1.2, end: 2.7, speaker: null, lines: ['Hello there, how are you?'] }]);
  });

  it('never puts more than maxLines lines of maxLineLength characters in a cue', () => {
    const text =
      'the quick brown fox jumps over the lazy dog and keeps on running far into the night until morning';
    const cues = buildCues(words(text, 0, 0.1), { ...OPTS, maxLineLength: 20, maxLines: 2 });
    expect(cues.length).toBeGreaterThan(1);
    for (const cue of cues) {
      expect(cue.lines.length).toBeLessThanOrEqual(2);
      for (const line of cue.lines) expect(line.length).toBeLessThanOrEqual(20);
    }
    // Nothing lost, nothing repeated, order kept.
    expect(cues.flatMap((c) => c.lines).join(' ')).toBe(text);
  });

  it('balances the lines of a cue', () => {
    const cues = buildCues(words('one two three four five six seven eight nine ten', 0, 0.1), {
      ...OPTS,
      maxLineLength: 30,
    });
    expect(texts(cues)).toEqual(['one two three four five | six seven eight nine ten']);
  });

  it('never lets a cue last longer than maxCueDuration', () => {
    const cues = buildCues(words('a b c d e f g h i j k l', 0, 1), { ...OPTS, maxCueDuration: 3.5 });
    expect(texts(cues)).toEqual(['a b c', 'd e f', 'g h i', 'j k l']);
    for (const c of cues) expect(c.end - c.start).toBeLessThanOrEqual(3.5);
  });

  it('prefers to cut after a sentence end when a limit is reached', () => {
    const cues = buildCues(words('Yes we did. Then we went home and slept', 0, 1), {
      ...OPTS,
      maxCueDuration: 6,
    });
    expect(texts(cues)).toEqual(['Yes we did.', 'Then we went home and slept']);
  });

  it('falls back to a clause mark in the second half of the cue, then to the limit itself', () => {
    const clause = buildCues(words('we went to the shop, then we bought', 0, 1), {
      ...OPTS,
      maxCueDuration: 6,
    });
    expect(texts(clause)).toEqual(['we went to the shop,', 'then we bought']);
    const early = buildCues(words('So, we went to the shop and bought', 0, 1), {
      ...OPTS,
      maxCueDuration: 6,
    });
    expect(texts(early)).toEqual(['So, we went to the shop', 'and bought']);
  });

  it('ends a cue at a sentence end once it holds half a line', () => {
    const cues = buildCues(words('This is the first sentence. And this is the second one.', 0, 0.2), OPTS);
    expect(texts(cues)).toEqual(['This is the first sentence.', 'And this is the second one.']);
    // A short exclamation stays with what follows.
    expect(texts(buildCues(words('Yes. I agree with you.', 0, 0.2), OPTS))).toEqual([
      'Yes. I agree with you.',
    ]);
  });

  it('sentence ends count with closing quotes and brackets', () => {
    const cues = buildCues(words('He said "we are leaving right now." Then he left the room', 0, 0.2), OPTS);
    expect(texts(cues)[0]).toBe('He said "we are leaving right now."');
  });

  it('starts a new cue whenever the speaker changes', () => {
    const cues = buildCues(
      [...words('Hi there.', 0, 0.3, 'A'), ...words('Hello.', 0.6, 0.3, 'B'), ...words('Bye', 0.9, 0.3, 'A')],
      OPTS,
    );
    expect(cues.map((c) => [c.speaker, c.lines.join(' ')])).toEqual([
      ['A', 'Hi there.'],
      ['B', 'Hello.'],
      ['A', 'Bye'],
    ]);
  });

  it('a word longer than a line gets a line of its own, never split', () => {
    const long = 'Pneumonoultramicroscopicsilicovolcanoconiosis';
    const cues = buildCues(words(`a ${long} b`, 0, 0.2), { ...OPTS, maxLineLength: 10, maxLines: 2 });
    expect(cues.flatMap((c) => c.lines)).toContain(long);
    expect(cues.flatMap((c) => c.lines).join(' ')).toBe(`a ${long} b`);
    for (const c of cues) expect(c.lines.length).toBeLessThanOrEqual(2);
  });

  it('a word longer than maxCueDuration gets a cue of its own', () => {
    const ws: SubtitleWord[] = [
      { start: 0, end: 0.5, text: 'so', speaker: null },
      { start: 0.5, end: 9, text: 'uhhhhm', speaker: null },
      { start: 9, end: 9.5, text: 'ok', speaker: null },
    ];
    expect(buildCues(ws, OPTS).map((c) => [c.start, c.end, c.lines.join(' ')])).toEqual([
      [0, 0.5, 'so'],
      [0.5, 9, 'uhhhhm'],
      [9, 9.5, 'ok'],
    ]);
  });

  it('zero-length words: a cue of zero length is shown MIN_CUE_SECONDS, never into the next cue', () => {
    const ws: SubtitleWord[] = [
      { start: 1, end: 1, text: 'Hi.', speaker: 'A' },
      { start: 1.2, end: 1.2, text: 'Yo.', speaker: 'B' },
      { start: 5, end: 5, text: 'Ok', speaker: 'A' },
    ];
    expect(buildCues(ws, OPTS).map((c) => [c.start, c.end])).toEqual([
      [1, 1.2],
      [1.2, 1.2 + MIN_CUE_SECONDS],
      [5, 5 + MIN_CUE_SECONDS],
    ]);
  });

  it('white space inside a word, line breaks included, is one space: a word never ends a cue', () => {
    const ws: SubtitleWord[] = [
      { start: 0, end: 1, text: 'THE\n\n99\n00:00:00,000 --> 00:00:01,000\r\nX', speaker: null },
      { start: 1, end: 2, text: 'end', speaker: null },
    ];
    expect(buildCues(ws, OPTS).map((c) => c.lines)).toEqual([['THE 99 00:00:00,000 --> 00:00:01,000 X end']]);
  });

  it('cues that start at one instant share the time to the next cue: none ends where it starts', () => {
    // whisper.cpp stacks words at one instant ("That is to" at 9.34-9.34); a one-word line cuts them apart.
    const ws: SubtitleWord[] = [
      { start: 9.34, end: 9.34, text: 'That', speaker: null },
      { start: 9.34, end: 9.34, text: 'is', speaker: null },
      { start: 9.34, end: 9.34, text: 'to', speaker: null },
      { start: 9.64, end: 10, text: 'say,', speaker: null },
      { start: 48.84, end: 48.84, text: 'Well,', speaker: null },
      { start: 48.84, end: 49.5, text: 'good', speaker: null },
    ];
    const cues = buildCues(ws, { maxLineLength: 4, maxLines: 1, maxCueDuration: 1 });
    expect(cues.map((c) => [c.start, c.end, c.lines.join(' ')])).toEqual([
      [9.34, 9.44, 'That'],
      [9.44, 9.54, 'is'],
      [9.54, 9.64, 'to'],
      [9.64, 10, 'say,'],
      [48.84, 49.17, 'Well,'],
      [49.17, 49.5, 'good'],
    ]);
  });

  it('more cues at one instant than it has milliseconds before the next still each last 1 ms, in order', () => {
    const ws: SubtitleWord[] = ['a', 'b', 'c'].map((text) => ({ start: 1, end: 1, text, speaker: null }));
    ws.push({ start: 1.001, end: 1.5, text: 'd', speaker: null });
    const cues = buildCues(ws, { maxLineLength: 1, maxLines: 1, maxCueDuration: 1 });
    expect(cues.map((c) => [c.start, c.end])).toEqual([
      [1, 1.001],
      [1.001, 1.002],
      [1.002, 1.003],
      [1.003, 1.5],
    ]);
  });

  it('a word ending before it starts is treated as zero-length; overlapping words do not overlap cues', () => {
    const ws: SubtitleWord[] = [
      { start: 0, end: 2.05, text: 'first.', speaker: 'A' },
      { start: 2, end: 1.9, text: 'second', speaker: 'B' },
      { start: 2.5, end: 3, text: 'third', speaker: 'B' },
    ];
    const cues = buildCues(ws, OPTS);
    expect(cues.map((c) => [c.start, c.end])).toEqual([
      [0, 2],
      [2, 3],
    ]);
  });

  it('the label width is taken from the first line', () => {
    // 12 + 1 + 12 = 25 fits a 26-character line, but not with `A: ` in front.
    const ws = words('abcdefghijkl mnopqrstuvwx', 0, 0.5, 'A');
    expect(buildCues(ws, { ...OPTS, maxLineLength: 26, maxLines: 1 })).toHaveLength(1);
    const labelled = buildCues(ws, {
      ...OPTS,
      maxLineLength: 26,
      maxLines: 1,
      labelWidth: (s) => (s ? s.length + 2 : 0),
    });
    expect(texts(labelled)).toEqual(['abcdefghijkl', 'mnopqrstuvwx']);
  });

  it('trims the text of words', () => {
    expect(texts(buildCues([{ start: 0, end: 1, text: ' hello ', speaker: null }], OPTS))).toEqual(['hello']);
  });
});

describe('layoutLines', () => {
  it('one line when asked for one; as many lines as asked otherwise, even', () => {
    expect(layoutLines(['a', 'bb', 'ccc'], 42, 0, 1)).toEqual(['a bb ccc']);
    expect(layoutLines(['aaaa', 'bb', 'cc', 'dddd'], 42, 0, 2)).toEqual(['aaaa bb', 'cc dddd']);
  });

  it('the longest line as short as can be', () => {
    expect(layoutLines(['aaaaaaaa', 'b', 'c'], 10, 0, 2)).toEqual(['aaaaaaaa', 'b c']);
    expect(layoutLines(['aaaa', 'bbbb', 'cccccccc'], 10, 0, 2)).toEqual(['aaaa bbbb', 'cccccccc']);
  });

  it('only a single word may pass the limit', () => {
    expect(layoutLines(['aaaaaaaaaaaaaa', 'b', 'c'], 10, 0, 2)).toEqual(['aaaaaaaaaaaaaa', 'b c']);
  });

  it('counts the label on the first line', () => {
    expect(layoutLines(['aaaa', 'bbbb'], 9, 3, 2)).toEqual(['aaaa', 'bbbb']);
  });

  it('never more lines than words', () => {
    expect(layoutLines(['only'], 42, 0, 3)).toEqual(['only']);
  });
});

describe('buildCues on generated transcripts', () => {
  // A small seeded generator: the same cases on every run.
  function rng(seed: number) {
    let s = seed;
    return () => {
      s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
      return s / 2_147_483_648;
    };
  }

  it('keeps every word once and in order, within every limit a word allows', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rand = rng(seed);
      const opts: CueOptions = {
        maxLineLength: 10 + Math.floor(rand() * 60),
        maxCueDuration: 1 + rand() * 10,
        maxLines: 1 + Math.floor(rand() * 3),
      };
      const ws: SubtitleWord[] = [];
      let t = rand() * 5;
      const speakers = ['A', 'B', null];
      for (let i = 0; i < 80; i++) {
        const length = 1 + Math.floor(rand() * (rand() < 0.05 ? 70 : 9));
        const punct = ['', '', '', '.', ',', '?'][Math.floor(rand() * 6)];
        const duration = rand() < 0.1 ? 0 : rand() * 1.5;
        ws.push({
          start: +t.toFixed(3),
          end: +(t + duration).toFixed(3),
          text: 'x'.repeat(length) + punct,
          speaker: speakers[Math.floor(rand() * 1.2)] ?? null,
        });
        t += duration + (rand() < 0.2 ? rand() * 3 : 0);
      }
      const cues = buildCues(ws, opts);
      expect(cues.flatMap((c) => c.lines).join(' ')).toBe(ws.map((w) => w.text).join(' '));
      cues.forEach((c, i) => {
        const single = c.lines.length === 1 && !c.lines[0]!.includes(' ');
        expect(c.lines.length).toBeLessThanOrEqual(opts.maxLines);
        for (const line of c.lines)
          if (line.includes(' ')) expect(line.length).toBeLessThanOrEqual(opts.maxLineLength);
        if (!single) expect(c.end - c.start).toBeLessThanOrEqual(opts.maxCueDuration + 1e-6);
        expect(c.end).toBeGreaterThanOrEqual(c.start);
        const next = cues[i + 1];
        if (next) expect(c.end).toBeLessThanOrEqual(Math.max(next.start, c.start));
      });
    }
  });
});
