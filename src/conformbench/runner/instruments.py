"""Refusals of the decoding instruments a run asks for (``beams``,
``attention``), one line each, before anything is loaded: a backend must
declare it can (``beams`` / ``attention`` in its manifest: the llamacpp
and transformers backends), beam search needs temperature 0 and a per-sequence
grammar (not GBNF), and attention needs a task that says where its schema
is in the prompt (``Task.shows_schema``: the ConCodeEval tasks). More than one
sample per item needs temperature > 0 (greedy samples would all be one)
and no beam search. An arm that ``thinks`` (think_then_constrain) needs a
backend that carries a grammar with free text first (its manifest's
``grammar_refusal``: the openai backend's dialect must have a grammar field)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from conformbench.errors import UsageError
from conformbench.records.spec import DecodingSpec, RunSpec

if TYPE_CHECKING:
    from conformbench.backends.manifest import BackendManifest

__all__ = ["check_instruments", "samples_refusal"]


def samples_refusal(decoding: DecodingSpec) -> str | None:
    """Why ``samples`` cannot be drawn under these decoding settings, or None."""
    k = decoding.samples
    if k == 1:
        return None
    if decoding.beams > 1:
        return (f"--samples {k} cannot run with --beams {decoding.beams}: beam search is deterministic, "
                "every sample would be the same beam")
    if decoding.temperature == 0:
        return (f"--samples {k} at temperature 0 would give {k} identical greedy generations: "
                "add --temperature T > 0 (e.g. 0.8)")
    return None


def check_instruments(spec: RunSpec) -> RunSpec:
    from conformbench.backends.base import backends, manifest_of
    from conformbench.tasks.base import tasks

    decoding = spec.decoding
    why_not = samples_refusal(decoding)
    if why_not:
        raise UsageError(why_not)
    _check_server_thinking(spec)
    _check_tools(spec)
    wanted: dict[str, Callable[[BackendManifest], bool]] = {}
    if decoding.beams > 1:
        wanted["--beams"] = lambda manifest: manifest.beams
    if decoding.attention:
        wanted["--attention"] = lambda manifest: manifest.attention
    if decoding.mask_trace:
        wanted["--mask-trace"] = lambda manifest: manifest.constraint_side == "local"
    for model in spec.models:
        for flag, can in wanted.items():
            if not can(manifest_of(model.backend)):
                able = [b for b in backends.names() if can(manifest_of(b))]
                raise UsageError(f"{flag}: the {model.backend} backend cannot do it (model {model.label!r}); "
                                 f"the backends that declare it: {', '.join(able) or 'none'}")
    if decoding.beams > 1:
        _check_beams(spec, [manifest_of(model.backend).beams_refusal for model in spec.models])
    if decoding.attention:
        for task in spec.tasks:
            if not tasks.get(task.name).shows_schema:
                raise UsageError(f"--attention: task {task.name} does not say where its schema is in the "
                                 "prompt (the ConCodeEval generation and validation tasks do)")
    return spec


def _check_server_thinking(spec: RunSpec) -> None:
    """An arm that ``thinks`` sends a grammar with free text first: a
    backend whose manifest declares a ``grammar_refusal`` says, from the
    model's options, whether it carries one (the openai backend: only a
    dialect with a grammar field)."""
    from conformbench.arms.base import arms, split_arm_spec
    from conformbench.backends.base import manifest_of

    if not any(arms.get(split_arm_spec(arm)[0]).thinks for task in spec.tasks for arm in task.arms):
        return
    from conformbench.arms.think import thinking_refusal

    for task in spec.tasks:  # an engine without a free-text rule: refused before anything loads
        if any(arms.get(split_arm_spec(arm)[0]).thinks for arm in task.arms):
            why = next((w for w in map(thinking_refusal, task.engines) if w), None)
            if why:
                raise UsageError(f"{why} (task {task.name})")
    for model in spec.models:
        refusal = manifest_of(model.backend).grammar_refusal
        why = refusal(model.extra) if refusal is not None else None
        if why:
            raise UsageError(f"{why} (model {model.label!r})")


def _check_tools(spec: RunSpec) -> None:
    """A tools arm (``tools[auto]``...) offers functions through a server's
    ``tools`` API: only a backend whose manifest declares ``tools`` sends them."""
    from conformbench.arms.base import arms, split_arm_spec
    from conformbench.backends.base import backends, manifest_of

    tooled = [arm for task in spec.tasks for arm in task.arms if arms.get(split_arm_spec(arm)[0]).mode_of]
    if not tooled:
        return
    for model in spec.models:
        if not manifest_of(model.backend).tools:
            able = [b for b in backends.names() if manifest_of(b).tools]
            raise UsageError(f"arm {tooled[0]!r} offers functions through a server's tools API, which the "
                             f"{model.backend} backend does not send (model {model.label!r}); use "
                             f"--backend {' or '.join(able)} --base-url URL")


def _check_beams(spec: RunSpec, declared: list[Callable[[int, float, str | None], str | None] | None]) -> None:
    """Beam search is deterministic (temperature 0); a backend may refuse it
    under some engines, saying why with its manifest's ``beams_refusal(beams,
    temperature, engine)`` (the llamacpp backend: not under gbnf)."""
    decoding = spec.decoding
    if decoding.temperature != 0:
        raise UsageError(f"--beams: beam search is deterministic: beams = {decoding.beams} needs temperature 0, "
                         f"not {decoding.temperature}")
    refusals = [refusal for refusal in declared if refusal is not None]
    for refusal in refusals:
        for task in spec.tasks:
            named: list[str | None] = [*task.engines]
            for engine in named or [None]:
                why = refusal(decoding.beams, decoding.temperature, engine)
                if why:
                    raise UsageError(f"--beams: {why} (task {task.name})")
