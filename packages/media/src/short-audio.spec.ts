import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWavDuration } from './decode';
import { MIN_ENGINE_SAMPLES, padShortWav } from './short-audio';
import { pcmWav } from './wav';

/** 16 kHz (or `rate`) mono s16le WAV of `samples` samples of value 1000. */
function wav(samples: number, { rate = 16000 } = {}): Buffer {
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(1000, i * 2);
  return pcmWav(data, rate);
}

describe('padShortWav', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'hark-short-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const file = (content: Buffer | string) => {
    const path = join(dir, 'in.wav');
    writeFileSync(path, content);
    return path;
  };

  it('pads one sample with silence to 50 ms in a copy, keeping the sample and the original', async () => {
    const input = file(wav(1));
    const padded = await padShortWav(input, dir);
    expect(padded).not.toBe(input);
    expect(MIN_ENGINE_SAMPLES).toBe(800);
    await expect(readWavDuration(padded)).resolves.toBe(0.05);
    const bytes = readFileSync(padded);
    expect(bytes.readInt16LE(44)).toBe(1000);
    expect(bytes.subarray(46).every((b) => b === 0)).toBe(true);
    expect(readFileSync(input)).toEqual(wav(1));
  });

  it('leaves audio of 50 ms or more, and anything that is not 16 kHz mono PCM, as it is', async () => {
    for (const content of [wav(MIN_ENGINE_SAMPLES), wav(16000), wav(1, { rate: 8000 }), 'not a wav']) {
      const input = file(content);
      await expect(padShortWav(input, dir)).resolves.toBe(input);
    }
    await expect(padShortWav(join(dir, 'missing.wav'), dir)).resolves.toBe(join(dir, 'missing.wav'));
  });
});
