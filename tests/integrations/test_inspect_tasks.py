"""conformbench's tasks inside Inspect AI, run by Inspect itself (its
``eval``, the ``openai-api`` provider) against llama-cpp-python's server on
127.0.0.1 serving the embedded model; the logs come back through
``import inspect`` and score like a run's, paired comparison included. The
task is named as users name it, ``conformbench/gsm8k_arms``: Inspect finds
it through the package's ``inspect_ai`` entry point."""

from __future__ import annotations

import gc
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import conformbench
from conformbench.errors import UsageError
from conformbench.importers import inspect_log as importer

inspect_ai = pytest.importorskip("inspect_ai")

pytestmark = [
    pytest.mark.slow, pytest.mark.server, pytest.mark.long, pytest.mark.timeout(900),
    # inspect-ai 0.3.285 passes tenacity an argument newer tenacity deprecates
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    # Inspect's eval() leaves its own anyio streams and HTTP sockets to the garbage collector
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]
ARMS = ("prompt_only[answer]", "constrained[answer]")
N = 3


@pytest.fixture(scope="module", autouse=True)
def _collect_inspects_leftovers() -> Iterator[None]:
    """Collect what Inspect left to the garbage collector here, where its
    ResourceWarnings are ignored, not in a later test that treats them as errors."""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def _eval(server: str, log_dir: Path, arm: str, dialect: str = "json_object_schema", temperature: float = 0.0,
          **options: Any) -> Any:
    (log,) = inspect_ai.eval(
        "conformbench/gsm8k_arms",
        task_args={"arm": arm, "n": N, "max_tokens": 48, "dialect": dialect, "temperature": temperature},
        model="openai-api/local/smollm2", model_base_url=server, log_dir=str(log_dir), display="none",
        **options)
    return log


@pytest.fixture(scope="module")
def runs(llama_server: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOCAL_API_KEY", "none")
        log_dir = tmp_path_factory.mktemp("inspect-logs")
        return {arm: _eval(llama_server, log_dir, arm) for arm in ARMS}


def test_constraints_go_in_extra_body_with_the_full_schema(runs: dict[str, Any]) -> None:
    from conformbench.records.items import Condition, TaskOptions
    from conformbench.tasks.base import tasks

    log = runs["constrained[answer]"]
    assert log.status == "success" and len(log.samples) == N
    ours = tasks.get("gsm8k")(TaskOptions(n=N))
    for sample in log.samples:
        item = ours.items()[[i.id for i in ours.items()]. index(sample.id)]
        schema = ours.contract_schema(item, Condition("constrained", "answer", "server"))
        assert sample.metadata["extra_body"] == {"response_format": {"type": "json_object", "schema": schema}}
        # the grammar held: every answer parses under the contract
        assert sample.scores["conformbench"].value["valid"] == 1.0
    assert log.eval.model_generate_config.response_schema is None
    assert runs["prompt_only[answer]"].samples[0].metadata["extra_body"] is None


def test_logs_import_and_score_with_the_paired_comparison(runs: dict[str, Any], tmp_path: Path) -> None:
    done = importer.import_inspect([Path(runs[arm].location) for arm in ARMS], tmp_path / "imp")
    assert done.generations == 2 * N and done.errors == 0
    conformbench.score(done.replay, out=tmp_path / "scored")
    (result,) = json.loads((tmp_path / "scored/report.json").read_text())["results"]
    arms = {a["key"]: a for a in result["arms"]}
    assert set(arms) == {"prompt_only[answer]", "constrained[answer]@server"}
    for arm, log in runs.items():
        key = arm if arm.startswith("prompt_only") else f"{arm}@server"
        for name in ("valid", "correct", "wrong_but_valid"):
            theirs = next(s for s in log.results.scores if s.name == name).metrics["mean"].value
            field = {"valid": "validity", "correct": "accuracy", "wrong_but_valid": "wrong_but_valid"}[name]
            assert arms[key][field]["rate"] == pytest.approx(theirs)
    (pair,) = [c for c in result["comparisons"] if {c["from_key"], c["to_key"]} == set(arms)]
    assert pair["n"] == N


def test_epochs_import_as_samples(llama_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--epochs 2 -T temperature=0.8``: each item's two epochs become its
    samples 0 and 1 (not two records of one key, the second superseding the
    first), and the report gains its sampling section over K = 2."""
    monkeypatch.setenv("LOCAL_API_KEY", "none")
    log = _eval(llama_server, tmp_path, "prompt_only[answer]", temperature=0.8, epochs=2, seed=7)
    assert log.status == "success" and sorted({s.epoch for s in log.samples}) == [1, 2]
    done = importer.import_inspect([Path(log.location)], tmp_path / "imp")
    assert done.generations == 2 * N
    conformbench.score(done.replay, out=tmp_path / "scored")
    report = json.loads((tmp_path / "scored/report.json").read_text())
    (source,) = report["replays"]
    assert source["superseded"] == 0
    assert (source["spec"]["decoding"]["samples"], source["spec"]["decoding"]["temperature"]) == (2, 0.8)
    (result,) = report["results"]
    assert result["arms"][0]["n"] == N
    (sampling,) = [s["data"] for s in result["sections"] if s["name"] == "sampling"]
    assert sampling["samples"] == 2 and [c["n"] for c in sampling["conditions"]] == [N]


def test_logs_of_two_temperatures_are_refused(runs: dict[str, Any], llama_server: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_API_KEY", "none")
    hot = _eval(llama_server, tmp_path, "prompt_only[answer]", temperature=0.8)
    greedy = runs["constrained[answer]"]
    with pytest.raises(UsageError, match=r"temperatures 0\.0, 0\.8; import each apart"):
        importer.import_inspect([Path(greedy.location), Path(hot.location)], tmp_path / "imp")


def test_a_dropped_constraint_fails_the_canary(llama_server: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_API_KEY", "none")
    # llama-cpp-python's server ignores vLLM's guided_json field: nothing constrains the model
    log = _eval(llama_server, tmp_path, "constrained[answer]", dialect="guided_json")
    assert log.status == "error" and "the canary failed" in log.error.message
    with pytest.raises(UsageError, match="the canary failed"):
        importer.import_inspect([Path(log.location)], tmp_path / "imp")


def test_the_metadata_keys_agree() -> None:
    from conformbench.integrations import inspect_tasks

    assert (importer.ITEM_KEY, importer.CONDITION_KEY, importer.TASK_KEY) == (
        inspect_tasks.ITEM_KEY, inspect_tasks.CONDITION_KEY, inspect_tasks.TASK_KEY)
