import { startApp } from '@hark/testing';

// The built worker refuses to start on a configuration that would fail every job, and says why.
jest.setTimeout(60_000);

it('WHISPER_VAD=on with no readable VAD model: exit 1 before any job, naming the variable and the file', async () => {
  const w = startApp('worker', {
    WHISPER_VAD: 'on',
    WHISPER_VAD_MODEL: '/nonexistent/ggml-silero-v5.1.2.bin',
    HARK_METRICS_PORT: '0',
  });
  expect(await w.exited).toBe(1);
  const fatal = w.logs.find((l) => l.msg === 'worker failed to start');
  expect(fatal).toMatchObject({ level: 'fatal', app: 'worker' });
  expect(fatal!.err).toMatch(
    /WHISPER_VAD is on but its model \/nonexistent\/ggml-silero-v5\.1\.2\.bin cannot be read/,
  );
  expect(w.logs.some((l) => l.msg === 'worker ready')).toBe(false);
});
