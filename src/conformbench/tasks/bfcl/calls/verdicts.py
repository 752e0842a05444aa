"""BFCL's AST verdict on a list of calls, per category, and the call metrics.

The paths of the official ``ast_checker`` (bfcl_eval/eval_checker/ast_eval/
ast_checker.py at gorilla 6ea57973), written from its behaviour; each call
is judged by ``checker.check_call`` (its ``simple_function_checker``):

- a category naming ``parallel`` (``parallel``, ``parallel_multiple``,
  ``live_parallel``...): as many calls as the ground truth has, matched in
  any order, greedily: each expected call, in the ground truth's order, takes
  the first call not yet taken that passes against it;
- else one naming ``multiple``: as many calls as expected (one), the first
  judged against the expected function's document;
- else (``simple_python``, ``live_simple``): exactly one call, judged
  against the item's first function;
- an item without ground truth (``irrelevance``): right when no call is
  made (BFCL's relevance runner; an unreadable answer is no call).

``tests/tasks/bfcl/test_official_agreement.py`` holds these verdicts to the
official checker's, recorded in ``tests/data/bfcl_v4_official_verdicts.jsonl``.
"""

from __future__ import annotations

from collections import Counter

from conformbench.tasks.bfcl.calls import CallAnswer, CallItem, CallScore
from conformbench.tasks.bfcl.checker import CallJudgement, check_call
from conformbench.tasks.bfcl.functions import FunctionCall
from conformbench.validator.schema_validator import validator_for

__all__ = ["check_calls", "score_calls"]

_WRONG_COUNT = "wrong number of calls: {got} (expected {want})"


def check_calls(item: CallItem, answer: CallAnswer) -> CallJudgement:
    """The official checker's verdict on ``answer`` for ``item``."""
    calls = answer.calls
    if not item.possible:
        return CallJudgement(True) if not calls else CallJudgement(False, "a call where no function fits")
    if len(calls) != len(item.possible):
        return CallJudgement(False, _WRONG_COUNT.format(got=len(calls), want=len(item.possible)))
    if "parallel" in item.category:
        return _any_order(item, calls)
    if "multiple" in item.category:
        return _judge(item, item.possible[0].name, 0, calls[0])
    return _judge(item, item.functions[0].name, 0, calls[0])


def _judge(item: CallItem, name: str, index: int, call: FunctionCall) -> CallJudgement:
    function = item.function(name)
    if function is None:  # the ground truth names a function the item does not offer
        return CallJudgement(False, f"item {item.id}: ground truth names {name!r}, which it does not offer")
    return check_call(function.document, call, item.possible[index].accepted, check_name=True)


def _any_order(item: CallItem, calls: tuple[FunctionCall, ...]) -> CallJudgement:
    taken: set[int] = set()
    for index, expected in enumerate(item.possible):
        found = None
        last = CallJudgement(False, "no call left")
        for position, call in enumerate(calls):
            if position in taken:
                continue
            last = _judge(item, expected.name, index, call)
            if last.correct:
                found = position
                break
        if found is None:
            return CallJudgement(False, f"no call matches expected call {index} ({expected.name}): {last.error}")
        taken.add(found)
    return CallJudgement(True)


def arguments_valid(item: CallItem, answer: CallAnswer) -> bool | None:
    """Every call names an offered function and its arguments pass that
    function's schema (python-jsonschema, BFCL types converted); None: no call."""
    if answer.no_call:
        return None
    for call in answer.calls:
        function = item.function(call.name)
        if function is None or not validator_for(function.schema).is_valid(call.arguments):
            return False
    return True


def score_calls(item: CallItem, answer: CallAnswer) -> CallScore:
    """The call metrics of ``answer`` on ``item``."""
    verdict = check_calls(item, answer)
    called = not answer.no_call
    right_function = None
    if item.expects_call:
        right_function = Counter(c.name for c in answer.calls) == Counter(p.name for p in item.possible)
    return CallScore(
        called=called,
        decision_right=called == item.expects_call,
        right_function=right_function,
        arguments_valid=arguments_valid(item, answer),
        correct=verdict.correct,
        error=verdict.error,
    )
