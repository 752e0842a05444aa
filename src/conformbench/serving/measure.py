"""``engines cost``'s measurement: for each repeat and concurrency level, a
batch of the same prompts with the grammar off, then on with the server's
grammar cache warm (each schema as it is, sent once beforehand) and cold
(each request's schema made unique); the arms' order alternates between
repeats, so a server that drifts does not favour one arm. Every request's
row goes to the journal as it ends; finished batches are skipped on a
rerun. Who answers is a ``CostSender``: a server (``ServerSender``, streamed
over HTTP) or an in-process backend (serving/local.py)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from conformbench import stopping
from conformbench.backends.openai.backend import OpenAICompatBackend
from conformbench.backends.openai.stream import StreamedAnswer
from conformbench.errors import BackendError, UsageError
from conformbench.records.generation import Constraint, DecodingSettings, GenerationRequest
from conformbench.records.spec import SERVER_ENGINE
from conformbench.serving.journal import BatchKey, CostJournal
from conformbench.serving.journal_rows import ANSWER_FINISHES, MAX_LEVEL, MAX_N, MAX_REPEATS
from conformbench.serving.loadgen import OnDone, Shot, run_batch
from conformbench.serving.stats import arrival_offsets
from conformbench.serving.workload import CostPrompt, unique_schema

__all__ = ["CACHES", "CostConfig", "CostProgress", "CostSender", "ServerSender", "arms_of", "batch_plan", "measure", "plan_size", "request_row",
           "stream_body"]

#: the grammar cache states measured (each its own arm beside "off")
CACHES = ("warm", "cold")
#: characters of an answer's text kept in the journal (the validator reads it)
_TEXT_CHARS = 200_000


@dataclass(frozen=True)
class CostConfig:
    levels: tuple[int, ...]
    n: int
    repeats: int = 3
    caches: tuple[str, ...] = CACHES
    #: Poisson arrivals at this many requests per second; None: a closed loop
    rate: float | None = None
    seed: int = 0
    max_tokens: int = 256
    timeout_s: float = 600.0

    def __post_init__(self) -> None:
        unknown = [c for c in self.caches if c not in CACHES]
        if unknown or not self.caches:
            raise UsageError(f"--cache takes {' and '.join(CACHES)}, not {','.join(unknown) or 'nothing'}")
        if len(set(self.caches)) != len(self.caches):
            raise UsageError("--cache names a state twice: each is measured once")
        if not self.levels or min(self.levels) < 1 or max(self.levels) > MAX_LEVEL or len(self.levels) > 16:
            raise UsageError(f"--concurrency takes up to 16 whole numbers from 1 to {MAX_LEVEL}, e.g. 1,4,16")
        if len(set(self.levels)) != len(self.levels):
            raise UsageError("--concurrency names a level twice")
        _within("-n", self.n, 1, MAX_N)
        _within("--repeats", self.repeats, 1, MAX_REPEATS - 1)
        _within("--seed", self.seed, 0, (1 << 31) - 1)
        _within("--max-tokens", self.max_tokens, 2, 1 << 20)
        _within("--timeout", self.timeout_s, 0.1, 86_400.0)
        if self.rate is not None:
            _within("--rate", self.rate, 0.001, 1e6)


def _within(flag: str, value: float, low: float, high: float) -> None:
    """UsageError unless ``low <= value <= high`` (inf and nan are neither)."""
    if isinstance(value, bool) or not (isinstance(value, int | float) and math.isfinite(value) and low <= value <= high):
        raise UsageError(f"{flag} takes a number from {low:g} to {high:g}, not {value!r}")


def arms_of(config: CostConfig) -> tuple[str, ...]:
    """``off`` and each cache state of the grammar-on arm."""
    return ("off", *config.caches)


def batch_plan(config: CostConfig) -> Iterator[BatchKey]:
    """Every batch in the order measured: repeat, then level, then arm (the
    arms' order reversed on odd repeats); made as it is walked, never held."""
    arms = arms_of(config)
    return ((r, c, arm) for r in range(config.repeats) for c in config.levels
            for arm in (arms if r % 2 == 0 else arms[::-1]))


def plan_size(config: CostConfig) -> int:
    """How many batches ``batch_plan`` holds."""
    return config.repeats * len(config.levels) * len(arms_of(config))


def stream_body(backend: OpenAICompatBackend, prompt: CostPrompt, config: CostConfig,
                schema: dict[str, Any] | None, max_tokens: int | None = None) -> bytes:
    """The streamed request body: the backend's own body (its dialect) plus
    ``stream`` and ``stream_options.include_usage``."""
    settings = DecodingSettings(max_tokens=max_tokens or config.max_tokens, temperature=0.0, seed=config.seed)
    constraint = None if schema is None else Constraint(schema, SERVER_ENGINE)
    body = backend.request_body(GenerationRequest(prompt=prompt.prompt, settings=settings, constraint=constraint))
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


class CostProgress(Protocol):
    """Told as the measurement goes: a batch begins, a request of it ends."""

    def batch(self, key: BatchKey) -> None: ...

    def request(self, key: BatchKey) -> None: ...


class CostSender(Protocol):
    """Who answers the measured requests."""

    def identity(self) -> dict[str, Any]:
        """What is measured, for the journal's settings (a rerun must match)."""
        ...

    def describe(self) -> dict[str, Any]:
        """What it says it is, for the report."""
        ...

    def warm_up(self, prompts: list[CostPrompt], config: CostConfig) -> None:
        """Each distinct schema through the grammar once, so the warm arm finds it cached."""
        ...

    def send(self, prompts: list[CostPrompt], config: CostConfig, key: BatchKey, on_done: OnDone) -> float:
        """One batch; each answer to ``on_done`` as it ends; the batch's wall time."""
        ...


class ServerSender:
    """An OpenAI-compatible server, its requests streamed (loadgen.py)."""

    def __init__(self, backend: OpenAICompatBackend) -> None:
        self.backend = backend

    def identity(self) -> dict[str, Any]:
        return {"base_url": self.backend.base_url, "dialect": self.backend.dialect}

    def describe(self) -> dict[str, Any]:
        return self.backend.server_identity()

    def warm_up(self, prompts: list[CostPrompt], config: CostConfig) -> None:
        _warm_up(self.backend, prompts, config)

    def send(self, prompts: list[CostPrompt], config: CostConfig, key: BatchKey, on_done: OnDone) -> float:
        backend = self.backend
        return run_batch(backend.endpoint(backend.completion_path), backend.auth_headers,
                         _shots(backend, prompts, config, key), key[1], config.timeout_s, on_done)


def _shots(backend: OpenAICompatBackend, prompts: list[CostPrompt], config: CostConfig, key: BatchKey) -> list[Shot]:
    repeat, level, arm = key
    offsets = arrival_offsets(len(prompts), config.rate, config.seed + 1000 * repeat + level)
    shots = []
    for i, (prompt, offset) in enumerate(zip(prompts, offsets)):
        schema, nonce = (None, None) if arm == "off" else \
            unique_schema(prompt.schema) if arm == "cold" else (prompt.schema, None)
        shots.append(Shot(i, stream_body(backend, prompt, config, schema), offset, nonce))
    return shots


def request_row(prompts: list[CostPrompt], shot: Shot, sent: float, answer: StreamedAnswer) -> dict[str, Any]:
    if answer.error is None and answer.finish_reason not in ANSWER_FINISHES:
        answer.error = f"no answer: the server ended it with finish_reason {answer.finish_reason!r}"
    return {"index": shot.index, "id": prompts[shot.index].id, "offset_s": round(shot.offset_s, 6),
            "sent_s": round(sent, 6), "first_s": answer.first_s, "last_s": answer.last_s,
            "total_s": answer.total_s, "chunks": answer.chunks, "usage": answer.usage,
            "finish_reason": answer.finish_reason, "status": answer.status, "error": answer.error,
            "nonce": shot.nonce, "text": answer.text[:_TEXT_CHARS], "notes": answer.notes[:3]}


def _warm_up(backend: OpenAICompatBackend, prompts: list[CostPrompt], config: CostConfig) -> None:
    """Each distinct schema sent once (one token), so that the warm arm's
    requests find it compiled in the server's cache."""
    seen: dict[str, CostPrompt] = {}
    for prompt in prompts:
        seen.setdefault(json.dumps(prompt.schema, sort_keys=False), prompt)
    shots = [Shot(i, stream_body(backend, p, config, p.schema, max_tokens=1), 0.0)
             for i, p in enumerate(seen.values())]
    errors: list[str] = []
    run_batch(backend.endpoint(backend.completion_path), backend.auth_headers, shots, max(config.levels), config.timeout_s,
              lambda _s, _t, a: errors.append(a.error) if a.error else None)
    if len(errors) == len(shots):
        raise BackendError(f"the server answered none of the warm-up requests: {errors[0]}")


def _one_batch(sender: CostSender, prompts: list[CostPrompt], config: CostConfig,
               journal: CostJournal, key: BatchKey, progress: CostProgress) -> None:
    errors: list[str] = []

    def done(shot: Shot, sent: float, answer: StreamedAnswer) -> None:
        journal.request(key, request_row(prompts, shot, sent, answer))
        if answer.error:
            errors.append(answer.error)
        progress.request(key)

    try:
        wall = sender.send(prompts, config, key, done)
    except BaseException:
        journal.drop_unfinished(key)
        raise
    if len(errors) == len(prompts):
        journal.drop_unfinished(key)
        grammar = "" if key[2] == "off" else f" with the grammar on ({key[2]} cache)"
        raise BackendError(f"every request at concurrency {key[1]}{grammar} failed: {errors[0]}")
    journal.batch(key, {"wall_s": wall, "n": len(prompts), "rate": config.rate})


def measure(sender: CostSender, prompts: list[CostPrompt], config: CostConfig, journal: CostJournal,
            progress: CostProgress) -> None:
    """Measure every batch the journal does not hold yet, telling
    ``progress`` as each begins and each request ends. BackendError (the batches before it kept) when a whole
    batch failed."""
    warmed = False
    for key in batch_plan(config):
        if key in journal.batches:
            continue
        stopping.checkpoint()
        if key[2] == "warm" and not warmed:  # just before it is needed: what comes first is kept if it fails
            sender.warm_up(prompts, config)
            warmed = True
        progress.batch(key)
        _one_batch(sender, prompts, config, journal, key, progress)
