"""faster-whisper as a self-hosting user runs it: one process loads the CTranslate2 model once and
transcribes the files named on the command line (beam 5 and faster-whisper's other defaults:
best-of 5, temperature fallback 0.0-1.0, language detected). Writes {file: text} as JSON.

usage: fw_run.py MODEL_DIR THREADS OUT.json FILE...
FW_WORD_TIMESTAMPS=1 asks for word timestamps too (its cross-attention DTW pass), as a caller
that needs word times does. FW_VAD_FILTER=1 decodes only the speech Silero VAD finds
(`vad_filter=True`, its default VadOptions).
"""
import json
import os
import sys

from faster_whisper import WhisperModel


def main() -> None:
    model_dir, threads, out_path, *files = sys.argv[1:]
    model = WhisperModel(model_dir, device="cpu", compute_type="int8", cpu_threads=int(threads))
    words = os.environ.get("FW_WORD_TIMESTAMPS") == "1"
    vad = os.environ.get("FW_VAD_FILTER") == "1"
    texts = {}
    for path in files:
        segments, _info = model.transcribe(path, beam_size=5, word_timestamps=words, vad_filter=vad)
        texts[path] = " ".join(s.text.strip() for s in segments)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(texts, f)


if __name__ == "__main__":
    main()
