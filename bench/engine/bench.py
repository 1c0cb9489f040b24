"""Engine bench (see README.md): today's whisper-cli configuration, the configuration the worker
runs now, and faster-whisper int8, interleaved (round by round, set by set, engine by engine) on
the same files. Prints wall, CPU seconds, audio s per CPU s, peak RSS and WER per engine and set,
and the ratios against faster-whisper. Figures are printed, never asserted.

Environment (run.sh sets the paths and BENCH_QUANT_MODELS): BENCH_QUICK=1 (4 dev files, no 10-minute file), BENCH_SMOKE=1 (one dev file: run.sh --smoke),
BENCH_ROUNDS (1), BENCH_SETS (e.g. 60s,dev; default all), BENCH_SKIP (engine@set pairs), BENCH_CANDIDATES (extra whisper-cli configurations by name, see CANDIDATES, or faster-whisper-words: faster-whisper with word timestamps, or faster-whisper-vad: with vad_filter),
BENCH_THREADS (2).
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import types
import wave
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENV = os.environ
THREADS = ENV.get("BENCH_THREADS", "2")
WHISPER_BIN = ENV["WHISPER_BIN"]  # built with scripts/whisper-patches
UPSTREAM_BIN = ENV.get("BENCH_UPSTREAM_BIN", WHISPER_BIN)  # the same source without them: today's
BASE_MODEL = ENV["BENCH_BASE_MODEL"]  # ggml-base.bin, f16
MODELS = {"f16": BASE_MODEL, **json.loads(ENV.get("BENCH_QUANT_MODELS", "{}"))}
FW_MODEL = ENV["BENCH_FW_MODEL"]
FW_PYTHON = sys.executable
WORK = Path(ENV["BENCH_WORK"])
EVAL = Path(ENV["BENCH_EVAL_DIR"])
VAD_MODEL = ENV.get("BENCH_VAD_MODEL", "")  # ggml-silero-v5.1.2.bin (scripts/vad-model.sh)
# faster-whisper's vad_filter defaults (min speech at whisper.cpp's 250 ms): the worker's WHISPER_VAD=on.
VAD_ARGS = ["--vad", "-vm", VAD_MODEL, "-vt", "0.5", "-vspd", "250", "-vsd", "2000", "-vp", "400"]
FW_FLAVOURS = {"faster-whisper": {}, "faster-whisper-words": {"FW_WORD_TIMESTAMPS": "1"}, "faster-whisper-vad": {"FW_VAD_FILTER": "1"}}


def load_normalizer():
    """openai-whisper's EnglishTextNormalizer, imported from the installed package without its
    __init__ (which imports torch): only whisper/normalizers is loaded, unchanged."""
    import importlib.util

    spec = importlib.util.find_spec("whisper")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("openai-whisper is not installed in the bench venv")
    pkg = types.ModuleType("whisper")
    pkg.__path__ = list(spec.submodule_search_locations)
    sys.modules["whisper"] = pkg
    from whisper.normalizers import EnglishTextNormalizer

    return EnglishTextNormalizer()


NORMALIZE = load_normalizer()


def edit_distance(ref, hyp):
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def wer(pairs):
    """Corpus WER over (reference, hypothesis) pairs, both normalised."""
    errors = words = 0
    for ref, hyp in pairs:
        r = NORMALIZE(ref).split()
        h = NORMALIZE(hyp).split()
        errors += edit_distance(r, h)
        words += len(r)
    return 100.0 * errors / max(words, 1)


# whisper-cli configurations. "today" is what the worker ran before issue 13 (whisper-cli's
# defaults: beam 5, best-of 5, temperature fallback); "hark" must equal what
# packages/media/src/whisper.ts passes now (engineArgs), the others are levers to compare.
def fit(margin):
    # "-ac -N": the patched engine (scripts/whisper-patches/0002) fits each 30 s window's audio
    # context to the audio in it plus N positions (50 a second).
    return ["-ac", str(-margin)]


CANDIDATES = {
    "today": {"model": "f16", "args": lambda s: [], "bin": "upstream"},
    # What the worker runs (WHISPER_WORD_TIMESTAMPS=dtw, the default since 2026-11-26): words timed by
    # DTW, beside flash attention (scripts/whisper-patches/0004). Earlier runs in README.md called
    # this "hark-dtw" and the token-timed one "hark".
    "hark": {"model": "q8_0", "args": lambda s: ["-bs", "1", "-bo", "5", "-sns"] + fit(640) + ["-dtw", "base"], "env": {"WHISPER_DECODE_THREADS": "1"}},
    # Words timed by timestamp tokens (WHISPER_WORD_TIMESTAMPS=tokens, or auto without speakers).
    "hark-tokens": {"model": "q8_0", "args": lambda s: ["-bs", "1", "-bo", "5", "-sns"] + fit(640), "env": {"WHISPER_DECODE_THREADS": "1"}},
    # Upstream's DTW (-nfa: flash attention off).
    "hark-dtw-nfa": {"model": "q8_0", "args": lambda s: ["-bs", "1", "-bo", "5", "-sns"] + fit(640) + ["-dtw", "base", "-nfa"], "env": {"WHISPER_DECODE_THREADS": "1"}},
    # WHISPER_VAD=on: only the speech Silero VAD finds is decoded (times mapped back: whisper-patches/0005).
    "hark-vad": {"model": "q8_0", "args": lambda s: ["-bs", "1", "-bo", "5", "-sns"] + fit(640) + ["-dtw", "base"] + VAD_ARGS, "env": {"WHISPER_DECODE_THREADS": "1"}},
    "hark-dt2": {"model": "q8_0", "args": lambda s: ["-bs", "1", "-bo", "5", "-sns"] + fit(640)},
    "hark-fit384": {"model": "q8_0", "args": lambda s: ["-bs", "1", "-bo", "5", "-sns"] + fit(384), "env": {"WHISPER_DECODE_THREADS": "1"}},
    "hark-nofit": {"model": "q8_0", "args": lambda s: ["-bs", "1", "-bo", "5", "-sns"], "env": {"WHISPER_DECODE_THREADS": "1"}},
    "q8-beam5": {"model": "q8_0", "args": lambda s: []},
    "q8-greedy": {"model": "q8_0", "args": lambda s: ["-bs", "1"]},
    "q8-greedy-bo2": {"model": "q8_0", "args": lambda s: ["-bs", "1", "-bo", "2"]},
    "q8-greedy-nst": {"model": "q8_0", "args": lambda s: ["-bs", "1", "-sns"]},
    "hark-no-nst": {"model": "q8_0", "args": lambda s: ["-bs", "1", "-bo", "5"] + fit(640), "env": {"WHISPER_DECODE_THREADS": "1"}},
    "q8-greedy-fit128": {"model": "q8_0", "args": lambda s: ["-bs", "1"] + fit(128)},
    "q8-greedy-fit256": {"model": "q8_0", "args": lambda s: ["-bs", "1"] + fit(256)},
    "q8-greedy-fit384": {"model": "q8_0", "args": lambda s: ["-bs", "1"] + fit(384)},
    "q8-beam5-fit384": {"model": "q8_0", "args": lambda s: fit(384)},
    "q5-greedy": {"model": "q5_1", "args": lambda s: ["-bs", "1"]},
    "q5-beam5": {"model": "q5_1", "args": lambda s: []},
    "f16-greedy": {"model": "f16", "args": lambda s: ["-bs", "1"]},
    "q8-greedy-t1": {"model": "q8_0", "args": lambda s: ["-bs", "1"], "threads": "1"},
}


def run_timed(cmd, env=None):
    """Runs cmd; returns wall s, CPU s (user + sys of the process and its children), peak RSS MB."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {proc.returncode}: {stderr[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def whisper_text(json_path):
    doc = json.loads(Path(json_path).read_text(encoding="utf-8", errors="replace"))
    return " ".join(seg["text"].strip() for seg in doc["transcription"])


