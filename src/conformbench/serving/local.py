"""``engines cost --backend llamacpp``: the same grammar off/on measurement
on the in-process llama.cpp backend, with no server in between. Each
request is generated as ``run`` generates it (the chat template, greedy, the
engine registry's grammar compiled once per schema text, so *warm* finds it
compiled and *cold*'s unique schema compiles on the request's clock), timed
by the decoder's token clock: TTFT from the request's start (compile,
tokenize, prefill) to the first token sampled, TPOT from the first to the
last over the tokens after the first. One request at a time: one ``Llama``
decodes one sequence, so a level above 1 would time a queue, not the
grammar (refused in one line, as is ``--rate``)."""

from __future__ import annotations

import time
from typing import Any

from conformbench.backends.base import backends, engine_mismatch
from conformbench.backends.llamacpp.backend import LlamaCppBackend
from conformbench.backends.openai.stream import StreamedAnswer
from conformbench.errors import ConformbenchError, UsageError
from conformbench.records.generation import BackendConfig, Constraint, DecodingSettings, GenerationRequest
from conformbench.serving.journal import BatchKey
from conformbench.serving.loadgen import OnDone, Shot
from conformbench.serving.measure import CostConfig
from conformbench.serving.workload import CostPrompt, unique_schema

__all__ = ["LOCAL_BACKENDS", "LlamaCppSender", "check_local"]

#: the in-process backends ``engines cost`` measures
LOCAL_BACKENDS = ("llamacpp",)
_ONE_AT_A_TIME = ("decodes one request at a time in this process: a concurrency above 1 would time a queue, "
                  "not the grammar")


def check_local(name: str, config: CostConfig, engine: str) -> None:
    """UsageError in one line for a backend, level, rate or engine the local
    measurement does not take."""
    backends.get(name)  # an unknown name fails here, with a did-you-mean
    if name not in LOCAL_BACKENDS:
        raise UsageError(f"engines cost measures a server (--base-url) or --backend {', '.join(LOCAL_BACKENDS)}; "
                         f"{name} has no per-token clock here")
    if config.levels != (1,):
        raise UsageError(f"--backend {name} {_ONE_AT_A_TIME}; use --concurrency 1 (or serve the model and "
                         "pass --base-url)")
    if config.rate is not None:
        raise UsageError(f"--rate is for a server: --backend {name} is measured in a closed loop at concurrency 1")
    mismatch = engine_mismatch(name, engine)
    if mismatch is not None:
        raise UsageError(mismatch)


class LlamaCppSender:
    """The llamacpp backend on ``model``, its grammar from ``engine``."""

    def __init__(self, model: str, engine: str, threads: int | None, n_ctx: int) -> None:
        self.engine = engine
        self.backend = LlamaCppBackend(BackendConfig(model=model, threads=threads, n_ctx=n_ctx))

    def identity(self) -> dict[str, Any]:
        meta = self.backend.metadata()
        return {"backend": "llamacpp", "engine": self.engine, "model_sha256": meta["model_sha256"],
                "threads": meta["threads"], "n_ctx": meta["n_ctx"]}

    def describe(self) -> dict[str, Any]:
        meta = self.backend.metadata()
        keep = ("backend", "model_file", "model_sha256", "model_name", "chat_template", "n_ctx", "threads",
                "engine_versions")
        return {**{k: meta[k] for k in keep if k in meta}, "engine": self.engine}

    def warm_up(self, prompts: list[CostPrompt], config: CostConfig) -> None:
        for prompt in prompts:
            try:
                self.backend.compile(Constraint(prompt.schema, self.engine))
            except ConformbenchError:
                pass  # a refused schema is refused again, on its request's clock, as an error

    def send(self, prompts: list[CostPrompt], config: CostConfig, key: BatchKey, on_done: OnDone) -> float:
        start = time.perf_counter()
        for i, prompt in enumerate(prompts):
            schema, nonce = (None, None) if key[2] == "off" else \
                unique_schema(prompt.schema) if key[2] == "cold" else (prompt.schema, None)
            sent = time.perf_counter() - start
            on_done(Shot(i, b"", 0.0, nonce), sent, self._one(prompt, schema, config))
        return time.perf_counter() - start

    def _one(self, prompt: CostPrompt, schema: dict[str, Any] | None, config: CostConfig) -> StreamedAnswer:
        settings = DecodingSettings(max_tokens=config.max_tokens, temperature=0.0, seed=config.seed)
        request = GenerationRequest(prompt=prompt.prompt, settings=settings,
                                    constraint=None if schema is None else Constraint(schema, self.engine))
        clock: list[float] = []
        self.backend.token_clock = clock
        answer, begun = StreamedAnswer(), time.perf_counter()
        try:
            result = self.backend.generate(request)
        except ConformbenchError as exc:  # the engine refused the schema
            answer.error = str(exc)[:500]
            answer.total_s = time.perf_counter() - begun
            return answer
        finally:
            self.backend.token_clock = None
        answer.total_s = time.perf_counter() - begun
        times = clock[:result.completion_tokens]
        answer.text, answer.chunks, answer.finish_reason = result.text, len(times), result.finish_reason
        answer.usage = {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens}
        if times:
            answer.first_s, answer.last_s = times[0] - begun, times[-1] - begun
        if result.finish_reason == "error" or not times:
            answer.error = result.error or "no token was generated"
        return answer
