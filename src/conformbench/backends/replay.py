"""Serves generations recorded in a replay file, so a run can be re-executed
(new scoring, new report, a changed runner) without a model.

``BackendConfig.model`` is the replay file; ``extra["label"]`` picks one model
when the file holds several. A request is matched by its prompt (messages and
assistant prefix) and its constraint engine (None when unconstrained). The
constraint's schema is not part of the key: records do not store it, and the
prompt of a constrained arm already names its schema. The file is read by
``records.replay_file.read_replay``, as scoring reads it: its header and
format are checked, and of a generation retried by a resumed run only the
kept try is served. When several generations share a prompt (samples, or
items with the same text) they are served in recorded order. A request
with no recording gets an error result saying so; an item the engine
excluded raises UnsupportedSchemaError again, as the live run did. Canary
requests are answered from the canary verdicts in the model records (same
engine and answer form, same constant), so a replayed run passes the canary
it passed live.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, ClassVar

from conformbench.backends.base import backends
from conformbench.backends.manifest import BackendManifest
from conformbench.errors import UnsupportedSchemaError, UsageError
from conformbench.files import file_sha256
from conformbench.records.generation import BackendConfig, GenerationRequest, GenerationResult
from conformbench.records.prompt import CANARY_PROMPT, Prompt
from conformbench.records.replay import GenerationRecord
from conformbench.records.replay_file import read_replay
from conformbench.records.stored_text import stored_prompt

__all__ = ["ReplayBackend", "replay_key"]

def replay_key(prompt: Prompt, engine: str | None) -> str:
    """The lookup key of a prompt and constraint engine."""
    messages = [[m.role, m.content] for m in stored_prompt(prompt).messages]  # as a record holds it
    return json.dumps([messages, prompt.assistant_prefix, engine], ensure_ascii=False)


@backends.register("replay")
class ReplayBackend:

    name: ClassVar[str]
    manifest: ClassVar[BackendManifest] = BackendManifest(constraint_side="any")
    def __init__(self, config: BackendConfig) -> None:
        unknown = sorted(set(config.extra) - {"label"})
        if unknown:
            raise UsageError(f"replay backend: unknown option(s) {unknown}; known: ['label']")
        if not config.model:
            raise UsageError("replay backend needs the replay file as its model")
        self.path = Path(config.model)
        label = config.extra.get("label")
        replay = read_replay(self.path)
        models = replay.models
        labels = sorted({m.label for m in models})
        if label is None and len(labels) > 1:
            raise UsageError(f"{self.path} holds several models {labels}: choose one with the label option")
        if label is not None and label not in labels:
            raise UsageError(f"{self.path} has no model {label!r}; it has {labels}")
        self.label = label if label is not None else (labels[0] if labels else None)
        self._model = next((m for m in models if m.label == self.label), None)
        self._queues: dict[str, list[GenerationRecord]] = defaultdict(list)
        for rec in replay.generations:
            # a shared answer was another arm's generation, served from that one's record
            if rec.shared is None and (self.label is None or rec.model == self.label):
                self._queues[replay_key(rec.prompt, _engine(rec))].append(rec)
        self._served: dict[str, int] = defaultdict(int)
        self.misses = 0
        # a resumed run writes a model record per session, each with the
        # canaries of what it ran (new answer forms...): all of them count
        self._canaries = {
            (label, str(verdict.get("constant"))): str(verdict.get("text", ""))
            for model in models if model.label == self.label
            for label, verdict in model.canary.items()
            if isinstance(verdict, dict) and verdict.get("passed")
        }

    def _canary(self, request: GenerationRequest) -> GenerationResult | None:
        """The recorded canary answer for a canary request, if any."""
        if request.constraint is None or request.prompt != CANARY_PROMPT:
            return None
        constant = request.constraint.schema.get("properties", {}).get("canary", {}).get("const")
        text = self._canaries.get((request.constraint.label, str(constant)))
        return None if text is None else GenerationResult(text=text, finish_reason="stop")

    def generate(self, request: GenerationRequest) -> GenerationResult:
        canary = self._canary(request)
        if canary is not None:
            return canary
        engine = request.constraint.engine if request.constraint else None
        key = replay_key(request.prompt, engine)
        queue = self._queues.get(key)
        if not queue:
            self.misses += 1
            return GenerationResult(
                text="",
                finish_reason="error",
                error=f"no generation recorded in {self.path.name} for this prompt (engine {engine})",
            )
        index = min(self._served[key], len(queue) - 1)
        self._served[key] += 1
        return _result(queue[index])

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        return [self.generate(r) for r in requests]

    def metadata(self) -> dict[str, Any]:
        recorded = dict(self._model.metadata) if self._model else {}
        return {
            **recorded,
            "backend": self.name,
            "recorded_backend": self._model.backend if self._model else None,
            "replay_file": str(self.path),
            "replay_sha256": file_sha256(self.path),
            "label": self.label,
            "misses": self.misses,
        }

    def close(self) -> None:
        """Nothing to release."""


def _engine(rec: GenerationRecord) -> str | None:
    """The engine a recorded generation was decoded under: its condition's,
    unless the record says the turn ran without the grammar (fallback's
    first round)."""
    return None if rec.grammar is False else rec.condition.engine


def _result(rec: GenerationRecord) -> GenerationResult:
    if rec.finish_reason == "excluded":
        engine = rec.condition.engine or "engine"
        reason = rec.excluded or "excluded in the recorded run"
        reason = reason.removeprefix(f"{engine} cannot compile the schema: ")
        raise UnsupportedSchemaError(engine, reason)
    return GenerationResult(
        text=rec.answer,
        finish_reason=rec.finish_reason,
        prompt_tokens=rec.prompt_tokens,
        completion_tokens=rec.completion_tokens,
        seconds=rec.seconds,
        compile_seconds=rec.compile_seconds,
        engine_input=rec.engine_input,
        unenforced=tuple(rec.unenforced),
        error=rec.error,
    )
