"""pymorphy2 0.9.1 — the lemmatiser the AIJ-2021/2022 organisers' scripts ran — as a test oracle.

pymorphy2 cannot be a dependency: it calls ``inspect.getargspec`` (gone in Python 3.11) and requires the package
``DAWG-Python``, whose ``dawg_python`` module pymorphy3's ``DAWG2-Python`` also installs. ``make install-test``
downloads its wheel without installing it (``pip download --no-deps pymorphy2==0.9.1 -d <venv>/oracles``); the
package is imported straight from the wheel file (pure Python), on pymorphy3's ``dawg_python``, with
``getargspec`` answered from ``getfullargspec`` inside pymorphy2's module only. It reads the dictionary the library
installs (``pymorphy2-dicts-ru``, the organisers' 2020 one).
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections import namedtuple
from typing import Any

from tests.helpers.oracles import oracle_wheel

PYMORPHY2 = "pymorphy2==0.9.1"
_ArgSpec = namedtuple("ArgSpec", "args varargs keywords defaults")


def _getargspec(function):
    spec = inspect.getfullargspec(function)
    return _ArgSpec(spec.args, spec.varargs, spec.varkw, spec.defaults)


@functools.lru_cache(maxsize=1)
def pymorphy2_analyzer() -> Any:
    """pymorphy2 0.9.1's ``MorphAnalyzer`` over ``pymorphy2_dicts_ru`` (skips, or fails in CI, without the wheel)."""
    wheel = str(oracle_wheel(PYMORPHY2))
    import pymorphy2_dicts_ru

    if wheel not in sys.path:
        sys.path.append(wheel)
    import pymorphy2
    import pymorphy2.units.base

    assert pymorphy2.__file__.startswith(wheel), pymorphy2.__file__  # the oracle, not some other copy
    pymorphy2.units.base.inspect = types.SimpleNamespace(getargspec=_getargspec)
    return pymorphy2.MorphAnalyzer(path=pymorphy2_dicts_ru.get_path(), lang="ru")


def pymorphy2_lemma(token: str) -> str:
    """pymorphy2's most probable normal form, as the scripts call it (``morph.parse(token)[0].normal_form``)."""
    return pymorphy2_analyzer().parse(token)[0].normal_form
