"""``conformbench run --batched`` through the real entry point: the value
reaches the llamacpp backend's BackendConfig and the replay header's spec,
over a spec file's; a bad value or another backend exits 2 with one line.
The backend is stopped before it loads anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from backend_stub import RUN_ONE, refuse_to_load

from conformbench.backends.llamacpp.backend import LlamaCppBackend
from conformbench.cli.main import main
from conformbench.records.replay_file import read_replay


def test_the_flag_reaches_the_backend_config_and_the_replay_header(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen = refuse_to_load(monkeypatch, LlamaCppBackend)
    out = tmp_path / "out"
    code = main([*RUN_ONE, "--batched", "4", "--out", str(out)])
    assert code == 2 and "stub: no model loaded" in capsys.readouterr().err
    assert [c.extra for c in seen] == [{"batched": 4}]
    model = read_replay(out / "replay.jsonl").header.spec.models[0]
    assert model.backend == "llamacpp" and model.extra == {"batched": 4}


def test_the_flag_overrides_a_spec_files_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen = refuse_to_load(monkeypatch, LlamaCppBackend)
    out = tmp_path / "out"
    spec_file = tmp_path / "s.toml"
    spec_file.write_text('[[models]]\nlabel = "m"\nextra = { batched = 2, chat_template = "none" }\n'
                         '[[tasks]]\nname = "gsm8k"\nn = 1\narms = ["unconstrained"]\n', encoding="utf-8")
    code = main(["run", "--spec", str(spec_file), "--batched", "0", "--no-canary", "--quiet", "--out", str(out)])
    assert code == 2 and [c.extra for c in seen] == [{"batched": 0, "chat_template": "none"}]
    assert read_replay(out / "replay.jsonl").header.spec.models[0].extra == {
        "batched": 0, "chat_template": "none"}
    capsys.readouterr()


def test_the_shard_path_builds_the_same_spec(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen = refuse_to_load(monkeypatch, LlamaCppBackend)
    out = tmp_path / "out"
    code = main([*RUN_ONE, "-n", "8", "--batched", "2", "--out", str(out), "--shard", "1/2"])
    assert code == 2 and [c.extra for c in seen] == [{"batched": 2}]
    assert read_replay(out / "replay.shard-1-of-2.jsonl").header.spec.models[0].extra == {"batched": 2}
    capsys.readouterr()


@pytest.mark.parametrize(("args", "message"), [
    (["--backend", "transformers", "--batched", "4"],
     "--batched applies to the llamacpp backend (--backend llamacpp), not 'transformers'"),
    (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--batched", "4"],
     "--batched applies to the llamacpp backend (--backend llamacpp), not 'openai'"),
])
def test_another_backend_exits_2_with_one_line_before_anything_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        args: list[str], message: str) -> None:
    seen = refuse_to_load(monkeypatch, LlamaCppBackend)
    out = tmp_path / "out"
    assert main([*RUN_ONE, *args, "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"conformbench: error: {message}\n"
    assert not seen and not out.exists()


@pytest.mark.parametrize("value", ["-1", "two", "1.5"])
def test_not_a_whole_number_at_least_0_is_a_usage_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str) -> None:
    seen = refuse_to_load(monkeypatch, LlamaCppBackend)
    out = tmp_path / "out"
    assert main([*RUN_ONE, "--batched", value, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--batched" in err and "Traceback" not in err and err.count("\n") == 1
    assert not seen and not out.exists()
