"""Facts about a run for replay headers: model file hash, library versions,
hardware. Shared by every backend."""

from __future__ import annotations

import importlib.metadata
import os
import platform
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from conformbench.backends.loops import DEFAULT_LOOP_RULE
from conformbench.backends.manifest import BackendOption
from conformbench.records.generation import redacted_url

__all__ = [
    "BUILD_FIELDS",
    "CORE_DISTRIBUTIONS",
    "LocalCounters",
    "build_facts",
    "build_fields",
    "cpu_features",
    "hardware_info",
    "library_versions",
    "llama_cpp_system_info",
    "local_decoding_facts",
    "runtime_distributions",
    "uses_amx",
]

#: distributions every run's output depends on, whatever its backend and engines
CORE_DISTRIBUTIONS = ("conformbench", "numpy", "jsonschema")


def runtime_distributions() -> tuple[str, ...]:
    """Distributions whose versions change what a run produces: the core,
    then what each backend and engine declares (``distributions`` in a
    backend's manifest, ``distribution`` of an engine), third-party plugins included,
    so a plugin's version reaches the replay without a list to edit."""
    from conformbench.backends.base import backends, manifest_of
    from conformbench.engines.base import engines

    names: list[str] = list(CORE_DISTRIBUTIONS)
    for backend in backends.names():
        names.extend(manifest_of(backend).distributions)
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


#: CPU flags that decide which kernels llama.cpp and torch pick at run time
#: (x86 SIMD levels, "pni" being SSE3, fused multiply-add, half floats, AMX; Arm NEON, SVE, dot products)
_KERNEL_FLAGS = frozenset({
    "pni", "ssse3", "sse4_1", "bmi2", "sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw",
    "avx512vl", "avx512dq", "avx512cd", "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx512vbmi",
    "amx_tile", "amx_int8", "amx_bf16", "asimd", "asimddp", "sve", "sve2", "i8mm", "bf16", "fphp", "asimdhp",
})
#: what the replay header's ``build`` holds whatever the backends, one line
#: each (docs/guarantees.md); ``build_fields()`` adds what each backend's
#: manifest declares (``BackendManifest.build``)
BUILD_FIELDS = {
    "cpu_features": "the CPU's SIMD flags that pick kernels at run time (from /proc/cpuinfo)",
    "models": "per model label: backend, threads, dtype and the options a backend declares affects_build, "
              "as the spec sets them",
}


def build_fields() -> dict[str, str]:
    """Every key the header's ``build`` may hold, with its meaning."""
    from conformbench.backends.base import backends, manifest_of

    declared = {m.build.key: m.build.meaning for m in map(manifest_of, backends.names()) if m.build is not None}
    return {"cpu_features": BUILD_FIELDS["cpu_features"], **declared, "models": BUILD_FIELDS["models"]}


def cpu_features() -> list[str]:
    """The kernel-deciding flags of this CPU (empty where /proc/cpuinfo is absent)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return []
    flags: set[str] = set()
    for line in text.split("\n"):
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
            flags.update(value.split())
    return sorted(flags & _KERNEL_FLAGS)


def llama_cpp_system_info() -> str:
    """llama.cpp's ``llama_print_system_info()`` (the kernels its build runs),
    whitespace collapsed; llama-cpp-python must be installed."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info()
    text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
    return " ".join(text.split())


def uses_amx(system_info: str) -> bool:
    """Whether a llama.cpp build's system info says it runs AMX kernels; the
    llamacpp backend then loads models with extra buffer types off."""
    return "AMX_INT8 = 1" in system_info


class _ModelSpec(Protocol):
    @property
    def label(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def threads(self) -> int | None: ...
    @property
    def extra(self) -> dict[str, Any]: ...
    @property
    def base_urls(self) -> tuple[str, ...]: ...


def _model_facts(model: _ModelSpec) -> dict[str, Any]:
    facts = {"backend": model.backend, "threads": model.threads, "dtype": model.extra.get("dtype")}
    urls = model.base_urls
    if len(urls) > 1:  # a pool: every server, as stored (what each serves is in the model record)
        facts["servers"] = [redacted_url(url) for url in urls]
    return facts


def build_facts(models: Sequence[_ModelSpec]) -> dict[str, Any]:
    """What decides whether a rerun gives the same texts (``build_fields()``)
    for a run's models (``ModelSpec``): greedy output is bit-identical only
    on the same build, CPU features and threads. Each backend's own facts
    and build-affecting options are those its manifest declares."""
    from conformbench.backends.base import manifest_of

    facts: dict[str, Any] = {"cpu_features": cpu_features()}
    for backend in sorted({m.backend for m in models}):
        build = manifest_of(backend).build
        if build is not None:
            facts[build.key] = build.read()
    facts["models"] = {m.label: _model_build(m, manifest_of(m.backend).options) for m in models}
    return facts


def _model_build(model: _ModelSpec, options: Sequence[BackendOption]) -> dict[str, Any]:
    """A model's entry: ``dtype`` always (None where its backend has none: the
    field every header has held), then its backend's affects_build options."""
    entry: dict[str, Any] = {"backend": model.backend, "threads": model.threads, "dtype": model.extra.get("dtype")}
    urls = model.base_urls
    if len(urls) > 1:  # a pool: every server, as stored (what each serves is in the model record)
        entry["servers"] = [redacted_url(url) for url in urls]
    return {**entry, **{o.name: model.extra.get(o.name) for o in options if o.affects_build}}


@dataclass
class LocalCounters:
    """The counters every backend decoding in this process keeps for its run
    metadata; a backend's subclass adds its own."""

    #: calls to the model since it was loaded: the canary, every turn (a
    #: reasoning turn, each round of a multi-round arm) not taken from another
    #: arm's identical request; a replay's answers and items x conditions are
    #: counted apart (docs/run.md, "What is counted"). Replays made before
    #: recorded it as ``generations``
    model_calls: int = 0
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
