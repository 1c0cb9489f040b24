import { MfccStatsExtractor } from '../embedding/mfcc-stats-extractor';
import { HIGH_VOICE, LOW_VOICE, synthesize } from '../testing/synthetic-voice';
import { speechWindows } from '../windows';
import { AhcClusterer } from './ahc-clusterer';
import { BicClusterer } from './bic-clusterer';
import type { ClusterInput } from './speaker-clusterer';

// Six 2.5 s turns alternating between two synthetic voices, 0.5 s apart.
const turns = Array.from({ length: 6 }, (_, i) => ({
  voice: i % 2 ? HIGH_VOICE : LOW_VOICE,
  start: 0.5 + 3 * i,
  end: 3 + 3 * i,
}));
const truthAt = (t: number) => turns.findIndex((x) => t >= x.start && t < x.end) % 2;

async function input(): Promise<ClusterInput> {
  const audio = synthesize(turns);
  const windows = speechWindows(turns);
  return { audio, windows, embeddings: await new MfccStatsExtractor().embed(audio, windows) };
}

describe('BicClusterer', () => {
  let data: ClusterInput;
  beforeAll(async () => {
    data = await input();
  });

  it('estimates two speakers and groups windows by voice', async () => {
    const labels = await new BicClusterer().cluster(data, { min: 1, max: 20 });
    expect(new Set(labels).size).toBe(2);
    data.windows.forEach((w, i) => expect(labels[i]).toBe(truthAt((w.start + w.end) / 2)));
  });

  it('forces an exact count in either direction', async () => {
    expect(new Set(await new BicClusterer().cluster(data, { min: 1, max: 1 })).size).toBe(1);
    expect(new Set(await new BicClusterer().cluster(data, { min: 3, max: 3 })).size).toBe(3);
  });

  it('clamps the estimate into a range', async () => {
    expect(new Set(await new BicClusterer().cluster(data, { min: 3, max: 5 })).size).toBe(3);
    expect(new Set(await new BicClusterer().cluster(data, { min: 1, max: 2 })).size).toBe(2);
  });

  it('handles zero and one window', async () => {
    const clusterer = new BicClusterer();
    expect(await clusterer.cluster({ ...data, windows: [], embeddings: [] }, { min: 1, max: 20 })).toEqual(
      [],
    );
    expect(
      await clusterer.cluster(
        { ...data, windows: data.windows.slice(0, 1), embeddings: data.embeddings.slice(0, 1) },
        { min: 2, max: 2 },
      ),
    ).toEqual([0]);
  });

  it('clusters a subset and assigns the rest when there are many windows', async () => {
    const labels = await new BicClusterer({ maxAhcWindows: 8 }).cluster(data, { min: 2, max: 2 });
    data.windows.forEach((w, i) => expect(labels[i]).toBe(truthAt((w.start + w.end) / 2)));
  });
});

describe('AhcClusterer', () => {
  const v = (...x: number[]) => Float32Array.from(x);
  const embeddings = [v(1, 0.1), v(1, 0), v(0.1, 1), v(0, 1), v(1, 0.05)];
  const cluster = (min: number, max: number) =>
    new AhcClusterer({ threshold: 0.3 }).cluster(
      { audio: { samples: new Float32Array(0), sampleRate: 16000 }, windows: [], embeddings },
      { min, max },
    );

  it('cuts at the threshold and clamps to the bounds', async () => {
    expect(await cluster(1, 20)).toEqual([0, 0, 1, 1, 0]);
    expect(new Set(await cluster(1, 1)).size).toBe(1);
    expect(new Set(await cluster(3, 4)).size).toBe(3);
  });
});
