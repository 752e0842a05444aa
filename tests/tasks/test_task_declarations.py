"""What a task can do is declared on its class and read from there: the
runner and the scorer never probe a task for a method (issue #50)."""

from __future__ import annotations

import pytest

from conformbench.errors import UsageError
from conformbench.records.spec import DecodingSpec, ModelSpec, RunSpec, TaskSpec
from conformbench.runner.instruments import check_instruments
from conformbench.tasks.base import Task, tasks


@pytest.mark.parametrize("name", tasks.names())
def test_a_task_that_shows_its_schema_says_where(name: str) -> None:
    """``shows_schema`` and ``attention_text`` come together: a task that
    declares it overrides the method, and one that overrides it declares it."""
    cls = tasks.get(name)
    assert cls.shows_schema == (cls.attention_text is not Task.attention_text), name


def test_attention_is_refused_for_a_task_that_does_not_declare_it() -> None:
    spec = RunSpec(models=[ModelSpec(label="m")], tasks=[TaskSpec(name="gsm8k")],
                   decoding=DecodingSpec(attention=True))
    assert not tasks.get("gsm8k").shows_schema
    with pytest.raises(UsageError, match="--attention: task gsm8k does not say where its schema is"):
        check_instruments(spec)
    shown = spec.model_copy(update={"tasks": [TaskSpec(name="generation")]})
    assert check_instruments(shown) is shown


def test_a_backend_without_the_capability_is_refused_naming_those_with_it() -> None:
    spec = RunSpec(models=[ModelSpec(label="m", backend="openai", base_url="http://127.0.0.1:9/v1")],
                   tasks=[TaskSpec(name="gsm8k")], decoding=DecodingSpec(beams=2))
    with pytest.raises(UsageError, match=r"--beams: the openai backend cannot do it .*: llamacpp, transformers$"):
        check_instruments(spec)


def test_the_scoring_params_a_task_takes_are_declared() -> None:
    assert "match" in tasks.get("custom").known_params
    assert tasks.get("gsm8k").known_params == ()
