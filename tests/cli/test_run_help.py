"""What `run -h` says agrees with what the tool does (issue #44)."""

from __future__ import annotations

import pytest

from conformbench.backends.transformers.backend import TransformersBackend
from conformbench.cli.main import main
from conformbench.runner.defaults import RunOptions, build_spec


def _help(capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["run", "-h"]) == 0
    return " ".join(capsys.readouterr().out.replace("│", " ").split())


def test_help_says_what_attention_threads_and_n_do(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys)
    assert TransformersBackend.manifest.attention  # the transformers backend records attention too
    assert "llamacpp and transformers backends" in text
    assert "torch's (intra- and inter-op) with the transformers backend" in text
    # what llama-cpp-python does without --threads (tests/backends/test_llamacpp.py loads it and reads both)
    assert ("half the cores for generating, 1 on a 2-core machine, and every core for reading prompts" in text)
    assert "so -n 3 gives N=6" in text


@pytest.mark.parametrize(("backend", "model", "label"), [
    ("transformers", None, "smollm2-135m-transformers"),
    ("llamacpp", None, "smollm2-135m"),
    ("transformers", "./ckpt/my-model/", "my-model"),
    ("llamacpp", "gemma3-270m", "gemma3-270m"),
])
def test_a_model_is_labelled_by_its_name(backend: str, model: str | None, label: str) -> None:
    spec = build_spec(None, RunOptions(tasks=("gsm8k",), backend=backend, model=model))
    assert [m.label for m in spec.models] == [label]


def test_the_n_bound_is_the_int64_maximum(capsys: pytest.CaptureFixture[str]) -> None:
    """2**63 - 1, what an int64 holds: the help said 2**63, one past it (#58)."""
    text = _help(capsys)
    assert "[1<=x<=9223372036854775807]" in text and "9223372036854775808]" not in text
    assert main(["run", "-n", str(2**63), "--out", "x"]) == 2
    assert "9223372036854775807" in capsys.readouterr().err
