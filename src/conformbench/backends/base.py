"""The backend interface: a prompt plus decoding settings plus an optional
constraint in, text plus token counts and timings out. The request and
result records live in ``conformbench.records.generation``."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, ClassVar, Protocol, runtime_checkable

from conformbench.backends.manifest import BackendManifest, ConstraintSide
from conformbench.records.generation import BackendConfig, GenerationRequest, GenerationResult
from conformbench.records.spec import DEFAULT_LOCAL_ENGINE, SERVER_ENGINE
from conformbench.registry import Registry

__all__ = [
    "Backend",
    "ChecksReplicas",
    "ConstraintSide",
    "DecodesTogether",
    "DetectsDialect",
    "IdentifiesServer",
    "ReachesServer",
    "StreamsResults",
    "backends",
    "constraint_side",
    "default_engine",
    "engine_mismatch",
    "manifest_of",
]


class Backend(Protocol):
    #: set by the registry
    name: ClassVar[str]
    #: what it declares: options, constraint side, distributions, capabilities
    #: (backends/manifest.py; read with ``manifest_of(name)``)
    manifest: ClassVar[BackendManifest]

    def __init__(self, config: BackendConfig) -> None:
        """Registered classes are constructed with the config alone."""
        ...

    def generate(self, request: GenerationRequest) -> GenerationResult: ...

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        """Results in request order; HTTP backends run them concurrently."""
        ...

    def metadata(self) -> dict[str, Any]:
        """Model sha256, library versions, hardware, threads... for the replay header."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class DetectsDialect(Protocol):
    """A backend whose server takes one of several request shapes for a
    constraint (HTTP servers' structured-output dialects) and can find which
    with a request whose right answer the caller knows (the canary's)."""

    @property
    def dialect_pending(self) -> bool:
        """True until a dialect is given or found."""
        ...

    @property
    def dialect_summary(self) -> str:
        """The dialect and how it was chosen (given, or detected: each try)."""
        ...

    def detect_dialect(self, request: GenerationRequest,
                       not_applied: Callable[[GenerationResult], str | None]) -> GenerationResult:
        """Send ``request`` in each candidate dialect until ``not_applied``
        returns None for the answer (the constraint was applied), keep that
        dialect and return its result; otherwise the last result, with the
        dialect still pending and every attempt described in ``error``."""
        ...


@runtime_checkable
class IdentifiesServer(Protocol):
    """A backend that talks to a server and can say what the server is (the
    model ids it lists, its ``Server`` header, its dialect), for the audits'
    reports."""

    def server_identity(self) -> dict[str, Any]: ...


@runtime_checkable
class ReachesServer(Protocol):
    """A backend that talks to a server, and can say before any request that
    matters (the canary's) whether the server can be reached at all."""

    def check_reachable(self) -> None:
        """A BackendError, one line ``cannot reach URL: why``, when no
        connection can be made (refused, timed out); any HTTP answer passes."""
        ...


@runtime_checkable
class ChecksReplicas(Protocol):
    """A backend that may be given a pool of servers for one model and can
    check, before a run, that they all serve the same weights (openai)."""

    def check_replicas(self, seed: int) -> None:
        """A UsageError (one line) when two servers of the pool give
        different answers to the same seeded request."""
        ...


@runtime_checkable
class StreamsResults(Protocol):
    """A backend that hands results back one by one, in request order, as
    soon as each (and all before it) is in: HTTP backends with many requests
    in flight. The runner then writes each record at once and gives such a
    backend large batches, so that its pipeline never drains between them."""

    def generate_stream(
        self, requests: list[GenerationRequest]
    ) -> Generator[GenerationResult, None, None]:
        """Results in request order, lazily; closing the iterator early
        cancels what is still in flight."""
        ...


@runtime_checkable
class DecodesTogether(Protocol):
    """A backend that decodes several requests in one step (llamacpp with
    ``batched``): the runner hands it at least that many per call, so that
    the K samples of an item, or its arms, are in flight together."""

    @property
    def sequences_together(self) -> int:
        """Requests it decodes at once (1: one at a time)."""
        ...


def _declares_manifest(cls: type[Backend]) -> None:
    """A backend class must carry its ``BackendManifest`` (checked as it registers)."""
    if not isinstance(_inherited_manifest(cls), BackendManifest):
        raise TypeError(f"backend {cls.__qualname__} declares no manifest: give it "
                        "manifest: ClassVar[BackendManifest] = BackendManifest(...) (conformbench.BackendManifest)")


def _inherited_manifest(cls: type) -> object:
    return next((vars(k)["manifest"] for k in cls.__mro__ if "manifest" in vars(k)), None)


backends: Registry[type[Backend]] = Registry("backend", {
    "llamacpp": "conformbench.backends.llamacpp.backend",
    "openai": "conformbench.backends.openai.backend",
    "replay": "conformbench.backends.replay",
    "transformers": "conformbench.backends.transformers.backend",
}, manifests={
    "llamacpp": "conformbench.backends.llamacpp.manifest",
    "openai": "conformbench.backends.openai.manifest",
    "transformers": "conformbench.backends.transformers.manifest",
}, check=_declares_manifest)


def manifest_of(backend: str) -> BackendManifest:
    """What ``backend`` declares, read without importing its heavy modules
    where the registry's ``manifests`` table names a light module."""
    found = backends.declared(backend)
    if found is None:
        return backends.get(backend).manifest
    if not isinstance(found, BackendManifest):
        raise TypeError(f"{backends.manifests[backend]}.MANIFEST is not a BackendManifest")
    return found


def constraint_side(backend: str) -> ConstraintSide:
    return manifest_of(backend).constraint_side


def default_engine(backend: str) -> str:
    """The engine a run uses with this backend when it names none."""
    return SERVER_ENGINE if constraint_side(backend) == "server" else DEFAULT_LOCAL_ENGINE


def engine_mismatch(backend: str, engine: str) -> str | None:
    """Why ``backend`` cannot apply constraints with ``engine`` (naming the
    engine to use instead), or None when it can."""
    side = constraint_side(backend)
    # engines a local backend cannot drive, with the reason (the
    # transformers backend: gbnf, whose grammar lives in llama.cpp's sampler)
    refused = manifest_of(backend).refused_engines
    if engine in refused:
        return f"the {backend} backend cannot use engine {engine!r}: {refused[engine]}"
    if side == "server" and engine != SERVER_ENGINE:
        return (f"the {backend} backend decodes constraints server-side: use engine "
                f"{SERVER_ENGINE!r}, not {engine!r}")
    if side == "local" and engine == SERVER_ENGINE:
        return (f"engine {SERVER_ENGINE!r} is for HTTP backends (openai); the {backend} backend "
                f"applies constraints locally: use a local engine such as {DEFAULT_LOCAL_ENGINE!r}")
    return None
