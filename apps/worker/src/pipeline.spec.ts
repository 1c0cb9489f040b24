import { chargedSeconds, plausibleLength, withinAudio, wordTiming } from './pipeline';

describe('chargedSeconds', () => {
  it('ignores decoder padding of the last frame (3 s AAC decodes to 3.02 s)', () => {
    expect(chargedSeconds(3, 3.0196875)).toBe(3);
    expect(chargedSeconds(11.01, 11)).toBe(11);
  });

  it('trusts the decoded length when the container misreports by more than the padding', () => {
    expect(chargedSeconds(1, 600)).toBe(600);
    expect(chargedSeconds(600, 12)).toBe(12);
  });
});

describe('plausibleLength', () => {
  it('trusts a claimed length the bytes can hold at 4 kbit/s, not one they cannot', () => {
    // 11 h of 32 kbit/s MP3 is 158 MB; a 300 KB FLAC whose header says 11 h is not.
    expect(plausibleLength(11 * 3600, 158_000_000)).toBe(true);
    expect(plausibleLength(11 * 3600, 300_000)).toBe(false);
    expect(plausibleLength(11, 352_000)).toBe(true); // jfk.wav
    expect(plausibleLength(60, 29_999)).toBe(false);
  });
});

describe('withinAudio', () => {
  it('ends words at the end of the audio and drops those that start after it', () => {
    const words = [
      { start: 1, end: 2, text: 'a' },
      { start: 59.9, end: 60.74, text: 'b' },
      { start: 60, end: 61, text: 'c' },
    ];
    expect(withinAudio(words, 60)).toEqual([
      { start: 1, end: 2, text: 'a' },
      { start: 59.9, end: 60, text: 'b' },
    ]);
  });
});

describe('wordTiming', () => {
  it('auto: DTW word times when speakers are labelled, token times otherwise', () => {
    expect(wordTiming('auto', true)).toBe('dtw');
    expect(wordTiming('auto', false)).toBe('tokens');
  });

  it('dtw and tokens hold whatever the job asks', () => {
    for (const withSpeakers of [true, false]) {
      expect(wordTiming('dtw', withSpeakers)).toBe('dtw');
      expect(wordTiming('tokens', withSpeakers)).toBe('tokens');
    }
  });
});
