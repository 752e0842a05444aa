"""Whether two replays (or a replay and this machine) come from one build.

Greedy llama.cpp output is bit-identical only on the same build, the same
CPU features and the same thread count (llama.cpp picks its kernels at run
time); transformers' output also depends on the torch build and the dtype.
The replay header records those facts (``ReplayHeader.build``,
``runinfo.build_fields()``); this compares them, one sentence per difference,
so a comparison of two replays says when part of a difference may be the
build's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from conformbench.backends.base import backends, manifest_of

__all__ = ["build_differences"]


def _fields() -> list[tuple[str, str]]:
    """The facts compared, with the words a sentence uses for each: the CPU
    features, then each backend's build facts as its manifest names them."""
    declared = [manifest_of(name).build for name in backends.names()]
    return [("cpu_features", "CPU features"), *((b.key, b.label) for b in declared if b is not None)]


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "..."


def _threads(build: Mapping[str, Any]) -> dict[str, Any]:
    models = build.get("models") or {}
    return {label: (m.get("threads"), m.get("dtype")) for label, m in sorted(models.items())}


def build_differences(sides: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """Sentences saying how the builds of ``sides`` ((name, build facts),
    e.g. replay paths) differ; a side without facts (a replay made before
    they were recorded) is named as unknown. Empty when all agree."""
    unknown = [name for name, build in sides if not build]
    known = [(name, build) for name, build in sides if build]
    out: list[str] = []
    if unknown:
        out.append(f"{', '.join(unknown)} record(s) no build (made before conformbench recorded it): "
                   "whether the texts come from one build cannot be checked")
    if len(known) < 2:
        return out
    (first, base), rest = known[0], known[1:]
    for key, words in _fields():
        for name, build in rest:
            if build.get(key) != base.get(key):
                out.append(f"different {words}: {first} has {_short(base.get(key))}, "
                           f"{name} has {_short(build.get(key))}")
    for name, build in rest:
        mine, theirs = _threads(base), _threads(build)
        shared = sorted(set(mine) & set(theirs))
        changed = [label for label in shared if mine[label] != theirs[label]]
        if changed or (not shared and list(mine.values()) != list(theirs.values())):
            out.append(f"different threads or dtype: {first} has {_short(mine)}, {name} has {_short(theirs)}")
    return out
