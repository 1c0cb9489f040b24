"""The diarization peer for `bench -- --peer`, driven by bench/der/src/sherpa-peer.ts.

sherpa-onnx's OfflineSpeakerDiarization as shipped (its defaults: segmentation window shift 0.1
of a window, i.e. 1 s; min_duration_on 0.3 s, min_duration_off 0.5 s; agglomerative clustering
of the embeddings at threshold 0.5 unless a count is given), on the same segmentation-3.0 and
CAM++ ONNX files Hark's neural pipeline loads. sherpa-onnx reads the models' settings from ONNX
metadata, which those files do not carry, so copies with the metadata its own export scripts
write are made in the cache folder (argv: models folder, cache folder, threads), once.

Protocol: one JSON object a line on stdin, {"samples": path of raw float32 16 kHz mono samples,
"speakers": n or null}; one JSON line back, {"segments": [[start, end, speaker], ...],
"seconds": processing time,
"peak_rss_mb": the process's peak resident set so far}. Exits at end of input.
"""

import json
import os
import resource
import sys
import time

import numpy as np
import onnx
import sherpa_onnx

SEGMENTATION_META = {
    # Values of pyannote/segmentation-3.0, as sherpa-onnx's
    # scripts/pyannote/segmentation/export-onnx.py asserts and writes them.
    "num_speakers": 3,
    "powerset_max_classes": 2,
    "num_classes": 7,
    "sample_rate": 16000,
    "window_size": 160000,
    "receptive_field_size": 991,
    "receptive_field_shift": 270,
    "model_type": "pyannote-segmentation-3.0",
    "version": "1",
}
EMBEDDING_META = {
    # A 3D-Speaker model: samples in [-1, 1], features mean-normalised per segment.
    "framework": "3d-speaker",
    "output_dim": 192,
    "sample_rate": 16000,
    "normalize_samples": 1,
    "language": "English",
    "feature_normalize_type": "global-mean",
}


def with_metadata(source, target, meta):
    # Made once per model file (28 MB for CAM++): again only when the source is newer.
    if os.path.exists(target) and os.path.getmtime(target) >= os.path.getmtime(source):
        return target
    model = onnx.load(source)
    del model.metadata_props[:]
    for key, value in meta.items():
        prop = model.metadata_props.add()
        prop.key, prop.value = key, str(value)
    onnx.save(model, target + ".tmp")
    os.replace(target + ".tmp", target)
    return target


def config(segmentation, embedding, speakers, threads):
    return sherpa_onnx.OfflineSpeakerDiarizationConfig(
        segmentation=sherpa_onnx.OfflineSpeakerSegmentationModelConfig(
            pyannote=sherpa_onnx.OfflineSpeakerSegmentationPyannoteModelConfig(model=segmentation),
            num_threads=threads,
        ),
        embedding=sherpa_onnx.SpeakerEmbeddingExtractorConfig(model=embedding, num_threads=threads),
        clustering=sherpa_onnx.FastClusteringConfig(num_clusters=speakers or -1, threshold=0.5),
    )


def main():
    models, cache, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(cache, exist_ok=True)
    segmentation = with_metadata(
        os.path.join(models, "segmentation-3.0.onnx"), os.path.join(cache, "segmentation-3.0.onnx"), SEGMENTATION_META
    )
    embedding = with_metadata(
        os.path.join(models, "campplus.onnx"), os.path.join(cache, "campplus.onnx"), EMBEDDING_META
    )
    first = config(segmentation, embedding, None, threads)
    if not first.validate():
        raise SystemExit("sherpa-onnx refused the configuration")
    diarizer = sherpa_onnx.OfflineSpeakerDiarization(first)
    print(json.dumps({"ready": sherpa_onnx.__version__}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        diarizer.set_config(config(segmentation, embedding, request.get("speakers"), threads))
        samples = np.fromfile(request["samples"], dtype=np.float32)
        start = time.perf_counter()
        result = diarizer.process(samples).sort_by_start_time()
        seconds = time.perf_counter() - start
        segments = [[s.start, s.end, s.speaker] for s in result]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps({"segments": segments, "seconds": seconds, "peak_rss_mb": peak}), flush=True)


if __name__ == "__main__":
    main()
