import { appendJoined, type Segment } from '../timeline';
import { dot } from './embedding-clustering';

/** Length of the pieces a long turn is embedded in again. */
export const PIECE_SECONDS = 1.5;

/**
 * Second look at long turns: a single-speaker segment of at least two pieces' length is cut into
 * pieces of about 1.5 s, each embedded (`embed`: unit vector of the audio between two times), and
 * a piece whose embedding is closer to another speaker's centroid than to its own by more than
 * `margin` (cosine) goes to that speaker. The segmentation sometimes keeps one local speaker
 * through a change of voice (two people in turn, each for seconds, in every window covering
 * them), and the window's one embedding then follows the longer voice. Overlapped and short
 * segments are kept as they are; touching segments with the same speakers become one.
 */
export async function relabelLongTurns(
  segments: Segment<number>[],
  centroids: Float32Array[],
  margin: number,
  embed: (start: number, end: number) => Promise<Float32Array>,
): Promise<Segment<number>[]> {
  const out: Segment<number>[] = [];
  for (const seg of segments) {
    const n = Math.floor((seg.end - seg.start) / PIECE_SECONDS);
    if (seg.speakers.length !== 1 || n < 2) {
      appendJoined(out, seg);
      continue;
    }
    const own = seg.speakers[0]!;
    const size = (seg.end - seg.start) / n;
    for (let p = 0; p < n; p++) {
      const start = seg.start + p * size;
      const end = p === n - 1 ? seg.end : start + size;
      const e = await embed(start, end);
      const scores = centroids.map((c) => dot(c, e));
      const best = scores.indexOf(Math.max(...scores));
      appendJoined(out, { start, end, speakers: [scores[best]! - scores[own]! > margin ? best : own] });
    }
  }
  return out;
}
