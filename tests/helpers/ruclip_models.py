"""ruCLIP test fixtures: tiny checkpoint folders in ruclip's layout and the ruclip / youtokentome oracles.

Oracles (test dependencies, never runtime ones; ``make install-test`` provides both):

* ``youtokentome`` — no wheel for Python 3.11; it builds with ``pip install 'cython<3'`` then
  ``pip install --no-build-isolation youtokentome``.
* the ``ruclip`` 0.0.2 wheel (``pip download --no-deps ruclip==0.0.2 -d <venv>/oracles``): its package cannot be
  imported with a current ``huggingface_hub`` (``cached_download`` is gone), so its ``model.py``, ``processor.py`` and
  ``predictor.py`` are loaded as standalone modules straight from the wheel file.

Outside CI (``$CI`` unset) a missing oracle skips the tests that need it, with the reason; in CI it is an error
(:mod:`tests.helpers.oracles`).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
import types
import zipfile
from pathlib import Path
from typing import Optional

import torch

from tests.helpers.oracles import missing_oracle, oracle_wheel

TINY_RUCLIP = {
    "embed_dim": 16, "image_resolution": 32, "vision_layers": 2, "vision_width": 64, "vision_patch_size": 8,
    "context_length": 24, "vocab_size": 600, "transformer_width": 32, "transformer_heads": 2,
    "transformer_layers": 2,
}
"""A 2+2-layer ruCLIP for unit tests (32×32 images, 24-token context, vocabulary ≤ 600)."""

RUCLIP = "ruclip==0.0.2"
CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"


def require_youtokentome():
    try:
        import youtokentome
    except ImportError:
        missing_oracle("youtokentome", "pip install 'cython<3' && pip install --no-build-isolation youtokentome")
    return youtokentome


def _module_from_wheel(wheel: Path, member: str, name: str) -> types.ModuleType:
    source = zipfile.ZipFile(wheel).read(member).decode("utf-8")
    module = types.ModuleType(name)
    module.__file__ = f"{wheel}/{member}"
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def _chunked(iterable, size):
    chunk = []
    for item in iterable:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def ruclip_reference(part: str) -> types.ModuleType:
    """ruclip's ``model`` / ``processor`` / ``predictor`` module from the wheel (the latter two need youtokentome;
    ``predictor`` gets a stand-in ``more_itertools.chunked`` when that package is absent)."""
    wheel = oracle_wheel(RUCLIP)
    if part in ("processor", "predictor"):
        require_youtokentome()
    if part == "predictor" and importlib.util.find_spec("more_itertools") is None:
        sys.modules.setdefault("more_itertools", types.SimpleNamespace(chunked=_chunked))
    return _module_from_wheel(wheel, f"ruclip/{part}.py", f"ruclip_reference_{part}")


def write_bpe_model(path: Path, alphabet: str, n_rules: int, seed: int = 0) -> Path:
    """A valid YouTokenToMe ``bpe.model`` without training: specials unk=1 pad=0 bos=2 eos=3, ``alphabet`` + "▁"
    as ids 4…, then ``n_rules`` random merges of existing tokens (favouring the word-start mark, so that whole
    words form)."""
    rng = random.Random(seed)
    chars = ["\u2581"] + sorted(set(alphabet) - {"\u2581"})
    ids = list(range(4, 4 + len(chars)))
    rules, seen, tokens = [], set(), list(ids)
    while len(rules) < n_rules:
        left = ids[0] if rng.random() < 0.3 else rng.choice(tokens)
        right = rng.choice(ids[1:] if rng.random() < 0.7 else tokens)
        if (left, right) in seen:
            continue
        seen.add((left, right))
        new = 4 + len(chars) + len(rules)
        rules.append((left, right, new))
        tokens.append(new)
    lines = [f"{len(chars)} {len(rules)}"] + [f"{ord(c)} {i}" for c, i in zip(chars, ids)]
    lines += [f"{x} {y} {z}" for x, y, z in rules] + ["1 0 2 3"]
    path.write_text("\n".join(lines) + "\n")
    return path


def random_ruclip_state(config: dict, seed: int = 0) -> dict[str, torch.Tensor]:
    """A state_dict of ruclip's ``CLIP`` (the reference module's own layout) with every tensor random — biases and
    layer-norm weights too, which ruclip's initialisation leaves at 0 / 1."""
    model = ruclip_reference("model").CLIP(**{k: config[k] for k in TINY_RUCLIP})
    generator = torch.Generator().manual_seed(seed)
    state = {}
    for name, value in model.state_dict().items():
        noise = torch.randn(value.shape, generator=generator) * (0.3 if value.ndim < 2 else 0.5)
        state[name] = noise + 1 if name.endswith("weight") and ".ln" in f".{name}" and value.ndim == 1 else noise
    return state


def save_ruclip_folder(folder: Path, config: dict = TINY_RUCLIP, state: Optional[dict] = None, n_rules: int = 400,
                       seed: int = 0) -> Path:
    """``config.json`` + ``bpe.model`` (+ ``pytorch_model.bin`` when ``state`` is given) in ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    alphabet = CYRILLIC + "abcdefghijklmnopqrstuvwxyz0123456789.,!?-"
    write_bpe_model(folder / "bpe.model", alphabet, min(n_rules, config["vocab_size"] - len(alphabet) - 5), seed)
    if state is not None:
        torch.save(state, folder / "pytorch_model.bin")
    return folder
