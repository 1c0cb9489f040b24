import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type { Audio, DiarizationResult } from '@hark/diarization';

const SCRIPTS = resolve(__dirname, '../scripts');

/** One peer segment: [start s, end s, speaker index]. */
type PeerSegment = [number, number, number];

/**
 * sherpa-onnx's offline speaker diarization (the peer; scripts/sherpa_peer.py) in a Python
 * process of its own, on the same segmentation-3.0 and CAM++ files as Hark's neural pipeline.
 * The virtualenv is made by scripts/peer-venv.sh on first use (PyPI). `diarizeAudio` returns the
 * peer's turns in Hark's result shape (overlapping turns become segments with two names), and its
 * time includes handing the samples over through a temporary file.
 */
export class SherpaPeer {
  private child: ChildProcessWithoutNullStreams | null = null;
  private lines: AsyncIterator<string> | null = null;
  private reader: Interface | null = null;
  private dir: string | null = null;
  /** The peer's own processing time, summed over calls (without the hand-over). */
  peerSeconds = 0;
  /** The peer process's peak resident set so far, in MB. */
  peakRssMb = 0;

  constructor(
    private readonly modelsDir: string,
    private readonly threads = 2,
  ) {}

  private async start(): Promise<void> {
    const venv = spawnSync('bash', [join(SCRIPTS, 'peer-venv.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (venv.status !== 0) throw new Error(`peer-venv.sh failed (exit ${venv.status})`);
    const python = venv.stdout.trim().split('\n').pop()!;
    this.dir = await mkdtemp(join(tmpdir(), 'hark-der-peer-'));
    const child = spawn(python, [
      join(SCRIPTS, 'sherpa_peer.py'),
      this.modelsDir,
      // Beside the virtualenv, so the copies with metadata are made once, not every run.
      join(dirname(dirname(python)), 'models'),
      String(this.threads),
    ]);
    // sherpa-onnx logs "No speakers found" for a file with no speech; anything else is shown.
    createInterface({ input: child.stderr }).on('line', (line) => {
      if (line.trim() && !line.includes('No speakers found')) process.stderr.write(`[sherpa-onnx] ${line}\n`);
    });
    this.child = child;
    this.reader = createInterface({ input: child.stdout });
    this.lines = this.reader[Symbol.asyncIterator]();
    await this.next();
  }

  private async next(): Promise<Record<string, unknown>> {
    const line = await this.lines!.next();
    if (line.done) throw new Error(`sherpa_peer.py ended (exit ${this.child?.exitCode ?? 'unknown'})`);
    return JSON.parse(line.value) as Record<string, unknown>;
  }

  async diarizeAudio(audio: Audio, options: { speakers: true | number }): Promise<DiarizationResult> {
    if (!this.child) await this.start();
    const path = join(this.dir!, 'samples.f32');
    await writeFile(
      path,
      new Uint8Array(audio.samples.buffer, audio.samples.byteOffset, audio.samples.byteLength),
    );
    const speakers = options.speakers === true ? null : options.speakers;
    this.child!.stdin.write(`${JSON.stringify({ samples: path, speakers })}\n`);
    const reply = await this.next();
    this.peerSeconds += reply['seconds'] as number;
    this.peakRssMb = reply['peak_rss_mb'] as number;
    return toResult(reply['segments'] as PeerSegment[]);
  }

  async close(): Promise<void> {
    this.child?.stdin.end();
    this.reader?.close();
    if (this.child && this.child.exitCode === null) await new Promise((r) => this.child!.once('exit', r));
    this.child = null;
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
    this.dir = null;
  }
}

/**
 * The peer's turns (which may overlap) as Hark's segments: cut at every turn boundary, each piece
 * naming everyone who speaks in it.
 */
export function toResult(turns: PeerSegment[]): DiarizationResult {
  const bounds = [...new Set(turns.flatMap(([s, e]) => [s, e]))].sort((a, b) => a - b);
  const segments: DiarizationResult['segments'] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const [a, b] = [bounds[i]!, bounds[i + 1]!];
    const who = [...new Set(turns.filter(([s, e]) => s <= a && e >= b).map(([, , k]) => `S${k}`))].sort();
    if (who.length > 0) segments.push({ start: a, end: b, speakers: who });
  }
  return { segments, speakerCount: new Set(turns.map(([, , k]) => k)).size };
}
