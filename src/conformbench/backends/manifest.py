"""What a backend declares about itself, readable without importing it.

A backend class carries a ``manifest: ClassVar[BackendManifest]``: its
options (``BackendOption``, each with its type, bounds and choices), where it
applies constraints, the distributions that change its outputs, and what it
can do (beams, attention). The built-in backends keep their manifest in a
light module of their own (``backends.<name>.manifest``, named in the
registry's ``manifests`` table) so that listing or checking options imports
no backend's heavy modules (aiohttp, jinja2, numpy, llama_cpp, torch); a
third-party backend may keep it on its class alone (its module is then
imported to read it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from conformbench.errors import UsageError
from conformbench.records.base import Range
from conformbench.registry import did_you_mean

if TYPE_CHECKING:
    from conformbench.engines.base import Vocabulary

__all__ = ["BackendManifest", "BackendOption", "BuildFacts", "ConstraintSide"]

#: where a backend applies constraints: "local" (an engine of the engines
#: registry, in this process), "server" (the server decodes; engine "server"
#: only) or "any" (the replay backend serves whatever was recorded)
ConstraintSide = Literal["local", "server", "any"]

_TYPE_WORDS = {int: "a whole number", float: "a number", str: "a text", bool: "true or false"}


@dataclass(frozen=True)
class BackendOption:
    """One option of a backend: its key in the model's ``extra`` table
    (``name``, also the API keyword; the CLI flag is ``--name`` with
    hyphens unless ``flag`` says otherwise), its value type and range, and
    its help text. ``check(value, where)`` is the backend's own check of a
    value (a UsageError naming ``where``), run after the type, range and
    choices."""

    name: str
    type: type[Any]
    help: str
    metavar: str = "VALUE"
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    check: Callable[[Any, str], object] | None = None
    flag: str = ""
    #: changes how a run is carried out, not what it generates (openai's
    #: ``api_key_env``): a resume and a shard ignore it
    operational: bool = False
    #: changes the numbers the model computes with (transformers' ``dtype``):
    #: recorded per model in the replay header's build facts
    affects_build: bool = False

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def keyword(self) -> str:
        """The API's keyword and the CLI's parameter: the flag's name (``dialect`` for ``--dialect``)."""
        return self.cli_flag.removeprefix("--").replace("-", "_")

    def validate(self, value: Any, where: str) -> Any:
        """``value`` as the option takes it, or a one-line UsageError that
        names ``where`` (a flag, or a spec key)."""
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, self.type) or (self.type is not bool and isinstance(value, bool)):
            raise UsageError(f"{where} must be {_TYPE_WORDS.get(self.type, self.type.__name__)}, not {value!r}")
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:  # the whole range, so one retry is enough
            why = Range(low, high).refusal(value)
            if why is not None:
                raise UsageError(f"{where} {why}")
        elif (low is not None and value < low) or (high is not None and value > high):
            bound = f"at least {low:g}" if low is not None else f"at most {high:g}"
            raise UsageError(f"{where} must be {bound}, not {value!r}")
        if self.choices and value not in self.choices:
            raise UsageError(f"{where}: unknown value {value!r}{did_you_mean(str(value), list(self.choices))}; "
                             f"known: {', '.join(self.choices)}")
        if self.check is not None:
            self.check(value, where)
        return value


@dataclass(frozen=True)
class BuildFacts:
    """What of a backend's library build decides whether a rerun gives the
    same texts: recorded in the replay header's ``build`` under ``key``,
    compared by ``score --against`` and ``reproduce`` (named ``label``),
    documented as ``meaning``. ``read()`` returns them (``{"installed":
    False}`` where the library is missing; it imports the library itself)."""

    key: str
    label: str
    meaning: str
    read: Callable[[], dict[str, Any]]


@dataclass(frozen=True)
class BackendManifest:
    """A backend's declared facts (``Backend.manifest``)."""

    #: the options a run's flags, the API and a spec's extra table set
    options: tuple[BackendOption, ...] = ()
    constraint_side: ConstraintSide = "local"
    #: PyPI distributions whose versions change what this backend produces
    #: (recorded in every replay's model record)
    distributions: tuple[str, ...] = ()
    #: decodes ``beams > 1``
    beams: bool = False
    #: captures attention at the answer position
    attention: bool = False
    #: sends a request's functions through a server's ``tools`` API (the tools arms)
    tools: bool = False
    #: engines only this backend drives (its own structured decoding: vllm's
    #: ``vllm:xgrammar``...); the first is its default engine, and every other
    #: backend refuses them
    own_engines: tuple[str, ...] = ()
    #: engines this backend cannot drive, with the reason (refused before anything loads)
    refused_engines: Mapping[str, str] = field(default_factory=dict)
    #: why beam search cannot run for (beams, temperature, engine), None
    #: when it can (asked before the model loads)
    beams_refusal: Callable[[int, float, str | None], str | None] | None = None
    #: why a model of this backend, with these options (its ``extra``),
    #: cannot carry a grammar that lets free text run before the contract
    #: (an arm that ``thinks``), None when it can (asked before anything
    #: runs; None: it can, the engine deciding)
    grammar_refusal: Callable[[Mapping[str, Any]], str | None] | None = None
    #: the build facts its runs record (None: nothing beyond the CPU and threads)
    build: BuildFacts | None = None
    #: loads the embedded SmolLM2-135M when a run names no model
    embedded_model: bool = False
    #: what the progress line adds while it loads ``model`` (None: nothing),
    #: e.g. that a GGUF is dequantised first
    loading_note: Callable[[str | None], str | None] | None = None
    #: reads ``model``'s vocabulary without its weights (None: the embedded
    #: model), released when the context ends: what ``engines check`` walks
    #: documents through (None: the backend cannot; it imports the backend's
    #: own modules only when called)
    vocabulary: Callable[[str | None], AbstractContextManager[Vocabulary]] | None = None
    #: the GPUs one part of a run spread by Ray (``--ray``) asks for, given
    #: the model's options (its ``extra``); None: none (an HTTP client, llama.cpp
    #: on CPUs). A part asks for its model's ``threads`` CPUs (at least one)
    gpus: Callable[[Mapping[str, Any]], float] | None = None
