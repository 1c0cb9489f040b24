#!/usr/bin/env python3
"""Silero VAD (the `silero-vad` wheel's TorchScript file) to whisper.cpp's ggml VAD format.

    python3 scripts/silero-vad-ggml.py OUT.bin [silero_vad-5.1.2-py3-none-any.whl]

Does nothing when OUT already holds the model. Without a wheel, downloads silero-vad 5.1.2 from
PyPI (the simple index's sha256 checked). Writes
what whisper.cpp's own `models/convert-silero-vad-to-ggml.py` writes (the same header, tensors,
order, shapes and types: convolution weights and the STFT basis as float16, the rest as
float32), without torch or numpy: the TorchScript archive is a zip whose `data.pkl` names each
tensor's storage file, read here with a restricted unpickler that builds no foreign object.
Only the 16 kHz model is written, as upstream does. The result must be byte-identical to the
file whisper.cpp publishes (ggml-org/whisper-vad `ggml-silero-v5.1.2.bin`, 885,098 bytes,
sha256 below); anything else is refused.
"""
import collections
import hashlib
import io
import os
import pickle
import re
import struct
import sys
import urllib.request
import zipfile
from array import array

VERSION = "5.1.2"
WHEEL = f"silero_vad-{VERSION}-py3-none-any.whl"
# whisper.cpp's published ggml-silero-v5.1.2.bin.
GGML_SHA256 = "29940d98d42b91fbd05ce489f3ecf7c72f0a42f027e4875919a28fb4c04ea2cf"

N_ENCODER_LAYERS = 4
ENCODER_IN = [129, 128, 64, 64]
ENCODER_OUT = [128, 64, 64, 128]
KERNEL = 3
WINDOW = 512
CONTEXT = 64
LSTM = 128


class Module:
    """A TorchScript module object: its state (attributes, parameters, submodules) only."""

    def __init__(self, *args):
        self.state = None

    def __setstate__(self, state):
        self.state = state


class Tensor:
    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, tuple(size), tuple(stride)


def rebuild_tensor(storage, offset, size, stride, *_):
    return Tensor(storage, offset, size, stride)


class TorchScriptUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return rebuild_tensor
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if module == "torch" and name == "FloatStorage":
            return name
        if module == "torch.jit._pickle" and name.startswith("build_") and name.endswith("list"):
            return list  # build_intlist, build_doublelist, ...: the list itself
        if module.startswith("__torch__."):
            return type(name, (Module,), {})
        raise pickle.UnpicklingError(f"unexpected {module}.{name} in the TorchScript archive")

    def persistent_load(self, pid):
        kind, storage_type, key, _location, numel = pid
        if kind != "storage" or storage_type != "FloatStorage":
            raise pickle.UnpicklingError(f"unexpected storage {pid!r}")
        return (key, numel)


def tensors(jit: bytes) -> dict:
    """Dotted name -> (shape, row-major float values) for every tensor of the module tree."""
    archive = zipfile.ZipFile(io.BytesIO(jit))
    root = archive.namelist()[0].split("/")[0]
    tree = TorchScriptUnpickler(archive.open(f"{root}/data.pkl")).load()
    found = {}

    def walk(node, prefix):
        if isinstance(node, Tensor):
            found[prefix] = node
            return
        state = node.state if isinstance(node, Module) else node
        if isinstance(state, dict):
            for key, value in state.items():
                walk(value, f"{prefix}.{key}" if prefix else str(key))

    walk(tree, "")
    out = {}
    for name, t in found.items():
        data = array("f")
        data.frombytes(archive.read(f"{root}/data/{t.storage[0]}"))
        if sys.byteorder != "little":
            data.byteswap()
        out[name] = (t.size, row_major(data, t))
    return out


def row_major(data: array, t: Tensor) -> list:
    values = []

    def visit(dim, at):
        if dim == len(t.size):
            values.append(data[at])
            return
        for i in range(t.size[dim]):
            visit(dim + 1, at + i * t.stride[dim])

    visit(0, t.offset)
    return values


