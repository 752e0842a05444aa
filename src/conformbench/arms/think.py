"""think_then_constrain[S]: free text, then the schema, in ONE call.

The prompt is the free prompt plus a request to think first, write the
run's think stop string (``--think-stop``, default ``</think>``) and then
the JSON answer. The grammar (llguidance's Lark: a free-text rule that ends
at the stop string, then ``%json`` of S; engines/thinking_grammar.py) lets the
model write anything before the stop string and only what S allows after
it. A thinking that reaches its own budget (``--think-tokens``) without the
stop string is closed by the decoder, which writes the stop string itself,
and the answer follows in the same call: the record says ``think_cut``.

The thinking is recorded (the record's ``thinking``) and the answer after
the stop string is what is scored. It is the one-call counterpart of
reason_then_constrain[S] (a free turn, then a packaging turn) and is
compared with it and with constrained[S] on the same items.

A grammar engine must take free text before the schema: llguidance does
(on the llamacpp and transformers backends). On the openai backend the
server decodes: the request carries the same Lark grammar in vLLM's
grammar field (``--dialect structured_outputs`` or ``guided_json``); a run
with any other dialect is refused before anything runs
(runner/instruments.py), and the server's own llguidance applies it.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformbench.arms.base import ArmContext, policy
from conformbench.engines.base import engines
from conformbench.errors import UsageError
from conformbench.records.rounds import TurnOutcome, TurnPlan
from conformbench.records.spec import SERVER_ENGINE

__all__ = ["think_then_constrain", "thinking_refusal"]


def thinking_refusal(engine: str | None) -> str | None:
    """Why the arm cannot run under ``engine`` (None: it can; under the
    server's engine the openai backend's dialect decides, checked with the
    run's options)."""
    if engine == SERVER_ENGINE:
        return None
    if engine is None or not engines.get(engine).thinks:
        return (f"think_then_constrain needs an engine whose grammar lets free text run before the schema "
                f"(llguidance; vllm:guidance with --backend vllm), not {engine!r}: add --engine llguidance "
                f"(or vllm:guidance)")
    return None


@policy("think_then_constrain", constrained=True, rounds=False, thinks=True,
        description="think freely up to a stop string, then the schema, in one call (llguidance)",
        compare_with=("reason_then_constrain", "constrained"))
def think_then_constrain(ctx: ArmContext, turns: Sequence[TurnOutcome]) -> TurnPlan | None:
    if turns:
        return None
    refusal = thinking_refusal(ctx.condition.engine)
    if refusal is not None:
        raise UsageError(refusal)
    return ctx.think()

