"""What a backend is asked (a prompt, decoding settings, an optional
constraint) and what it answers (text, finish reason, token counts, timings),
plus the options every backend is configured with."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from conformbench.errors import UsageError
from conformbench.jsontypes import Schema
from conformbench.records.attention_record import AttentionRecord
from conformbench.records.base import Range, check_ranges
from conformbench.records.mask_toll import MaskToll
from conformbench.records.prompt import Prompt
from conformbench.records.urls import redacted_url, url_refusal

__all__ = [
    "DEFAULT_THINK_STOP",
    "BackendConfig",
    "Concurrency",
    "Constraint",
    "ContextTokens",
    "DecodingSettings",
    "FinishReason",
    "GenerationRequest",
    "GenerationResult",
    "Retries",
    "ThinkCut",
    "Thinking",
    "Threads",
    "TimeoutSeconds",
    "Turn",
    "TurnBudgets",
    "constraint_label",
    "redacted_url",
    "url_credentials_refusal",
]


#: why a generation ended: an end-of-generation token or stop string
#: ("stop"), the token budget ("length"), a degenerate loop cut early by the
#: loop stop ("loop", see conformbench.backends.loops), or a failure ("error")
FinishReason = Literal["stop", "length", "loop", "error"]

#: the turns of an arm, each with its own token budget: the free-text turn
#: (unconstrained, and the first turn of reason_then_constrain), the answer
#: turn (prompt_only and constrained: JSON for the arms tasks, the requested
#: output format for ConCodeEval) and the packaging turn of
#: reason_then_constrain; "think": think_then_constrain's free text before
#: its stop string (its one call spends this and the answer turn's budget)
Turn = Literal["free", "json", "packaging", "think"]

#: why the decoder closed a thinking itself: at its token budget, or where
#: it fell into a degenerate loop (the loop stop's rule, applied to the
#: thinking alone: the answer still follows)
ThinkCut = Literal["budget", "loop"]

#: the stop string that ends think_then_constrain's free text (``--think-stop``)
DEFAULT_THINK_STOP = "</think>"


@dataclass(frozen=True)
class TurnBudgets:
    """max_tokens of each turn (validbutwrong gives each turn 384; the
    ConCodeEval paper gives every answer 1024)."""

    free: int
    json: int
    packaging: int
    #: think_then_constrain's thinking (None: the free turn's budget)
    think: int | None = None

    def of(self, turn: Turn) -> int:
        if turn == "think":
            return self.free if self.think is None else self.think
        return {"free": self.free, "json": self.json, "packaging": self.packaging}[turn]


def _finite(name: str, value: float) -> None:
    """ValueError for inf or nan: the replay header would hold ``null``."""
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, not {value!r}")


@dataclass(frozen=True)
class DecodingSettings:
    max_tokens: int = 512
    temperature: float = 0.0  # greedy by default
    seed: int = 0
    stop: tuple[str, ...] = ()
    #: end a degenerate loop early (finish reason "loop"); backends that
    #: cannot watch the text as it is written ignore it and say so
    loop_stop: bool = True
    #: beam width: 1 is greedy (or sampling) decoding, N > 1 beam search
    #: scored as Hugging Face ``generate(num_beams=N)`` (backends that can)
    beams: int = 1
    #: capture where the answer position attends in the schema (``attend``)
    attention: bool = False
    #: keep the mask's toll step by step, not only its summary (``--mask-trace``)
    mask_trace: bool = False

    def __post_init__(self) -> None:
        _finite("temperature", self.temperature)


@dataclass(frozen=True)
class Thinking:
    """Free text before the answer, in the same call: it runs until
    ``stop``; at ``tokens`` tokens without it the decoder writes ``stop``
    itself (the thinking is then cut), and the answer follows under the
    grammar (think_then_constrain)."""

    stop: str = DEFAULT_THINK_STOP
    tokens: int = 384

    def __post_init__(self) -> None:
        if not self.stop or len(self.stop) > 64 or not self.stop.isprintable():
            raise UsageError(f"the think stop string must be 1 to 64 printable characters, not {self.stop!r}")
        if self.tokens < 1:
            raise UsageError(f"the think budget must be at least 1 token, not {self.tokens}")


@dataclass(frozen=True)
class Constraint:
    """Constrain the generation to an answer valid for ``schema`` using
    ``engine`` (an engine registry name, or "server" for server-side
    decoding), written in ``output_format``: JSON text, or our YAML or XML
    answer form where the engine has a grammar for it. The user picks the
    engine; the cell's output format picks the grammar form."""

    schema: Schema
    engine: str
    output_format: str = "json"
    #: free text allowed before the answer (None: the answer from the first token)
    thinking: Thinking | None = None

    @property
    def label(self) -> str:
        return constraint_label(self.engine, self.output_format)


