"""The backend interface: a prompt plus decoding settings plus an optional
constraint in, text plus token counts and timings out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from conformbench.jsontypes import Schema
from conformbench.registry import Registry

__all__ = [
    "Backend",
    "BackendConfig",
    "Constraint",
    "DecodingSettings",
    "GenerationRequest",
    "GenerationResult",
    "Message",
    "Prompt",
    "backends",
    "raw_prompt_text",
]


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class Prompt:
    """Chat messages. A backend renders them with the model's chat template,
    or as a raw completion prompt for base models without one.
    ``assistant_prefix`` is text the answer is forced to start with (it is part
    of the prompt, not of the returned text)."""

    messages: tuple[Message, ...]
    assistant_prefix: str = ""


def raw_prompt_text(prompt: Prompt) -> str:
    """A prompt as plain completion text, for models without a chat template
    and completion endpoints: the message contents separated by blank lines,
    then ``assistant_prefix`` after one more blank line."""
    body = "\n\n".join(m.content for m in prompt.messages)
    return body + ("\n\n" if body and prompt.assistant_prefix else "") + prompt.assistant_prefix


@dataclass(frozen=True)
class DecodingSettings:
    max_tokens: int = 512
    temperature: float = 0.0  # greedy by default
    seed: int = 0
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class Constraint:
    """Constrain the generation to JSON valid for ``schema`` using ``engine``
    (an engine registry name, or "server" for server-side decoding)."""

    schema: Schema
    engine: str


@dataclass(frozen=True)
class GenerationRequest:
    prompt: Prompt
    settings: DecodingSettings = DecodingSettings()
    constraint: Constraint | None = None


@dataclass
class GenerationResult:
    text: str
    finish_reason: Literal["stop", "length", "error"]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    compile_seconds: float = 0.0
    #: Exact input handed to the constraint engine or server (GBNF text,
    #: JSON sent as response_format...), recorded in the replay.
    engine_input: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class BackendConfig:
    """Options common to backends; each backend rejects options it lacks."""

    model: str | None = None  # GGUF path for llama.cpp, model name for HTTP
    base_url: str | None = None
    threads: int | None = None
    n_ctx: int = 4096
    concurrency: int = 4
    timeout_s: float = 120.0
    max_retries: int = 4
    extra: dict[str, Any] = field(default_factory=dict)


class Backend(Protocol):
    name: str

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
