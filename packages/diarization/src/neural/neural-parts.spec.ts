import {
  assignWindow,
  dot,
  fitCount,
  normalise,
  speakerCentroids,
  voicesHeardTogether,
} from './embedding-clustering';
import { decode, dominant, reconstruct, windowStarts } from './neural-diarizer';

const FRAMES = 589;

/** Log-probabilities that put every frame in `classOf(frame)`. */
function logProbs(classOf: (f: number) => number): Float32Array {
  const out = new Float32Array(FRAMES * 7).fill(-10);
  for (let f = 0; f < FRAMES; f++) out[f * 7 + classOf(f)] = -0.01;
  return out;
}

describe('neural pipeline parts', () => {
  it('windows every step plus one aligned to the end; one window for short audio', () => {
    expect(windowStarts(100_000, 32_000)).toEqual([0]);
    expect(windowStarts(160_000, 32_000)).toEqual([0]);
    expect(windowStarts(230_000, 32_000)).toEqual([0, 32_000, 64_000, 70_000]);
    expect(windowStarts(224_000, 32_000)).toEqual([0, 32_000, 64_000]);
  });

  it('decodes the powerset classes to local speakers, overlap classes to two', () => {
    const act = decode(
      logProbs((f) => [0, 1, 2, 3, 4, 5, 6][f % 7]!),
      FRAMES,
    );
    const at = (f: number) => Array.from(act.subarray(f * 3, f * 3 + 3));
    expect([0, 1, 2, 3, 4, 5, 6].map(at)).toEqual([
      [0, 0, 0],
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
      [1, 1, 0],
      [1, 0, 1],
      [0, 1, 1],
    ]);
    // Frames past the audio stay silent.
    expect(
      Array.from(
        decode(
          logProbs(() => 1),
          10,
        ).subarray(30),
      ),
    ).toEqual(new Array(FRAMES * 3 - 30).fill(0));
  });

  it('takes two voices where the two-voice classes together pass the overlap probability', () => {
    // Frames 0-9: {A} 0.5, {A,B} 0.2, {B,C} 0.15 (overlap mass 0.35); 10-19: {A} 0.5, {A,B} 0.25
    // (mass 0.25); 20-29: silence 0.5, {A,B} 0.4 (silence stays silence); 30-39: {B,C} argmax.
    const lp = new Float32Array(FRAMES * 7).fill(Math.log(1e-4));
    const set = (from: number, to: number, probs: Record<number, number>) => {
      for (let f = from; f < to; f++)
        for (const [c, p] of Object.entries(probs)) lp[f * 7 + Number(c)] = Math.log(p);
    };
    set(0, 10, { 1: 0.5, 4: 0.2, 6: 0.15 });
    set(10, 20, { 1: 0.5, 4: 0.25 });
    set(20, 30, { 0: 0.5, 4: 0.4 });
    set(30, 40, { 6: 0.9 });
    const at = (act: Uint8Array, f: number) => Array.from(act.subarray(f * 3, f * 3 + 3));
    const frames = (act: Uint8Array) => [5, 15, 25, 35].map((f) => at(act, f));
    // 1 is the plain argmax.
    expect({ soft: frames(decode(lp, 40, 0.3)), hard: frames(decode(lp, 40, 1)) }).toEqual({
      soft: [
        [1, 1, 0],
        [1, 0, 0],
        [0, 0, 0],
        [0, 1, 1],
      ],
      hard: [
        [1, 0, 0],
        [1, 0, 0],
        [0, 0, 0],
        [0, 1, 1],
      ],
    });
  });

  it('dominant frames: a speaker alone, or in a two-speaker frame the likelier of the two alone', () => {
    // Frames 0-9: A alone; 10-19: A+B with {B} likelier than {A}; 20-29: A+B with {A} likelier;
    // 30-39: B+C with {B} and {C} equally likely (ties go to the first); 40-49: silence.
    const lp = logProbs((f) => (f < 10 ? 1 : f < 30 ? 4 : f < 40 ? 6 : 0));
    for (let f = 10; f < 30; f++) {
      lp[f * 7 + 1] = f < 20 ? -5 : -3; // {A}
      lp[f * 7 + 2] = f < 20 ? -3 : -5; // {B}
    }
    for (let f = 30; f < 40; f++) lp[f * 7 + 2] = lp[f * 7 + 3] = -4;
    const act = decode(lp, 50);
    const dom = dominant(lp, act);
    const at = (f: number) => Array.from(dom.subarray(f * 3, f * 3 + 3));
    expect([0, 15, 25, 35, 45].map(at)).toEqual([
      [1, 0, 0],
      [0, 1, 0],
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 0],
    ]);
    // Every active frame has exactly one dominant speaker, and only an active one.
    for (let f = 0; f < 50; f++) {
      const n = at(f).reduce((a, b) => a + b, 0);
      expect(n).toBe(f < 40 ? 1 : 0);
      at(f).forEach((d, s) => expect(d <= act[f * 3 + s]!).toBe(true));
    }
  });

  it('rebuilds a timeline where overlapped frames carry two speakers', () => {
    // One window: local A alone on frames 0-199, A+B on 200-299, B alone on 300-588.
    const act = decode(
      logProbs((f) => (f < 200 ? 1 : f < 300 ? 4 : 2)),
      FRAMES,
    );
    const segments = reconstruct([0], [act], [Int32Array.of(5, 1, -1)], 6, 160_000);
    expect(segments.map((s) => s.speakers)).toEqual([[5], [1, 5], [1]]);
    expect(segments[1]!.start).toBeCloseTo((200 * 270 + 991 / 2 - 135) / 16000, 2);
    expect(segments[2]!.end).toBeGreaterThan(9.95); // the last frame's centre is 9.953 s
  });

  it('gives an asked-for speaker that every frame outvotes the frames its own window heard it in', () => {
    // Three windows over the same 10 s: two hear speaker 0 throughout; the third hears its one
    // local speaker on frames 100-199 only, assigned to speaker 1, which loses every frame 2 to 1.
    const all = decode(
      logProbs(() => 1),
      FRAMES,
    );
    const some = decode(
      logProbs((f) => (f >= 100 && f < 200 ? 1 : 0)),
      FRAMES,
    );
    const assignment = [Int32Array.of(0, -1, -1), Int32Array.of(0, -1, -1), Int32Array.of(1, -1, -1)];
    const run = (minSpeakers?: number) =>
      reconstruct([0, 0, 0], [all, all, some], assignment, 2, 160_000, minSpeakers);
    expect(run().map((s) => s.speakers)).toEqual([[0]]);
    expect(run(1).map((s) => s.speakers)).toEqual([[0]]);
    const forced = run(2);
    expect(forced.map((s) => s.speakers)).toEqual([[0], [1], [0]]);
    expect(forced[1]!.start).toBeCloseTo((100 * 270 + 991 / 2 - 135) / 16000, 2);
    expect(forced[1]!.end).toBeCloseTo((199 * 270 + 991 / 2 + 135) / 16000, 2);
    // Asked for more than there are speakers with any frame: as many as there are.
    expect(new Set(run(3).flatMap((s) => s.speakers)).size).toBe(2);
  });

  it('clusters embeddings into the asked count and gives one window distinct speakers', () => {
    const voice = (axis: number, jitter: number) => {
      const v = new Float32Array(8).fill(0.05);
      v[axis] = 1;
      v[(axis + 1) % 8] = jitter;
      return normalise(v);
    };
    const embeddings = [0, 1, 2].flatMap((axis) => Array.from({ length: 10 }, (_, i) => voice(axis, i / 40)));
    expect(speakerCentroids(embeddings, { min: 1, max: 20 })).toHaveLength(3);
    expect(speakerCentroids(embeddings, { min: 2, max: 2 })).toHaveLength(2);
    expect(speakerCentroids(embeddings, { min: 4, max: 6 })).toHaveLength(4);
    expect(speakerCentroids(embeddings, { min: 1, max: 20 }, { maxCluster: 9 })).toHaveLength(3);
    const centroids = speakerCentroids(embeddings, { min: 3, max: 3 });
    const a = voice(0, 0);
    const best = assignWindow([a], centroids)[0]!;
    // Two local speakers that both sound like `a` still get two different speakers.
    const [x, y] = assignWindow([a, a], centroids);
    expect(x).toBe(best);
    expect(y).not.toBe(best);
  });

  describe('an asked count the estimate misses', () => {
    const unit = (...parts: [number, number][]) => {
      const v = new Float32Array(8).fill(0.02);
      for (const [axis, x] of parts) v[axis]! += x;
      return normalise(v);
    };
    const many = (n: number, make: (i: number) => Float32Array) =>
      Array.from({ length: n }, (_, i) => make(i));
    // Two talkative voices 0.6 apart (above the 0.5 threshold: two speakers), each 12 embeddings.
    const a = many(12, (i) => unit([0, 1], [7, i / 60]));
    const b = many(12, (i) => unit([0, 0.45], [1, 1], [7, i / 60]));
    const near = (centroids: Float32Array[], v: Float32Array) => centroids.some((c) => dot(c, v) > 0.97);
    const mean = (vs: Float32Array[]) =>
      normalise(vs.reduce((s, v) => s.map((x, d) => x + v[d]!), new Float32Array(8)));

    it('adds the most separated quiet voice instead of merging the voices found', () => {
      // Three odd embeddings (too few to count) far from everything: asked for 3, the tree cut
      // at 3 merged a and b (their 0.6 is the smallest distance left) and kept two outliers.
      const odd = [unit([3, 1]), unit([4, 1]), unit([5, 1])];
      const centroids = speakerCentroids([...a, ...b, ...odd], { min: 3, max: 3 });
      expect(centroids).toHaveLength(3);
      expect(near(centroids, mean(a))).toBe(true);
      expect(near(centroids, mean(b))).toBe(true);
    });

    it('takes a local speaker that did not train the clustering before cutting a voice in two', () => {
      const quiet = unit([2, 1], [0, 0.2]);
      const centroids = speakerCentroids([...a, ...b], { min: 3, max: 3 }, {}, [quiet, a[0]!, b[0]!]);
      expect(centroids).toHaveLength(3);
      expect(near(centroids, mean(a)) && near(centroids, mean(b))).toBe(true);
      expect(centroids.some((c) => dot(c, quiet) > 0.999)).toBe(true);
      // With no such candidate, one voice is split along its own top merge.
      const split = speakerCentroids([...a, ...b], { min: 3, max: 3 }, {}, [a[3]!]);
      expect(split).toHaveLength(3);
      expect(split.every((c) => dot(c, mean(a)) > 0.97 || dot(c, mean(b)) > 0.97)).toBe(true);
    });

    it('counts a voice that did not train the clustering when it sounds like nobody found', () => {
      const far = unit([2, 1]); // about 0.9 from a and b
      const close = unit([0, 1], [7, 0.4]); // a's, from a short stretch
      expect(speakerCentroids([...a, ...b], { min: 1, max: 20 }, {}, [close])).toHaveLength(2);
      const three = speakerCentroids([...a, ...b], { min: 1, max: 20 }, {}, [close, far]);
      expect(three).toHaveLength(3);
      expect(three.some((c) => dot(c, far) > 0.999)).toBe(true);
      // Not above the asked maximum, and not when disabled.
      expect(speakerCentroids([...a, ...b], { min: 1, max: 2 }, {}, [far])).toHaveLength(2);
      expect(
        speakerCentroids([...a, ...b], { min: 1, max: 20 }, { newVoiceDistance: 1 }, [far]),
      ).toHaveLength(2);
    });

    it('merges the two nearest groups when fewer are asked', () => {
      const c = many(12, (i) => unit([5, 1], [7, i / 60]));
      const groups = fitCount([a, c, b], [], { min: 1, max: 2 });
      expect(groups.map((g) => g.length).sort((x, y) => x - y)).toEqual([12, 24]);
      expect(groups.find((g) => g.length === 12)).toEqual(c);
      expect(fitCount([a, b, c], [], { min: 1, max: 20 })).toHaveLength(3);
    });
  });

  it('counts at least the voices that windows hear side by side, not those of one or two odd windows', () => {
    const axis = (a: number, b = a, mix = 0) => {
      const v = new Float32Array(4);
      v[a] = 1;
      v[b]! += mix;
      return normalise(v);
    };
    const one = [axis(0)];
    const two = [axis(0), axis(1)];
    // Two voices in three of twelve windows: at least two speakers.
    expect(voicesHeardTogether([...Array(9).fill(one), two, two, two], 0.4)).toBe(2);
    // Three at once in two windows, two in others.
    expect(
      voicesHeardTogether([one, two, [axis(0), axis(1), axis(2)], [axis(2), axis(0), axis(1)]], 0.4),
    ).toBe(3);
    // A pair that sounds alike (cosine 0.95) is one voice split by the segmentation.
    const alike = [axis(0), axis(0, 1, 0.33)];
    expect(voicesHeardTogether([one, alike, alike, alike], 0.4)).toBe(1);
    // One window of two is not enough; nor are 2 of 100 (5% are needed).
    expect(voicesHeardTogether([one, one, two], 0.4)).toBe(1);
    expect(voicesHeardTogether([...Array(98).fill(one), two, two], 0.4)).toBe(1);
    expect(voicesHeardTogether([...Array(95).fill(one), two, two, two, two, two], 0.4)).toBe(2);
    expect(voicesHeardTogether([], 0.4)).toBe(0);
  });
});
