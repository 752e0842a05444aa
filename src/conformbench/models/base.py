"""The backend interface: a prompt plus decoding settings plus an optional
constraint in, text plus token counts and timings out. The request and
result records live in ``conformbench.records.generation``."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from conformbench.records.generation import BackendConfig, GenerationRequest, GenerationResult
from conformbench.registry import Registry

__all__ = ["Backend", "backends"]


class Backend(Protocol):
    #: set by the registry
    name: ClassVar[str]

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


backends: Registry[type[Backend]] = Registry("backend", "conformbench.models")
