import { appendJoined, type Segment } from '../timeline';
import { dot, normalise } from './embedding-clustering';
import { PIECE_SECONDS } from './long-turns';

/** The shortest stretch of speech that is cut off as a speaker of its own. */
const MIN_PIECE_SECONDS = 0.2;
/** At most this many pieces are embedded for one split (pieces grow on long files instead). */
const MAX_PIECES = 400;
/** Of a longer piece, the middle this long is embedded. */
const EMBED_SECONDS = 3;

/**
 * Makes the timeline carry at least `want` speakers (an exact `speakers` count, or a range's
 * minimum: decisions say "exactly that many") when the clustering found fewer because the
 * segmentation never heard that many voices apart. One speaker at a time, the one with the
 * most speech of its own is split in two: its single-speaker turns are cut into pieces of about
 * 1.5 s, each embedded (`embed`: unit vector of the audio between two times), and two-means on
 * those embeddings (seeded with its two least alike pieces) gives the smaller group a new name.
 * A speaker with a single piece is cut in time. It stops when no speaker has two pieces of
 * 0.2 s to give (then the count stays short: there is not that much speech). Overlapped
 * segments keep their names; no speech is added or removed, only named.
 */
export async function fillCount(
  segments: Segment<number>[],
  want: number,
  embed: (start: number, end: number) => Promise<Float32Array>,
): Promise<Segment<number>[]> {
  let out = segments;
  for (let names = namesOf(out); names.size < want; names = namesOf(out)) {
    const split = await splitOne(out, Math.max(-1, ...names) + 1, embed);
    if (!split) break;
    out = split;
  }
  return out;
}

const namesOf = (segments: Segment<number>[]) => new Set(segments.flatMap((s) => s.speakers));

interface Piece {
  start: number;
  end: number;
}

/** The timeline with the talkiest splittable speaker's pieces partly renamed `fresh`, or null. */
async function splitOne(
  segments: Segment<number>[],
  fresh: number,
  embed: (start: number, end: number) => Promise<Float32Array>,
): Promise<Segment<number>[] | null> {
  const solo = new Map<number, Segment<number>[]>();
  for (const s of segments)
    if (s.speakers.length === 1) solo.set(s.speakers[0]!, [...(solo.get(s.speakers[0]!) ?? []), s]);
  const talkiest = [...solo.entries()].sort((a, b) => seconds(b[1]) - seconds(a[1]));
  for (const [speaker, turns] of talkiest) {
    const pieces = cut(turns, Math.max(PIECE_SECONDS, seconds(turns) / MAX_PIECES));
    let moved: Set<Piece>;
    if (pieces.length >= 2) {
      const vectors: Float32Array[] = [];
      for (const p of pieces) {
        const mid = (p.start + p.end) / 2;
        const half = Math.min(p.end - p.start, EMBED_SECONDS) / 2;
        vectors.push(await embed(mid - half, mid + half));
      }
      moved = new Set(smallerGroup(pieces, twoMeans(vectors)));
    } else if (pieces.length === 1 && pieces[0]!.end - pieces[0]!.start >= 2 * MIN_PIECE_SECONDS) {
      const p = pieces[0]!;
      const mid = (p.start + p.end) / 2;
      const later = { start: mid, end: p.end };
      pieces.splice(0, 1, { start: p.start, end: mid }, later);
      moved = new Set([later]);
    } else continue;
    const out: Segment<number>[] = [];
    const turnSet = new Set(turns);
    for (const s of segments) {
      if (!turnSet.has(s)) {
        appendJoined(out, s);
        continue;
      }
      for (const p of pieces.filter((x) => x.start >= s.start - 1e-9 && x.end <= s.end + 1e-9))
        appendJoined(out, { start: p.start, end: p.end, speakers: [moved.has(p) ? fresh : speaker] });
      // What the pieces did not cover (a turn under 0.2 s) keeps its speaker.
      if (!pieces.some((x) => x.start >= s.start - 1e-9 && x.end <= s.end + 1e-9)) appendJoined(out, s);
    }
    return out;
  }
  return null;
}

/** Single-speaker turns cut into pieces of about `size` seconds (turns under 0.2 s are left out). */
function cut(turns: Segment<number>[], size: number): Piece[] {
  const pieces: Piece[] = [];
  for (const t of turns) {
    const length = t.end - t.start;
    if (length < MIN_PIECE_SECONDS) continue;
    const n = Math.max(1, Math.floor(length / size));
    for (let i = 0; i < n; i++)
      pieces.push({
        start: t.start + (i * length) / n,
        end: i === n - 1 ? t.end : t.start + ((i + 1) * length) / n,
      });
  }
  return pieces;
}

/** Group (0 or 1) of each unit vector: two-means on cosine, seeded with the least alike pair. */
export function twoMeans(vectors: Float32Array[]): number[] {
  let seeds: [number, number] = [0, vectors.length - 1];
  let least = Infinity;
  for (let i = 0; i < vectors.length; i++)
    for (let j = i + 1; j < vectors.length; j++) {
      const d = dot(vectors[i]!, vectors[j]!);
      if (d < least) [least, seeds] = [d, [i, j]];
    }
  let means = seeds.map((i) => vectors[i]!);
  let groups = vectors.map(() => 0);
  for (let round = 0; round < 10; round++) {
    const next = vectors.map((v) => (dot(v, means[1]!) > dot(v, means[0]!) ? 1 : 0));
    // Each seed stays in its own group, so neither group is ever empty.
    next[seeds[0]] = 0;
    next[seeds[1]] = 1;
    if (next.every((g, i) => g === groups[i])) break;
    groups = next;
    means = [0, 1].map((g) => {
      const sum = new Float32Array(vectors[0]!.length);
      vectors.forEach((v, i) => {
        if (groups[i] === g) for (let k = 0; k < v.length; k++) sum[k]! += v[k]!;
      });
      return normalise(sum);
    });
  }
  return groups;
}

/** The pieces of the group with less time (group 1 on a tie). */
function smallerGroup(pieces: Piece[], groups: number[]): Piece[] {
  const time = [0, 1].map((g) =>
    pieces.reduce((sum, p, i) => sum + (groups[i] === g ? p.end - p.start : 0), 0),
  );
  const small = time[1]! <= time[0]! ? 1 : 0;
  return pieces.filter((_, i) => groups[i] === small);
}

const seconds = (turns: Segment<number>[]) => turns.reduce((sum, t) => sum + t.end - t.start, 0);