def run_cli(name, files):
    cfg = CANDIDATES[name]
    model = MODELS[cfg["model"]]
    threads = cfg.get("threads", THREADS)
    wall = cpu = rss = 0.0
    texts = {}
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        for f in files:
            out = os.path.join(tmp, "out")
            # The worker's own arguments (whisper.ts): 16 kHz WAV in, full JSON out, language detected.
            binary = UPSTREAM_BIN if cfg.get("bin") == "upstream" else WHISPER_BIN
            cmd = [binary, "-m", model, "-f", f["wav"], "-t", threads, "-l", "auto"]
            cmd += cfg["args"](f["seconds"]) + ["-ojf", "-of", out]
            w, c, r = run_timed(cmd, cfg.get("env"))
            wall, cpu, rss = wall + w, cpu + c, max(rss, r)
            texts[f["wav"]] = whisper_text(out + ".json")
    return wall, cpu, rss, texts


def run_fw(files, flavour="faster-whisper"):
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        out = os.path.join(tmp, "fw.json")
        cmd = [FW_PYTHON, str(HERE / "fw_run.py"), FW_MODEL, THREADS, out] + [f["src"] for f in files]
        wall, cpu, rss = run_timed(cmd, FW_FLAVOURS[flavour])
        by_src = json.loads(Path(out).read_text(encoding="utf-8"))
    return wall, cpu, rss, {f["wav"]: by_src[f["src"]] for f in files}


