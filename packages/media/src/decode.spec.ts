import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeToWav, meanDownmix, readWavDuration, wavSizeLimit } from './decode';
import { TOOL_ADDRESS_SPACE_BYTES } from './ffmpeg-tools';
import { ProcessError, type RunProcess } from './process-runner';

/** A PCM WAV header (+ optional extra chunk before `data`) followed by `dataBytes` of silence. */
function wav(dataBytes: number, { byteRate = 32000, declared = dataBytes, extraChunk = false } = {}): Buffer {
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8); // PCM
  fmt.writeUInt16LE(1, 10); // mono
  fmt.writeUInt32LE(16000, 12);
  fmt.writeUInt32LE(byteRate, 16);
  fmt.writeUInt16LE(2, 20);
  fmt.writeUInt16LE(16, 22);
  const list = Buffer.concat([
    Buffer.from('LIST', 'ascii'),
    Buffer.from([5, 0, 0, 0]),
    Buffer.from('INFOx\0', 'ascii'),
  ]);
  const data = Buffer.alloc(8);
  data.write('data', 0, 'ascii');
  data.writeUInt32LE(declared, 4);
  const body = Buffer.concat([
    Buffer.from('WAVE', 'ascii'),
    fmt,
    ...(extraChunk ? [list] : []),
    data,
    Buffer.alloc(dataBytes),
  ]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'ascii');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

describe('readWavDuration', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'hark-wav-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const file = (content: Buffer) => {
    const path = join(dir, 'a.wav');
    writeFileSync(path, content);
    return path;
  };

  it('divides the data size by the byte rate', async () => {
    await expect(readWavDuration(file(wav(48000)))).resolves.toBe(1.5);
  });

  it('skips other chunks (odd sizes padded) before data', async () => {
    await expect(readWavDuration(file(wav(32000, { extraChunk: true })))).resolves.toBe(1);
  });

  it('trusts the file length when the data size was never filled in', async () => {
    await expect(readWavDuration(file(wav(16000, { declared: 0xffffffff })))).resolves.toBe(0.5);
  });

  it('rejects something that is not a WAV file', async () => {
    await expect(readWavDuration(file(Buffer.from('ID3 not a wav at all')))).rejects.toThrow(
      /not a RIFF\/WAVE/,
    );
  });
});

