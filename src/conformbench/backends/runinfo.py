"""Facts about a run for replay headers: model file hash, library versions,
hardware. Shared by every backend."""

from __future__ import annotations

import importlib.metadata
import os
import platform
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from conformbench.backends.loops import DEFAULT_LOOP_RULE

__all__ = [
    "CORE_DISTRIBUTIONS",
    "LocalCounters",
    "hardware_info",
    "library_versions",
    "local_decoding_facts",
    "runtime_distributions",
]

#: distributions every run's output depends on, whatever its backend and engines
CORE_DISTRIBUTIONS = ("conformbench", "numpy", "jsonschema")


def runtime_distributions() -> tuple[str, ...]:
    """Distributions whose versions change what a run produces: the core,
    then what each backend and engine declares (``distributions`` of a
    backend, ``distribution`` of an engine), third-party plugins included,
    so a plugin's version reaches the replay without a list to edit."""
    from conformbench.backends.base import backends
    from conformbench.engines.base import engines

    names: list[str] = list(CORE_DISTRIBUTIONS)
    for backend in backends.names():
        names.extend(getattr(backends.get(backend), "distributions", ()))
    names.extend(engines.get(engine).distribution for engine in engines.names())
    names.extend(backends.distributions().values())
    names.extend(engines.distributions().values())
    return tuple(dict.fromkeys(names))


def library_versions(names: tuple[str, ...] | None = None) -> dict[str, str | None]:
    """Installed version per distribution (default: ``runtime_distributions()``);
    None where it is not installed."""
    out: dict[str, str | None] = {}
    for name in runtime_distributions() if names is None else names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def hardware_info() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }


@dataclass
class LocalCounters:
    """The counters every backend decoding in this process keeps for its run
    metadata; a backend's subclass adds its own."""

    generations: int = 0
    prompt_tokens_total: int = 0
    compiles: int = 0
    compile_cache_hits: int = 0
    #: generations ended by the loop stop, and the budget they left unspent
    loop_stops: int = 0
    loop_tokens_saved: int = 0


def local_decoding_facts(sampler: Mapping[str, float], engine_versions: dict[str, str | None],
                         counters: LocalCounters) -> dict[str, Any]:
    """What the run metadata of a backend decoding in this process (llamacpp,
    transformers) ends with: its sampler, the loop stop, the versions of its
    engines, libraries and hardware, then its counters (a dataclass)."""
    return {
        "sampler": {"greedy_at_temperature_0": True, **sampler},
        "loop_stop": {"supported": True, **asdict(DEFAULT_LOOP_RULE)},
        "engines": engine_versions,
        "versions": library_versions(),
        "hardware": hardware_info(),
        **asdict(counters),
    }