def to_wav(src, wav):
    """16 kHz mono s16le, as the worker's decode writes it."""
    if not wav.exists():
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(src), "-ac", "1", "-ar", "16000",
                        "-c:a", "pcm_s16le", str(wav)], check=True)
    with wave.open(str(wav)) as w:
        return w.getnframes() / w.getframerate()


def prepare_sets():
    """The 60 s clip, the 16 dev files (with their references) and a 10-minute file of real
    speech (the clip, the dev files and jfk.wav, repeated in that order until 600 s)."""
    wavs = WORK / "wav"
    wavs.mkdir(parents=True, exist_ok=True)
    audio = Path(ENV["BENCH_AUDIO_DIR"])

    def entry(src, reference=None):
        wav = wavs / (Path(src).stem + ".wav")
        return {"src": str(src), "wav": str(wav), "seconds": to_wav(src, wav), "reference": reference}

    clip = entry(audio / "speech-60s.wav")
    dev = []
    for line in (EVAL / "manifest.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        cols = line.split("\t")
        dev.append(entry(EVAL / cols[0], cols[2]))
    jfk = entry(audio / "jfk.wav")
    long_wav = wavs / "real-speech-10min.wav"
    if not long_wav.exists():
        parts, total = [], 0.0
        while total < 600:
            for f in [clip, *dev, jfk]:
                with wave.open(f["wav"]) as w:
                    parts.append(w.readframes(w.getnframes()))
                total += f["seconds"]
                if total >= 600:
                    break
        with wave.open(str(long_wav) + ".tmp", "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(16000)
            w.writeframes(b"".join(parts)[: 600 * 16000 * 2])
        os.replace(str(long_wav) + ".tmp", long_wav)
    long = {"src": str(long_wav), "wav": str(long_wav), "seconds": to_wav(long_wav, long_wav), "reference": None}
    # Real meetings (the diarization development set, 4 x 30 s, pauses and quiet stretches): time only.
    diar = Path(ENV["BENCH_DIAR_DIR"]) if ENV.get("BENCH_DIAR_DIR") else None
    meetings = [entry(p) for p in sorted(diar.glob("*.wav"))] if diar else []
    return {"60s": [clip], "dev": dev, "10min": [long], **({"meetings": meetings} if meetings else {})}


def load_sets():
    quick = ENV.get("BENCH_QUICK") == "1"
    sets = prepare_sets()
    if ENV.get("BENCH_SMOKE") == "1":
        # The test command's check that the bench runs: one dev file, every engine once.
        return {"dev": sets["dev"][:1]}
    if quick:
        sets["dev"] = sets["dev"][:4]
        sets.pop("10min", None)
        sets.pop("meetings", None)
    only = [s for s in ENV.get("BENCH_SETS", "").split(",") if s]
    if only:
        sets = {k: v for k, v in sets.items() if k in only}
    return sets


def loadavg():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    sets = load_sets()
    extra = [c for c in ENV.get("BENCH_CANDIDATES", "").split(",") if c]
    for c in extra:
        if c not in CANDIDATES and c not in FW_FLAVOURS:
            raise SystemExit(f"unknown candidate {c}; known: {', '.join(CANDIDATES)}")
    engines = ["today", "hark"] + [c for c in extra if c not in ("today", "hark")] + ["faster-whisper"]
    rounds = int(ENV.get("BENCH_ROUNDS", "1"))
    # "engine@set" pairs not to run, e.g. today@10min (about 4 minutes on a quiet machine).
    skip = {p for p in ENV.get("BENCH_SKIP", "").split(",") if p}
    results = {}  # (set, engine) -> list of (wall, cpu, rss, texts)
    loads = []
    print(f"engine bench: {THREADS} threads per engine, {rounds} round(s), sets: "
          + ", ".join(f"{k} ({len(v)} files, {sum(f['seconds'] for f in v):.0f} s)" for k, v in sets.items()))
    print(f"  load average before: {loadavg()}  ({os.cpu_count()} CPUs)", flush=True)
    for rnd in range(rounds):
        for set_name, files in sets.items():
            for engine in engines:
                if f"{engine}@{set_name}" in skip:
                    continue
                if engine.startswith("faster-whisper"):
                    run = run_fw(files, engine)
                else:
                    run = run_cli(engine, files)
                results.setdefault((set_name, engine), []).append(run)
                loads.append(os.getloadavg()[0])
                print(f"  round {rnd + 1} {set_name:5} {engine:16} wall {run[0]:7.2f} s  cpu {run[1]:7.2f} s"
                      f"  load {loads[-1]:.2f}", file=sys.stderr, flush=True)
    print(f"  load average after:  {loadavg()}; 1-minute load during the runs: "
          f"min {min(loads):.2f}, max {max(loads):.2f}")

    def med(xs):
        return sorted(xs)[len(xs) // 2]

    for set_name, files in sets.items():
        audio = sum(f["seconds"] for f in files)
        refs = {f["wav"]: f.get("reference") for f in files}
        print(f"\n{set_name}: {len(files)} file(s), {audio:.1f} s of audio (median of {rounds} round(s))")
        print(f"  {'engine':16} {'wall s':>8} {'CPU s':>8} {'audio s/CPU s':>14} {'peak RSS MB':>12} {'WER %':>7}"
              f" {'wall/fw':>8} {'(audio/CPU)/fw':>15}")
        fw = results[(set_name, "faster-whisper")]
        fw_wall = med([r[0] for r in fw])
        fw_eff = audio / med([r[1] for r in fw])
        for engine in engines:
            if (set_name, engine) not in results:
                print(f"  {engine:16} (skipped: BENCH_SKIP)")
                continue
            runs = results[(set_name, engine)]
            wall = med([r[0] for r in runs])
            cpu = med([r[1] for r in runs])
            rss = max(r[2] for r in runs)
            eff = audio / cpu
            if all(refs.values()):
                w = f"{wer([(refs[k], t) for k, t in runs[0][3].items()]):7.2f}"
            else:
                w = f"{'-':>7}"
            print(f"  {engine:16} {wall:8.2f} {cpu:8.2f} {eff:14.2f} {rss:12.0f} {w} {wall / fw_wall:8.2f} {eff / fw_eff:15.2f}")
    if ENV.get("BENCH_SHOW_TEXT") == "1":
        for (set_name, engine), runs in results.items():
            for k, t in runs[0][3].items():
                print(f"[{set_name} {engine}] {os.path.basename(k)}: {t}")


if __name__ == "__main__":
    main()