describe('decodeToWav', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'hark-decode-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Stands in for ffmpeg: writes `content` to the output named by the last argument. */
  const writing =
    (content: Buffer, args: string[][] = []): RunProcess =>
    async (_command, a) => {
      args.push([...a]);
      writeFileSync((a.at(-1) as string).replace(/^file:/, ''), content);
      return { stdout: '', stderr: '', durationMs: 1 };
    };

  it('asks ffmpeg for 16 kHz mono s16le WAV of the first audio stream and returns its duration', async () => {
    const calls: string[][] = [];
    const out = join(dir, 'out.wav');
    await expect(decodeToWav(__filename, out, { run: writing(wav(64000), calls) })).resolves.toEqual({
      outputPath: out,
      durationSeconds: 2,
      truncated: false,
      outOfRoom: false,
    });
    const args = calls[0] as string[];
    const after = (flag: string) => args[args.indexOf(flag) + 1];
    expect([after('-map'), after('-ac'), after('-ar'), after('-c:a'), after('-f'), after('-i')]).toEqual([
      '0:a:0',
      '1',
      '16000',
      'pcm_s16le',
      'wav',
      `file:${__filename}`,
    ]);
    expect(args).toContain('-vn');
  });

  it('runs only the allowed demuxers on local files, and caps the output a second past maxSeconds', async () => {
    const calls: string[][] = [];
    await decodeToWav(__filename, join(dir, 'out.wav'), { run: writing(wav(64000), calls), maxSeconds: 5 });
    const args = calls[0] as string[];
    const input = args.indexOf('-i');
    const before = args.slice(0, input);
    const after = (list: string[], flag: string) => list[list.indexOf(flag) + 1];
    expect(after(before, '-protocol_whitelist')).toBe('file');
    expect(after(before, '-format_whitelist')).toMatch(/^[a-z0-9,]+$/);
    expect(after(before, '-format_whitelist')?.split(',')).not.toEqual(expect.arrayContaining(['concat']));
    // Output options: after the input.
    const output = args.slice(input + 2);
    expect(after(output, '-t')).toBe('6');
    expect(after(output, '-fs')).toBe(String(wavSizeLimit(5)));
    expect(wavSizeLimit(5)).toBe(6 * 32000 + 4096);
  });

  it('lets no video decoder of the input allocate a big picture, and caps the address space', async () => {
    const calls: string[][] = [];
    const options: unknown[] = [];
    const run: RunProcess = async (command, a, o) => {
      options.push(o);
      return writing(wav(64000), calls)(command, a, o);
    };
    await decodeToWav(__filename, join(dir, 'out.wav'), { run });
    const args = calls[0] as string[];
    const before = args.slice(0, args.indexOf('-i'));
    expect(before[before.indexOf('-max_pixels') + 1]).toBe('4096');
    expect(before[before.indexOf('-threads') + 1]).toBe('1');
    expect(options[0]).toMatchObject({ maxAddressSpaceBytes: TOOL_ADDRESS_SPACE_BYTES });
  });

  it('averages channels that have no layout to mono, which -ac 1 cannot', async () => {
    const calls: string[][] = [];
    await decodeToWav(__filename, join(dir, 'out.wav'), {
      run: writing(wav(64000), calls),
      layoutlessChannels: 3,
    });
    const args = calls[0] as string[];
    expect(args[args.indexOf('-af') + 1]).toBe('pan=mono|c0<c0+c1+c2');
    expect(meanDownmix(12)).toEqual([
      '-af',
      `pan=mono|c0<${[...Array(12).keys()].map((i) => `c${i}`).join('+')}`,
    ]);
    // ffmpeg guesses mono or stereo for one or two channels.
    for (const n of [null, undefined, 0, 1, 2]) expect(meanDownmix(n)).toEqual([]);
  });

  it('caps at 10 hours by default', async () => {
    const calls: string[][] = [];
    await decodeToWav(__filename, join(dir, 'out.wav'), { run: writing(wav(64000), calls) });
    const args = calls[0] as string[];
    expect(args[args.indexOf('-t') + 1]).toBe('36001');
  });

  it('says truncated when the decode reached the cap', async () => {
    const out = join(dir, 'out.wav');
    await expect(
      decodeToWav(__filename, out, { run: writing(wav(6 * 32000)), maxSeconds: 5 }),
    ).resolves.toEqual({ outputPath: out, durationSeconds: 6, truncated: true, outOfRoom: false });
    await expect(
      decodeToWav(__filename, out, { run: writing(wav(5.9 * 32000)), maxSeconds: 5 }),
    ).resolves.toMatchObject({ durationSeconds: 5.9, truncated: false });
  });

  it('maxOutputBytes below the length cap: -fs at it, and outOfRoom when the WAV reached it', async () => {
    const calls: string[][] = [];
    const out = join(dir, 'out.wav');
    await expect(
      decodeToWav(__filename, out, { run: writing(wav(64000), calls), maxOutputBytes: 50_000 }),
    ).resolves.toEqual({ outputPath: out, durationSeconds: 0, truncated: false, outOfRoom: true });
    const args = calls[0] as string[];
    expect(args[args.indexOf('-fs') + 1]).toBe('50000');
    await expect(
      decodeToWav(__filename, out, { run: writing(wav(64000)), maxOutputBytes: 100_000 }),
    ).resolves.toMatchObject({ durationSeconds: 2, outOfRoom: false });
    // Above the length cap's own size limit it changes nothing.
    const more: string[][] = [];
    await decodeToWav(__filename, out, {
      run: writing(wav(64000), more),
      maxSeconds: 5,
      maxOutputBytes: 10 ** 9,
    });
    expect(more[0]![more[0]!.indexOf('-fs') + 1]).toBe(String(wavSizeLimit(5)));
  });

  it('rejects audio without samples as audio_invalid and removes the output', async () => {
    const out = join(dir, 'out.wav');
    await expect(decodeToWav(__filename, out, { run: writing(wav(0)) })).rejects.toMatchObject({
      code: 'audio_invalid',
    });
    expect(existsSync(out)).toBe(false);
  });

  it('removes a partial output when ffmpeg fails', async () => {
    const out = join(dir, 'out.wav');
    const run: RunProcess = async () => {
      writeFileSync(out, 'partial');
      throw new ProcessError('exit 1', {
        command: 'ffmpeg',
        exitCode: 1,
        signal: null,
        stderr: 'Invalid data found when processing input',
      });
    };
    await expect(decodeToWav(__filename, out, { run })).rejects.toMatchObject({
      code: 'audio_invalid',
      transient: false,
    });
    expect(existsSync(out)).toBe(false);
  });
});
