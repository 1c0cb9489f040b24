import type { Audio } from './audio/wav-reader';
import type { CountBounds } from './clustering/count-bounds';
import type { ClusterInput, SpeakerClusterer } from './clustering/speaker-clusterer';
import { Diarizer, type DiarizerParts } from './diarizer';
import type { EmbeddingExtractor, TimeWindow } from './embedding/embedding-extractor';
import type { OverlapDetector } from './overlap/overlap-detector';
import type { Segment } from './timeline';
import type { SpeechRegion, VoiceActivityDetector } from './vad/vad';

const audio: Audio = { samples: new Float32Array(16000 * 10), sampleRate: 16000 };

class FakeVad implements VoiceActivityDetector {
  constructor(private readonly regions: SpeechRegion[]) {}
  async detect(): Promise<SpeechRegion[]> {
    return this.regions;
  }
}

/** Embeds a window as its start time, so the fake clusterer can label by time. */
class TimeExtractor implements EmbeddingExtractor {
  async embed(_audio: Audio, windows: TimeWindow[]): Promise<Float32Array[]> {
    return windows.map((w) => Float32Array.of(w.start));
  }
}

/** Speaker 7 before 4 s, speaker 3 after: ids are arbitrary, names must come out A, B. */
class SplitClusterer implements SpeakerClusterer {
  bounds: CountBounds | undefined;
  async cluster({ embeddings }: ClusterInput, bounds: CountBounds): Promise<number[]> {
    this.bounds = bounds;
    return embeddings.map((e) => (e[0]! < 4 ? 7 : 3));
  }
}

function diarizer(parts: Partial<DiarizerParts> = {}) {
  const clusterer = new SplitClusterer();
  const d = new Diarizer({
    vad: new FakeVad([
      { start: 1, end: 3.5 },
      { start: 5, end: 8 },
    ]),
    extractor: new TimeExtractor(),
    clusterer,
    ...parts,
  });
  return { d, clusterer };
}

describe('Diarizer', () => {
  it('runs the pipeline and names speakers by first appearance', async () => {
    const { d, clusterer } = diarizer();
    const result = await d.diarizeAudio(audio, { speakers: { min: 1, max: 3 } });
    expect(clusterer.bounds).toEqual({ min: 1, max: 3 });
    expect(result).toEqual({
      segments: [
        { start: 1, end: 3.5, speakers: ['A'] },
        { start: 5, end: 8, speakers: ['B'] },
      ],
      speakerCount: 2,
    });
  });

  it('returns no segments and a count of 0 when nobody speaks', async () => {
    const { d } = diarizer({ vad: new FakeVad([]) });
    expect(await d.diarizeAudio(audio, { speakers: true })).toEqual({ segments: [], speakerCount: 0 });
  });

  it('passes the timeline through the overlap detector', async () => {
    const overlap: OverlapDetector = {
      async detect(_a: Audio, segments: Segment<number>[]) {
        return [{ ...segments[0]!, end: 3 }, { start: 3, end: 3.5, speakers: [7, 3] }, segments[1]!];
      },
    };
    const { segments, speakerCount } = await diarizer({ overlap }).d.diarizeAudio(audio, { speakers: 2 });
    expect(segments[1]).toEqual({ start: 3, end: 3.5, speakers: ['A', 'B'] });
    expect(speakerCount).toBe(2);
  });

  it('rejects an invalid speakers option before any work', async () => {
    const vad = { detect: jest.fn() };
    await expect(diarizer({ vad }).d.diarizeAudio(audio, { speakers: 0 })).rejects.toThrow(RangeError);
    expect(vad.detect).not.toHaveBeenCalled();
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    const vad: VoiceActivityDetector = {
      async detect() {
        controller.abort(new Error('canceled'));
        return [{ start: 0, end: 2 }];
      },
    };
    const extractor = { embed: jest.fn() };
    await expect(
      diarizer({ vad, extractor }).d.diarizeAudio(audio, { speakers: true, signal: controller.signal }),
    ).rejects.toThrow('canceled');
    expect(extractor.embed).not.toHaveBeenCalled();
  });
});
