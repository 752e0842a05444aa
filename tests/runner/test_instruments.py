"""The refusals ``check_instruments`` reads from declarations: an arm that
``thinks`` (free text, then the contract, in one call) is refused on a
backend whose manifest's ``grammar_refusal`` says, from the model's
options, that it cannot carry such a grammar; no arm or backend is known
by name."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import runfakes

from conformbench.arms.base import Arm, arms
from conformbench.backends.base import manifest_of
from conformbench.errors import UsageError
from conformbench.runner.spec import parse_spec


def test_only_think_then_constrain_declares_that_it_thinks() -> None:
    assert [name for name in arms.names() if arms.get(name).thinks] == ["think_then_constrain"]


def test_the_openai_manifest_refuses_a_grammar_in_a_schema_only_dialect() -> None:
    refusal = manifest_of("openai").grammar_refusal
    assert refusal is not None
    assert refusal({"response_format_dialect": "structured_outputs"}) is None
    assert refusal({"response_format_dialect": "guided_json"}) is None
    for extra in ({}, {"response_format_dialect": "json_schema"}):
        why = refusal(extra)
        assert why is not None and "--dialect structured_outputs" in why
    assert manifest_of("llamacpp").grammar_refusal is None  # its engine decides


@pytest.mark.parametrize("arm_thinks", [True, False])
def test_a_user_arm_that_thinks_meets_the_backends_declared_refusal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arm_thinks: bool) -> None:
    said: list[dict[str, Any]] = []

    def refuse(extra: Any) -> str:
        said.append(dict(extra))
        return "this backend carries no free-text grammar"

    monkeypatch.setattr(runfakes.FakeBackend, "manifest", replace(runfakes.FakeBackend.manifest,
                                                                  grammar_refusal=refuse))
    arm: Arm = replace(arms.get("prompt_only"), name="mull_it_over", thinks=arm_thinks)
    monkeypatch.setitem(arms._items, "mull_it_over", arm)
    data = runfakes.fake_spec(tmp_path, arms=["mull_it_over[answer]"], model={"extra": {"reply": "x"}})
    if not arm_thinks:
        assert parse_spec(data).tasks[0].arms == ["mull_it_over[answer]"]
        assert said == []
        return
    with pytest.raises(UsageError, match=r"^this backend carries no free-text grammar \(model 'fake-model'\)$"):
        parse_spec(data)
    assert said == [{"reply": "x"}]
