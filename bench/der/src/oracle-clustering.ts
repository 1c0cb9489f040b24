import { join } from 'node:path';
import type { Audio, DiarizationResult } from '@hark/diarization';
import {
  decode,
  NeuralSession,
  reconstruct,
  SEGMENTATION,
  windowStarts,
} from '@hark/diarization/segmentation';
import { maxWeightAssignment } from './hungarian';
import type { Turn } from './rttm';

const SAMPLE_RATE = 16000;
const { window: WINDOW, frames: FRAMES, step: STEP, halfField: HALF, local: LOCAL } = SEGMENTATION;

/**
 * Each local speaker of one segmentation window named after the reference speaker it shares the
 * most time with, distinct within the window (maximum-weight assignment over shared seconds);
 * `-1` for a local speaker active less than `minSeconds` (the neural pipeline embeds, and so
 * names, none shorter); one that shares no time with anyone takes a name unused in the window, or
 * `names.length + s` when every name is used (a voice of its own). `act` is the window's argmax activity (frames x 3), `start` its first
 * sample, `names` the reference speakers in the order of the result's indices.
 */
export function oracleAssignment(
  act: Uint8Array,
  start: number,
  reference: Turn[],
  names: string[],
  minSeconds = 0.3,
): Int32Array {
  const shared = Array.from({ length: LOCAL }, () => names.map(() => 0));
  const active = new Float64Array(LOCAL);
  const frame = STEP / SAMPLE_RATE;
  for (let f = 0; f < FRAMES; f++) {
    const t = (start + f * STEP + HALF) / SAMPLE_RATE;
    const speaking = new Set(reference.filter((r) => r.start <= t && t < r.end).map((r) => r.speaker));
    for (let s = 0; s < LOCAL; s++) {
      if (!act[f * LOCAL + s]) continue;
      active[s]! += frame;
      names.forEach((n, j) => {
        if (speaking.has(n)) shared[s]![j]! += frame;
      });
    }
  }
  // Local speakers too short to be named take no part: they must not take a name from a longer one.
  for (let s = 0; s < LOCAL; s++) if (active[s]! < minSeconds - 1e-9) shared[s]!.fill(0);
  const best = maxWeightAssignment(shared);
  const out = new Int32Array(LOCAL).fill(-1);
  const used = new Set(best.filter((j, s) => j >= 0 && shared[s]![j]! > 0));
  for (let s = 0; s < LOCAL; s++) {
    if (active[s]! < minSeconds - 1e-9) continue;
    if (best[s]! >= 0 && shared[s]![best[s]!]! > 0) out[s] = best[s]!;
    else {
      // Heard where nobody speaks: false alarm whatever its name, but a clustering names it, so
      // it counts toward the speakers found. A name not used in this window, else a voice of its own.
      const free = names.findIndex((_, j) => !used.has(j));
      out[s] = free >= 0 ? free : names.length + s;
      used.add(out[s]!);
    }
  }
  return out;
}

/**
 * The neural pipeline's segmentation and reconstruction (2 s step, the same two-voice rule) with an
 * oracle in place of embeddings and clustering: every local speaker gets the name of the reference
 * speaker it shares the most time with (`oracleAssignment`). No clustering of these local speakers
 * does better, so its DER is what the stages after the segmentation can reach at most (up to the
 * relabelling of long turns, which re-embeds pieces of a local speaker: the oracle keeps a local
 * speaker whole). Scored beside the pipelines with `--oracle`; `reference` must hold every file's
 * turns, keyed by the file's audio.
 */
export class OracleClustering {
  private readonly session: NeuralSession;

  constructor(
    modelsDir: string,
    private readonly reference: Map<Audio, Turn[]>,
    private readonly options: { step?: number; overlapProbability?: number } = {},
  ) {
    this.session = new NeuralSession(
      { segmentation: join(modelsDir, 'segmentation-3.0.onnx'), embedding: join(modelsDir, 'campplus.onnx') },
      2,
    );
  }

  async diarizeAudio(audio: Audio): Promise<DiarizationResult> {
    const turns = this.reference.get(audio);
    if (!turns) throw new Error('the oracle has no reference for this audio');
    const names = [...new Set(turns.map((t) => t.speaker))];
    const { samples } = audio;
    const starts = windowStarts(samples.length, Math.round((this.options.step ?? 2) * SAMPLE_RATE));
    const heard: Uint8Array[] = [];
    const assignment: Int32Array[] = [];
    for (const start of starts) {
      const input = new Float32Array(WINDOW);
      input.set(samples.subarray(start, start + WINDOW));
      const logProbs = await this.session.segment(input, 1);
      const valid = Math.min(FRAMES, Math.ceil((samples.length - start) / STEP));
      heard.push(decode(logProbs, valid, this.options.overlapProbability ?? 0.3));
      assignment.push(oracleAssignment(decode(logProbs, valid), start, turns, names));
    }
    const segments = reconstruct(starts, heard, assignment, names.length + LOCAL, samples.length).map(
      (s) => ({
        ...s,
        speakers: s.speakers.map((i) => names[i] ?? `nobody-${i - names.length}`),
      }),
    );
    return { segments, speakerCount: new Set(segments.flatMap((s) => s.speakers)).size };
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}
