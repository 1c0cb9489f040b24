import { MediaError } from './media-error';
import { PROBE_TIMEOUT_MS, TOOL_ADDRESS_SPACE_BYTES } from './ffmpeg-tools';
import { ProcessError, type RunOptions, type RunProcess } from './process-runner';
import { PROBE_ENTRIES, normaliseProbe, probeAudio } from './probe';

const stream = (extra: Record<string, unknown>) => ({ index: 0, ...extra });

describe('normaliseProbe', () => {
  it('reads a plain audio file', () => {
    const json = {
      streams: [stream({ codec_type: 'audio', codec_name: 'pcm_s16le', duration: '11.000000' })],
      format: { format_name: 'wav', duration: '11.000000' },
    };
    expect(normaliseProbe(json)).toEqual({
      durationSeconds: 11,
      formatName: 'wav',
      hasAudio: true,
      audioCodec: 'pcm_s16le',
      channels: null,
      channelLayout: null,
    });
  });

  it('reports the channel count, and the layout only when the stream has one', () => {
    const audio = { codec_type: 'audio', codec_name: 'pcm_s16le', duration: '1' };
    expect(normaliseProbe({ streams: [{ ...audio, channels: 2, channel_layout: 'stereo' }] })).toMatchObject({
      channels: 2,
      channelLayout: 'stereo',
    });
    // A 12-channel WAV without a channel mask: ffprobe leaves the layout out (or says unknown).
    for (const layout of [{}, { channel_layout: 'unknown' }])
      expect(normaliseProbe({ streams: [{ ...audio, channels: 12, ...layout }] })).toMatchObject({
        channels: 12,
        channelLayout: null,
      });
  });

  it("prefers a Matroska audio stream's DURATION tag to the container's duration (a subtitle cue at 10:30:00)", () => {
    const json = {
      streams: [
        stream({ codec_type: 'audio', codec_name: 'opus', tags: { DURATION: '00:00:11.008000000' } }),
      ],
      format: { format_name: 'matroska,webm', duration: '37801.007000' },
    };
    expect(normaliseProbe(json).durationSeconds).toBeCloseTo(11.008, 6);
    const lower = { ...json, streams: [stream({ codec_type: 'audio', tags: { duration: '00:00:02.5' } })] };
    expect(normaliseProbe(lower).durationSeconds).toBe(2.5);
  });

  it('takes the first audio stream of a video and prefers its own duration', () => {
    const json = {
      streams: [
        stream({ codec_type: 'video', codec_name: 'h264', duration: '12.5' }),
        stream({ codec_type: 'audio', codec_name: 'aac', duration: '10.02' }),
      ],
      format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: '12.5' },
    };
    expect(normaliseProbe(json)).toMatchObject({
      durationSeconds: 10.02,
      formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
      audioCodec: 'aac',
    });
  });

  it("falls back to the container's duration, then Matroska's DURATION tag, then null", () => {
    const audio = { codec_type: 'audio', codec_name: 'opus' };
    expect(normaliseProbe({ streams: [audio], format: { duration: '3.5' } }).durationSeconds).toBe(3.5);
    expect(
      normaliseProbe({ streams: [{ ...audio, tags: { DURATION: '01:02:03.250000000' } }], format: {} })
        .durationSeconds,
    ).toBe(3723.25);
    expect(normaliseProbe({ streams: [audio], format: { duration: 'N/A' } }).durationSeconds).toBeNull();
  });

  it.each([
    ['an absurd sample rate', { sample_rate: '2147483647', channels: 1 }, /sample rate/],
    ['a sample rate of 1 Hz', { sample_rate: '1', channels: 1 }, /sample rate/],
    ['255 channels', { sample_rate: '16000', channels: 255 }, /channels/],
  ])('rejects an audio stream declaring %s as audio_invalid', (_name, declared, message) => {
    const json = {
      streams: [stream({ codec_type: 'audio', codec_name: 'pcm_s16le', duration: '0.5', ...declared })],
      format: { format_name: 'wav' },
    };
    expect(() => normaliseProbe(json)).toThrow(
      expect.objectContaining({
        code: 'audio_invalid',
        transient: false,
        message: expect.stringMatching(message),
      }) as Error,
    );
  });

  it('accepts 8 kHz to 768 kHz, up to 64 channels, and values ffprobe left out or zeroed', () => {
    for (const declared of [
      { sample_rate: '8000', channels: 1 },
      { sample_rate: '768000', channels: 64 },
      { sample_rate: '0', channels: 0 },
      {},
    ]) {
      const json = { streams: [stream({ codec_type: 'audio', duration: '1', ...declared })], format: {} };
      expect(normaliseProbe(json).durationSeconds).toBe(1);
    }
  });

  it('rejects a file without an audio stream as audio_invalid', () => {
    const json = { streams: [stream({ codec_type: 'video' })], format: { format_name: 'mov' } };
    expect(() => normaliseProbe(json)).toThrow(
      expect.objectContaining({ code: 'audio_invalid', transient: false }) as Error,
    );
    expect(() => normaliseProbe({})).toThrow(MediaError);
  });
});

