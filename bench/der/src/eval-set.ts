import type { Audio } from '@hark/diarization';
import type { Turn } from './rttm';

const SAMPLE_RATE = 16000;

/** One scored recording: its audio, reference turns and scored region (UEM, seconds). */
export interface EvalFile {
  id: string;
  audio: Audio;
  reference: Turn[];
  uem: [number, number];
}

/** Turns cut to the region `[a, b]`; turns outside it are dropped. */
export function clip(turns: Turn[], [a, b]: [number, number]): Turn[] {
  return turns
    .map((t) => ({ ...t, start: Math.max(a, t.start), end: Math.min(b, t.end) }))
    .filter((t) => t.end > t.start);
}

/**
 * `f`'s reference turns inside its UEM, moved `offset` seconds later into the recording `file`,
 * cut at `until` seconds, with speaker ids in NFC (the release spells MÉO069 both ways), so the
 * same person has one name wherever excerpts are joined.
 */
export function placeTurns(f: EvalFile, offset: number, file: string, until = Infinity): Turn[] {
  return clip(f.reference, f.uem)
    .filter((t) => t.start + offset < until)
    .map((t) => ({
      file,
      start: t.start + offset,
      end: Math.min(until, t.end + offset),
      speaker: t.speaker.normalize('NFC'),
    }));
}

/**
 * Excerpts that share a participant (AMI speaker ids, compared in NFC) come from one meeting
 * series: each such group is joined end to end into one recording with one reference, so the
 * clustering must keep a person's name across minutes and across the cuts between excerpts, as in
 * a long meeting. Files with nobody in common stay on their own. Every excerpt must be scored whole
 * (its UEM its full length), since the joined file is.
 */
export function joinMeetings(files: EvalFile[]): EvalFile[] {
  const parent = files.map((_, i) => i);
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i]!)));
  const owner = new Map<string, number>();
  files.forEach((f, i) => {
    for (const t of f.reference) {
      const name = t.speaker.normalize('NFC');
      const j = owner.get(name);
      if (j === undefined) owner.set(name, i);
      else parent[root(i)] = root(j);
    }
  });
  const groups = new Map<number, EvalFile[]>();
  files.forEach((f, i) => groups.set(root(i), [...(groups.get(root(i)) ?? []), f]));
  return [...groups.values()].map((group) => {
    const id = group.map((f) => f.id).join('+');
    const samples = new Float32Array(group.reduce((n, f) => n + f.audio.samples.length, 0));
    const reference: Turn[] = [];
    let at = 0;
    for (const f of group) {
      const [a, b] = f.uem;
      if (a > 0.01 || b < f.audio.samples.length / SAMPLE_RATE - 0.01)
        throw new Error(`joined excerpts are scored whole; ${f.id}'s UEM is ${a}-${b} s`);
      samples.set(f.audio.samples, at);
      reference.push(...placeTurns(f, at / SAMPLE_RATE, id));
      at += f.audio.samples.length;
    }
    return { id, audio: { samples, sampleRate: SAMPLE_RATE }, reference, uem: [0, at / SAMPLE_RATE] };
  });
}