def constraint_label(engine: str, output_format: str = "json") -> str:
    """How a constraint is named in canary verdicts and messages: the engine
    for JSON (as before forms existed), ``engine/form`` for other forms."""
    return engine if output_format == "json" else f"{engine}/{output_format}"


@dataclass(frozen=True)
class GenerationRequest:
    prompt: Prompt
    settings: DecodingSettings = DecodingSettings()
    constraint: Constraint | None = None
    #: the text (the schema as rendered in the prompt) whose attention mass
    #: is measured when ``settings.attention`` is on; its last occurrence
    #: in the rendered prompt is used
    attend: str | None = None


@dataclass
class GenerationResult:
    text: str
    finish_reason: FinishReason
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    compile_seconds: float = 0.0
    #: Exact input handed to the constraint engine or server (GBNF text,
    #: JSON sent as response_format...), recorded in the replay.
    engine_input: str | None = None
    error: str | None = None
    #: what the engine compiled but does not enforce (its own words)
    unenforced: tuple[str, ...] = ()
    #: beam width the text was decoded with (1: greedy)
    beams: int = 1
    #: attention captured at the answer position (``settings.attention``)
    attention: AttentionRecord | None = None
    #: under a constraint with ``thinking``: why the decoder closed the
    #: thinking itself (None: the model wrote the stop string, or no thinking)
    think_cut: ThinkCut | None = None
    #: the free text before the stop string, once the runner split it off
    #: (``text`` is then the answer after it)
    thinking: str | None = None
    #: the server that made it, where a pool of them serves the model
    #: (scheme, host, port and path only: ``redacted_url``)
    server: str | None = None
    #: what a token mask took from the model (local backends, mask engines;
    #: None without a mask: no constraint, gbnf, beam search, a server)
    mask_toll: MaskToll | None = None


#: the options common to backends, each with its range declared once, in
#: its type: ``BackendConfig`` and a spec's ``ModelSpec`` hold them, and
#: ``--threads``, ``--timeout``... are checked by it (``records.base.Range``)
Threads = Annotated[int | None, Range(1, 512)]
ContextTokens = Annotated[int, Range(256, 1 << 20)]
Concurrency = Annotated[int, Range(1, 256)]
TimeoutSeconds = Annotated[float, Range(0.001, 86_400)]
Retries = Annotated[int, Range(0, 100)]


@dataclass(frozen=True)
class BackendConfig:
    """Options common to backends, each numeric one with its range; a
    backend's own options are declared in its manifest (``BackendOption``)."""

    model: str | None = None  # GGUF path for llama.cpp, model name for HTTP
    #: the server's URL, or a pool's (HTTP backends)
    base_url: str | tuple[str, ...] | None = None
    threads: Threads = None
    n_ctx: ContextTokens = 4096
    concurrency: Concurrency = 4
    timeout_s: TimeoutSeconds = 120.0
    max_retries: Retries = 4
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _finite("timeout_s", self.timeout_s)
        check_ranges(self)


def url_credentials_refusal(url: str) -> str | None:
    """Why ``url`` is refused as a base URL (credentials, a backslash, no
    host, another scheme...: ``records.urls.url_refusal``), or None."""
    return url_refusal(url)