describe('probeAudio', () => {
  // Any readable file will do: the fake runner answers in place of ffprobe.
  const path = __filename;
  const answering =
    (stdout: string): RunProcess =>
    async () => ({ stdout, stderr: '', durationMs: 1 });
  const failing =
    (error: Error): RunProcess =>
    async () => {
      throw error;
    };

  it('runs ffprobe on a file: URL and normalises its JSON', async () => {
    const calls: string[][] = [];
    const run: RunProcess = async (command, args) => {
      calls.push([command, ...args]);
      return {
        stdout: JSON.stringify({
          streams: [{ codec_type: 'audio', codec_name: 'mp3' }],
          format: { format_name: 'mp3', duration: '2' },
        }),
        stderr: '',
        durationMs: 1,
      };
    };
    await expect(probeAudio(path, { run, ffprobePath: '/usr/local/bin/ffprobe' })).resolves.toEqual({
      durationSeconds: 2,
      formatName: 'mp3',
      hasAudio: true,
      audioCodec: 'mp3',
      channels: null,
      channelLayout: null,
    });
    expect(calls[0]?.[0]).toBe('/usr/local/bin/ffprobe');
    expect(calls[0]?.at(-1)).toBe(`file:${path}`);
  });

  it('lets ffprobe, and ffmpeg measuring the duration, run only the allowed demuxers on local files', async () => {
    const calls: string[][] = [];
    const run: RunProcess = async (command, args) => {
      calls.push([...args]);
      const stdout =
        command === 'ffprobe'
          ? JSON.stringify({ streams: [{ codec_type: 'audio', codec_name: 'opus' }], format: {} })
          : 'out_time_us=1000000\n';
      return { stdout, stderr: '', durationMs: 1 };
    };
    await probeAudio(path, { run });
    expect(calls).toHaveLength(2);
    for (const args of calls) {
      // Input options: before -i, which is followed by the input.
      const input = args.indexOf('-i');
      const before = args.slice(0, input);
      const after = (flag: string) => before[before.indexOf(flag) + 1];
      expect(args[input + 1]).toBe(`file:${path}`);
      expect(after('-protocol_whitelist')).toBe('file');
      expect(after('-format_whitelist')?.split(',').sort()).toEqual(
        ['aac', 'aiff', 'amr', 'asf', 'avi', 'flac', 'matroska', 'mov', 'mp3', 'ogg', 'wav'].sort(),
      );
    }
  });

  it('asks ffprobe only for the fields it reads, of the first audio stream, within a time and memory limit', async () => {
    const calls: { args: string[]; options: RunOptions | undefined }[] = [];
    const run: RunProcess = async (_command, args, options) => {
      calls.push({ args: [...args], options });
      return {
        stdout: JSON.stringify({ streams: [{ codec_type: 'audio' }], format: { duration: '1' } }),
        stderr: '',
        durationMs: 1,
      };
    };
    await probeAudio(path, { run });
    const { args, options } = calls[0] as (typeof calls)[number];
    const after = (flag: string) => args[args.indexOf(flag) + 1];
    // Every tag and stream printed ran ffprobe past the runner's 32 MiB of stdout.
    expect(args).not.toContain('-show_format');
    expect(args).not.toContain('-show_streams');
    expect(after('-show_entries')).toBe(PROBE_ENTRIES);
    expect(PROBE_ENTRIES).toMatch(/(^|:)stream_tags=DURATION($|:)/);
    expect(after('-select_streams')).toBe('a:0');
    expect(args.indexOf('-threads')).toBeLessThan(args.indexOf('-i'));
    // Not -max_pixels: ffprobe exits when a decoder refuses a real video's picture size.
    expect(args).not.toContain('-max_pixels');
    expect(options).toMatchObject({
      timeoutMs: PROBE_TIMEOUT_MS,
      maxAddressSpaceBytes: TOOL_ADDRESS_SPACE_BYTES,
    });
  });

  it('fails ffprobe printing past the stdout limit as audio_invalid, not as a transient failure', async () => {
    const error = new ProcessError('ffprobe wrote more than 33554432 bytes to stdout', {
      command: 'ffprobe',
      exitCode: null,
      signal: 'SIGKILL',
      stderr: '',
      stdoutOverflow: true,
    });
    await expect(probeAudio(path, { run: failing(error) })).rejects.toMatchObject({
      code: 'audio_invalid',
      transient: false,
    });
  });

  it('maps ffprobe refusing the input to audio_invalid with its stderr', async () => {
    const error = new ProcessError('exit 1', {
      command: 'ffprobe',
      exitCode: 1,
      signal: null,
      stderr: 'Invalid data found when processing input',
    });
    await expect(probeAudio(path, { run: failing(error) })).rejects.toMatchObject({
      code: 'audio_invalid',
      transient: false,
      stderr: 'Invalid data found when processing input',
    });
  });

  it('maps a missing ffprobe to a permanent engine_failed', async () => {
    const error = new ProcessError('no', {
      command: 'ffprobe',
      exitCode: null,
      signal: null,
      stderr: '',
      spawnErrorCode: 'ENOENT',
    });
    await expect(probeAudio(path, { run: failing(error) })).rejects.toMatchObject({
      code: 'engine_failed',
      transient: false,
    });
  });

  it('rejects with the fs error when the input does not exist', async () => {
    await expect(probeAudio('/nonexistent/audio.wav', { run: answering('{}') })).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('measures the duration by reading packets when no header records it', async () => {
    const run: RunProcess = async (command) =>
      command === 'ffprobe'
        ? {
            stdout: JSON.stringify({
              streams: [{ codec_type: 'audio', codec_name: 'opus' }],
              format: { format_name: 'matroska,webm' },
            }),
            stderr: '',
            durationMs: 1,
          }
        : {
            stdout: 'out_time_us=1000000\nprogress=continue\nout_time_us=3001000\nprogress=end\n',
            stderr: '',
            durationMs: 1,
          };
    await expect(probeAudio(path, { run })).resolves.toMatchObject({
      durationSeconds: 3.001,
      audioCodec: 'opus',
    });
  });
});
