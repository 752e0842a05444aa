"""The vllm backend (vLLM's ``LLM`` in process): its refusals here, without
vLLM; then, where a vLLM installation of its own is (``/opt/vllm-venv``, as
.ci/run builds it, or ``$CONFORMBENCH_VLLM_PYTHON``), real runs in a child
process of that Python on the embedded model converted to a Hugging Face
folder: 10 greedy items whose texts equal vLLM's own server's with the same
settings, every arm (run, or refused in one line), the canary, and
``engines probe --backend vllm``.

vLLM loads in a minute or more on these CPUs: the module loads it three times (the
server, the run, the probe) and no more."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import conformbench
from conformbench.backends.base import default_engine, engine_mismatch
from conformbench.backends.vllm.manifest import vllm_release
from conformbench.cli.main import main
from conformbench.records.replay_file import read_replay
from conformbench.testing.vllm_server import VllmServer, vllm_missing, vllm_python

SRC = Path(conformbench.__file__).resolve().parents[1]


def test_vllm_runs_under_its_own_engines_only() -> None:
    assert default_engine("vllm") == "vllm:xgrammar"
    assert engine_mismatch("vllm", "vllm:guidance") is None
    refused = engine_mismatch("vllm", "llguidance")
    assert refused is not None and "vllm:xgrammar" in refused
    elsewhere = engine_mismatch("llamacpp", "vllm:xgrammar")
    assert elsewhere is not None and "--backend vllm" in elsewhere
    assert engine_mismatch("openai", "vllm:outlines") is not None


@pytest.mark.parametrize(("model", "said"), [
    (None, "needs --model DIR, a Hugging Face folder"),
    ("nowhere/at/all", "takes a Hugging Face folder"),
])
def test_a_run_without_a_folder_is_refused_in_one_line(model: str | None, said: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    if vllm_release() is None:  # not importorskip: this test folder is itself importable as ``vllm``
        pytest.skip("the refusal of a folder comes after the check that vLLM is installed")
    args = ["run", "--backend", "vllm", "--task", "gsm8k", "-n", "1", "--out", str(tmp_path / "o"), "--quiet"]
    assert main([*args, *(["--model", model] if model else [])]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().split("\n")) == 1


def test_an_arm_vllms_engine_cannot_serve_is_refused_in_one_line_before_it_loads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--backend", "vllm", "--model", str(tmp_path), "--task", "gsm8k", "-n", "1",
                 "--arm", "think_then_constrain", "--engine", "vllm:xgrammar", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "(or vllm:guidance)" in err and len(err.strip().split("\n")) == 1
    assert not (tmp_path / "o").exists()


def test_without_vllm_installed_the_run_says_so_in_one_line(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    try:
        import vllm  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("vLLM is installed in this Python")
    assert main(["run", "--backend", "vllm", "--model", str(tmp_path), "--task", "gsm8k", "-n", "1",
                 "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'conformbench[vllm]'" in err and len(err.strip().split("\n")) == 1


# -- live, in vLLM's own venv ------------------------------------------------------------------

#: 10 greedy items for the comparison with vLLM's server (20 until CI passed an hour: each
#: item costs two one-at-a-time answers); two items under every arm. One
#: request at a time on both sides: vLLM is not batch-invariant (with the 20 in one batch here
#: and the server at concurrency 16, 3 of 20 greedy texts parted mid-answer, 2026-12-07). Eager
#: on both sides too (``enforce_eager``, vLLM's ``--enforce-eager``): a load without
#: torch.compile took 0.37x the time here (benchmarks/vllm_eager.py), and a compiled engine's
#: greedy texts differ from an eager one's
SPEC = """
[[models]]
label = "smol"
backend = "vllm"
model = "{folder}"
threads = 1
n_ctx = 2048
extra = {{ max_model_len = 2048, dtype = "bfloat16", vllm_batch = 1, enforce_eager = true }}

[decoding]
max_tokens = 48
temperature = 0.0
seed = 0

[[tasks]]
name = "gsm8k"
n = 10
arms = ["unconstrained"]

[[tasks]]
name = "bfcl-simple"
n = 2
arms = ["unconstrained", "prompt_only", "constrained", "reason_then_constrain", "repair", "resample",
        "fallback", "think_then_constrain"]
engines = ["vllm:guidance"]
"""


def _child(args: list[str], log: Path, timeout: float = 1500) -> subprocess.CompletedProcess[str]:
    """``conformbench ARGS`` in vLLM's Python, this checkout's code first."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "VLLM_CPU_KVCACHE_SPACE": "1"}
    with log.open("w") as out:
        done = subprocess.run([vllm_python(), "-m", "conformbench.cli.main", *args], env=env, stdout=subprocess.PIPE,
                              stderr=out, text=True, timeout=timeout, check=False)
    return done


