#!/usr/bin/env python3
"""Builds a second real-speech set for bench/der from pyannote-audio's source release on PyPI.

pyannote-audio ships 14 AMI-derived meeting excerpts of 30 s with reference turns in its tests
(tests/data: trn00-trn09, dev00-01, tst00-01) and a 30 s sample with its RTTM. The development
set in ../shared/eval/diar is four of them (trn03, trn05, trn06, trn09); this script writes the
other ten and the sample, in the layout the bench reads (manifest.tsv, <id>.wav, <id>.rttm,
<id>.uem), so a choice tuned on the four can be checked on files it never saw:

    python3 bench/der/scripts/held-out-set.py /tmp/diar-held-out
    HARK_EVAL_DIR=/tmp/diar-held-out pnpm --filter @hark/bench-der bench

With --all, the development four are written too (from the same release), for one table over
all fifteen:

    python3 bench/der/scripts/held-out-set.py --all /tmp/diar-all

The release is downloaded from PyPI (pinned version, sha256 checked); nothing is committed.
"""
import hashlib, io, os, re, subprocess, sys, tarfile, unicodedata, urllib.request, wave

VERSION = "4.0.7"
DEV_SET = {"trn03", "trn05", "trn06", "trn09"}


def sdist(version):
    # The simple index (PEP 503) is what pip reads; its links carry the file's sha256.
    index = urllib.request.urlopen("https://pypi.org/simple/pyannote-audio/").read().decode()
    name = f"pyannote_audio-{version}.tar.gz"
    (href,) = {h for h in re.findall(r'href="([^"]+)"', index) if f"/{name}#" in h}
    url, digest = href.split("#sha256=")
    data = urllib.request.urlopen(url).read()
    if hashlib.sha256(data).hexdigest() != digest:
        sys.exit("sha256 mismatch on the downloaded release")
    return tarfile.open(fileobj=io.BytesIO(data))


def main():
    args = [a for a in sys.argv[1:] if a != "--all"]
    everything = "--all" in sys.argv[1:]
    out = args[0] if args else "/tmp/diar-held-out"
    os.makedirs(out, exist_ok=True)
    tar = sdist(VERSION)
    members = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if "/" in m.name}
    read = lambda path: tar.extractfile(members[path]).read()

    turns = {}  # uri -> rttm lines
    sources = ["tests/data/debug.train.rttm", "tests/data/debug.development.rttm",
               "tests/data/debug.test.rttm", "src/pyannote/audio/sample/sample.rttm"]
    for src in sources:
        for line in read(src).decode().splitlines():
            if line.startswith("SPEAKER"):
                uri = unicodedata.normalize("NFC", line.split()[1])
                turns.setdefault(uri, []).append((line, src))

    wavs = {}
    for name in members:
        if name.endswith(".wav") and (name.startswith("tests/data/") or name.endswith("sample/sample.wav")):
            uri = unicodedata.normalize("NFC", os.path.basename(name)[:-4]).replace("trñ", "trn")
            wavs[uri] = name

    rows = ["file\tduration_s\tnum_speakers\tspeech_s\toverlap_s\trttm\tuem\tsource"]
    for uri in sorted(turns):
        if (uri in DEV_SET and not everything) or uri not in wavs:
            continue
        ident = uri
        # Some are 32-bit float WAV; the bench reads 16-bit PCM, as the development set has it.
        target = os.path.join(out, f"{ident}.wav")
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", "pipe:0", "-ac", "1", "-ar", "16000",
                        "-c:a", "pcm_s16le", target], input=read(wavs[uri]), check=True)
        with wave.open(target) as w:
            duration = w.getnframes() / w.getframerate()
        lines = []
        for line, _ in turns[uri]:
            parts = line.split()
            parts[1] = ident
            lines.append(" ".join(parts))
        with open(os.path.join(out, f"{ident}.rttm"), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(out, f"{ident}.uem"), "w") as f:
            f.write(f"{ident} NA 0.000 {duration:.3f}\n")
        speakers = {l.split()[7] for l in lines}
        speech = sum(float(l.split()[4]) for l in lines)
        rows.append(f"{ident}.wav\t{duration:.3f}\t{len(speakers)}\t{speech:.1f}\t\t{ident}.rttm\t{ident}.uem\t"
                    f"pyannote.audio {VERSION} sdist {wavs[uri]}")
    with open(os.path.join(out, "manifest.tsv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    print(f"{len(rows) - 1} files in {out}")


if __name__ == "__main__":
    main()
