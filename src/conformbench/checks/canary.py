"""The canary self test: proof that a constraint is really applied.

A constraint can fail silently (an exception inside llama.cpp's sampler
callback is printed and ignored, a server ignores an unknown field), and the
unconstrained output may still happen to be valid JSON. So before a live run
each engine must force a random constant that the model would never write
unprompted, with a prompt that does not mention it. If the output is not
exactly that constant, the engine is not applied and the run refuses.
"""

from __future__ import annotations

import json
import random
import string
import time
from dataclasses import asdict, dataclass
from typing import Any

from conformbench.errors import CanaryFailedError, UnsupportedSchemaError
from conformbench.jsontypes import Schema
from conformbench.models.base import Backend
from conformbench.records.generation import Constraint, DecodingSettings, GenerationRequest
from conformbench.records.prompt import CANARY_PROMPT, Prompt

__all__ = ["CanaryResult", "canary_constant", "canary_schema", "check_canary", "grammar_request"]

_MAX_TOKENS = 64


@dataclass(frozen=True)
class CanaryResult:
    engine: str
    constant: str
    text: str
    finish_reason: str
    seconds: float

    def as_record(self) -> dict[str, Any]:
        """For ModelRecord.canary in the replay file."""
        return {"passed": True, **asdict(self)}


def canary_constant(rng_seed: int) -> str:
    rng = random.Random(rng_seed)
    return "cb-" + "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(12))


def canary_schema(constant: str) -> Schema:
    return {
        "type": "object",
        "properties": {"canary": {"const": constant}},
        "required": ["canary"],
        "additionalProperties": False,
    }


def grammar_request(prompt: Prompt, constraint: Constraint, max_tokens: int, seed: int) -> GenerationRequest:
    """Greedy, seeded generation under ``constraint``: the canary and the
    keyword probe judge the engine, so nothing may be left to sampling."""
    return GenerationRequest(
        prompt=prompt,
        settings=DecodingSettings(max_tokens=max_tokens, temperature=0.0, seed=seed),
        constraint=constraint,
    )


def check_canary(backend: Backend, engine: str, rng_seed: int) -> CanaryResult:
    """Generate under ``engine`` with the canary schema; CanaryFailedError
    naming the engine unless the output parses to exactly the constant."""
    constant = canary_constant(rng_seed)
    request = grammar_request(CANARY_PROMPT, Constraint(canary_schema(constant), engine), _MAX_TOKENS, rng_seed)
    start = time.perf_counter()
    try:
        result = backend.generate(request)
    except UnsupportedSchemaError as exc:
        raise CanaryFailedError(f"canary failed for engine {engine!r}: {exc}") from None
    seconds = time.perf_counter() - start
    expected = {"canary": constant}
    try:
        parsed = json.loads(result.text)
    except ValueError:
        parsed = None
    if parsed != expected or result.finish_reason == "error":
        detail = f"; error: {result.error}" if result.error else ""
        raise CanaryFailedError(
            f"canary failed for engine {engine!r}: the constraint is not applied "
            f"(expected {json.dumps(expected)}, got {result.text[:120]!r}, "
            f"finish {result.finish_reason}{detail})"
        )
    return CanaryResult(engine, constant, result.text, result.finish_reason, seconds)