def wheel_from_pypi() -> bytes:
    # The simple index (PEP 503) is what pip reads; its links carry the file's sha256.
    index = urllib.request.urlopen("https://pypi.org/simple/silero-vad/").read().decode()
    (href,) = {h for h in re.findall(r'href="([^"]+)"', index) if f"/{WHEEL}#" in h}
    url, digest = href.split("#sha256=")
    data = urllib.request.urlopen(url).read()
    if hashlib.sha256(data).hexdigest() != digest:
        raise SystemExit(f"sha256 mismatch on the downloaded {WHEEL}")
    return data


def convert(wheel_bytes: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(wheel_bytes)) as wheel:
        init = wheel.read("silero_vad/__init__.py").decode()
        version = re.search(r"""__version__\s*=\s*['"]([0-9]+\.[0-9]+\.[0-9]+)['"]""", init)
        if version is None:
            # Newer wheels take it from their metadata.
            meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
            version = re.search(r"^Version: ([0-9]+\.[0-9]+\.[0-9]+)$", wheel.read(meta).decode(), re.M)
        jit = wheel.read("silero_vad/data/silero_vad.jit")
    major, minor, patch = (int(p) for p in version.group(1).split("."))
    state = tensors(jit)

    keys = []
    for i in range(N_ENCODER_LAYERS):
        keys += [f"_model.encoder.{i}.reparam_conv.weight", f"_model.encoder.{i}.reparam_conv.bias"]
    keys += [
        "_model.decoder.rnn.weight_ih",
        "_model.decoder.rnn.weight_hh",
        "_model.decoder.rnn.bias_ih",
        "_model.decoder.rnn.bias_hh",
        "_model.decoder.decoder.2.weight",
        "_model.decoder.decoder.2.bias",
        "_model.stft.forward_basis_buffer",
    ]
    missing = [k for k in keys if k not in state]
    if missing:
        raise SystemExit(f"silero_vad.jit lacks {', '.join(missing)}")

    out = bytearray()
    out += struct.pack("<i", 0x67676D6C)
    model_type = b"silero-16k"
    out += struct.pack("<i", len(model_type)) + model_type
    out += struct.pack("<iii", major, minor, patch)
    out += struct.pack("<ii", WINDOW, CONTEXT)
    out += struct.pack("<i", N_ENCODER_LAYERS)
    for i in range(N_ENCODER_LAYERS):
        out += struct.pack("<iii", ENCODER_IN[i], ENCODER_OUT[i], KERNEL)
    out += struct.pack("<ii", LSTM, LSTM)
    out += struct.pack("<ii", LSTM, 1)

    for key in keys:
        size, values = state[key]
        if key == "_model.stft.forward_basis_buffer":
            # Upstream keeps this one unsqueezed, its dimensions reversed.
            shape = [size[2], size[1], size[0]]
            half = True
        else:
            shape = [d for d in size if d != 1][::-1][:4]  # numpy squeeze(), then reversed
            half = "weight" in key and ("encoder" in key or "_model.decoder.decoder.2" in key)
        name = key.encode()
        out += struct.pack("<iii", len(shape), len(name), 1 if half else 0)
        for d in shape:
            out += struct.pack("<i", d)
        out += name
        out += struct.pack(f"<{len(values)}{'e' if half else 'f'}", *values)

    return bytes(out)


def main() -> None:
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    out_path = sys.argv[1]
    if os.path.isfile(out_path):
        with open(out_path, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() == GGML_SHA256:
                return  # made before
    if len(sys.argv) == 3:
        with open(sys.argv[2], "rb") as f:
            wheel = f.read()
    else:
        wheel = wheel_from_pypi()
    model = convert(wheel)
    if hashlib.sha256(model).hexdigest() != GGML_SHA256:
        raise SystemExit("the converted model differs from whisper.cpp's ggml-silero-v5.1.2.bin; not written")
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path + ".tmp", "wb") as f:
        f.write(model)
    os.replace(out_path + ".tmp", out_path)
    print(f"{out_path}: Silero VAD v{VERSION} in ggml, {len(model)} bytes, sha256 {GGML_SHA256}")


if __name__ == "__main__":
    main()