def _conformbench_missing() -> str | None:
    """Why vLLM's Python cannot run this checkout (the venv lacks conformbench's own dependencies)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([vllm_python(), "-c", "import conformbench.cli.main, conformbench.backends.vllm.backend"],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode == 0:
        return None
    return ("vLLM's venv lacks conformbench's dependencies (install them as .ci/run does): "
            + (done.stderr.strip().split("\n") or [""])[-1])


@pytest.fixture(scope="module")
def folder(request: pytest.FixtureRequest) -> Path:
    missing = vllm_missing() or _conformbench_missing()
    if missing:
        pytest.skip(missing)
    found: Path = request.getfixturevalue("smol_hf_folder")  # converted once for the session
    return found


@pytest.fixture(scope="module")
def in_process(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """One run of SPEC through the vllm backend (one vLLM load): its folder and stderr."""
    where = tmp_path_factory.mktemp("vllm-run")
    spec = where / "spec.toml"
    spec.write_text(SPEC.format(folder=folder), encoding="utf-8")
    done = _child(["run", "--spec", str(spec), "--out", str(where / "out"), "--json"], where / "stderr.log")
    err = (where / "stderr.log").read_text(errors="replace")
    assert done.returncode == 0, err[-3000:]
    yield where / "out", err




@pytest.mark.slow
@pytest.mark.long
@pytest.mark.server
@pytest.mark.timeout(2400)
def test_greedy_texts_equal_vllms_servers(in_process: tuple[Path, str], folder: Path, tmp_path: Path) -> None:
    out, _ = in_process
    mine = {g.item_id: g.text for g in read_replay(out / "replay.jsonl").generations if g.task == "gsm8k"}
    assert len(mine) == 10
    with VllmServer(folder, name="smol", log=tmp_path / "server.log",
                    extra_args=("--enforce-eager",)) as server:  # the same dtype, length and eagerness
        code = main(["run", "--backend", "openai", "--base-url", server.base_url, "--model", "smol", "--task",
                     "gsm8k", "-n", "10", "--arm", "unconstrained", "--max-tokens", "48", "--concurrency", "1",
                     "--out", str(tmp_path / "served"), "--quiet"])
    assert code == 0
    served = {g.item_id: g.text for g in read_replay(tmp_path / "served" / "replay.jsonl").generations}
    assert served == mine


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.timeout(2400)
def test_every_arm_runs_and_the_report_names_vllm(in_process: tuple[Path, str]) -> None:
    out, err = in_process
    contents = read_replay(out / "replay.jsonl")
    model = contents.models[-1]
    assert model.metadata["vllm_version"] and model.metadata["structured_outputs_backend"] == "guidance"
    assert model.metadata["enforce_eager"] is True
    assert model.canary["vllm:guidance"]["passed"] is True
    arms = {g.condition.arm for g in contents.generations if g.task == "bfcl-simple"}
    assert {"unconstrained", "constrained", "think_then_constrain", "repair", "fallback"} <= arms
    bfcl = [g for g in contents.generations if g.task == "bfcl-simple"]
    assert not [g for g in bfcl if g.finish_reason == "error"], [g.error for g in bfcl if g.error]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (reported,) = report["replays"]  # the report names vLLM's version and its structured-output backend
    assert {(m["metadata"]["vllm_version"], m["metadata"]["structured_outputs_backend"]) for m in reported["models"]} \
        == {(model.metadata["vllm_version"], "guidance")}
    assert report["results"]
    assert "Traceback" not in err


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.timeout(2400)
def test_the_keyword_probe_runs_on_the_vllm_backend(folder: Path, tmp_path: Path) -> None:
    done = _child(["engines", "probe", "--backend", "vllm", "--model", str(folder), "--out", str(tmp_path / "probe"),
                   "--keyword", "maxLength", "--keyword", "minimum", "--n-per-keyword", "1", "--enforce-eager"], tmp_path / "err.log")
    assert done.returncode == 0, (tmp_path / "err.log").read_text(errors="replace")[-3000:]
    report = json.loads((tmp_path / "probe" / "engines.json").read_text(encoding="utf-8"))
    (probed,) = report["engines"]
    assert probed["engine"] == "vllm:xgrammar" and probed["canary"] == "passed"
    assert {k["keyword"] for k in probed["keywords"]} == {"maxLength", "minimum"}
    assert {k["status"] for k in probed["keywords"]} <= {"enforced", "not enforced", "refused", "inconclusive"}
