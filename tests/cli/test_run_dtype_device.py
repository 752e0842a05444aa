"""``conformbench run --dtype/--device`` through the real entry point: the
values reach the transformers backend's BackendConfig and the replay
header's spec; a bad value or another backend exits 2 with one line. The
backend is stopped before it loads anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from backend_stub import RUN_ONE, refuse_to_load

from conformbench.backends.transformers.backend import TransformersBackend
from conformbench.cli.main import main
from conformbench.records.replay_file import read_replay


def test_the_flags_reach_the_backend_config_and_the_replay_header(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen = refuse_to_load(monkeypatch, TransformersBackend)
    out = tmp_path / "out"
    code = main([*RUN_ONE, "--backend", "transformers", "--dtype", "fp32", "--device", "cpu", "--out", str(out)])
    assert code == 2 and "stub: no model loaded" in capsys.readouterr().err
    assert [c.extra for c in seen] == [{"dtype": "fp32", "device": "cpu"}]
    header = read_replay(out / "replay.jsonl").header
    model = header.spec.models[0]
    assert model.backend == "transformers" and model.extra == {"dtype": "fp32", "device": "cpu"}


def test_the_shard_path_builds_the_same_spec(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen = refuse_to_load(monkeypatch, TransformersBackend)
    out = tmp_path / "out"
    code = main([*RUN_ONE, "-n", "8", "--backend", "transformers", "--dtype", "fp16", "--out", str(out),
                 "--shard", "1/2"])
    assert code == 2 and [c.extra for c in seen] == [{"dtype": "fp16"}]
    assert read_replay(out / "replay.shard-1-of-2.jsonl").header.spec.models[0].extra == {"dtype": "fp16"}
    capsys.readouterr()


@pytest.mark.parametrize(("args", "message"), [
    (["--dtype", "fp32"], "--dtype applies to the transformers backend (--backend transformers) or the vllm backend "
     "(--backend vllm), not 'llamacpp'"),
    (["--backend", "llamacpp", "--dtype", "fp32", "--device", "cpu"],
     "--dtype, --device apply to the transformers backend (--backend transformers) or the vllm backend "
     "(--backend vllm), not 'llamacpp'"),
    (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--device", "cuda"],
     "--device applies to the transformers backend (--backend transformers), not 'openai'"),
    (["--backend", "transformers", "--dtype", "bf61"],
     "--dtype 'bf61' is not one of bf16, fp32, fp16, bfloat16, float32, float16 (did you mean 'bf16'?)"),
    (["--backend", "transformers", "--device", "gpu"],
     "--device 'gpu' is not auto, cpu, cuda or cuda:N (did you mean 'cpu'?)"),
])
def test_misuse_exits_2_with_one_line_before_anything_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        args: list[str], message: str) -> None:
    seen = refuse_to_load(monkeypatch, TransformersBackend)
    out = tmp_path / "out"
    assert main([*RUN_ONE, *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"conformbench: error: {message}\n"
    assert not seen and not out.exists()
