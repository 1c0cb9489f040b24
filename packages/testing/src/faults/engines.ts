// Stand-ins for whisper-cli that a fault scenario points WHISPER_BIN at.
import { spawn } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** An executable `whisper-cli` shell script in a fresh temp folder; resolves with its path. */
export async function script(body: string, dir?: string): Promise<string> {
  const folder = dir ?? (await mkdtemp(path.join(tmpdir(), 'hark-faults-bin-')));
  const bin = path.join(folder, 'whisper-cli');
  writeFileSync(bin, `#!/bin/sh\n${body}`);
  chmodSync(bin, 0o755);
  return bin;
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const c = spawn(cmd, args, { stdio: 'ignore' });
    c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}`))));
  });
}

/** `src` as a 16 kHz mono 16-bit WAV at `out`, what the worker hands whisper-cli; `extra` goes before the output options. */
export async function toWav16k(src: string, out: string, extra: string[] = []): Promise<void> {
  await run('ffmpeg', [
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-i',
    src,
    ...extra,
    '-ac',
    '1',
    '-ar',
    '16000',
    '-c:a',
    'pcm_s16le',
    out,
  ]);
}

/** An engine that kills the process that started it (the worker) at once. */
export function workerKillingEngine(): Promise<string> {
  return script('kill -9 $PPID\nsleep 5\n');
}

/**
 * A whisper-cli stand-in: sleeps `delayMs`, then writes the real engine's JSON for `audio`,
 * captured once here by running the real `whisperBin` on it.
 */
export async function fakeEngine(opts: {
  audio: string;
  whisperBin: string;
  whisperModel: string;
  delayMs: number;
}): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hark-faults-engine-'));
  const wav = path.join(dir, 'jfk16k.wav');
  await toWav16k(opts.audio, wav);
  await run(opts.whisperBin, [
    '-m',
    opts.whisperModel,
    '-t',
    '1',
    '-l',
    'en',
    '-ojf',
    '-of',
    path.join(dir, 'real'),
    '-f',
    wav,
  ]);
  const secs = (opts.delayMs / 1000).toFixed(3);
  return script(
    `of=""\nwhile [ $# -gt 0 ]; do [ "$1" = "-of" ] && of="$2"; shift; done\nsleep ${secs}\ncp '${path.join(dir, 'real.json')}' "$of.json"\n`,
    dir,
  );
}
