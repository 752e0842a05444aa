"""A replay is data (issue #49, defect 2): ``conformbench reproduce`` and
``api.reproduce`` never let a replay choose the server a request goes to,
the environment variable sent as the key, a model file or a local file
read and sent as prompts. Two real HTTP servers on 127.0.0.1
(misbehaving_endpoint.py) record every request: the attacker's, named by a
crafted replay, and the user's, named on the command line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from misbehaving_endpoint import Endpoint

from conformbench import api
from conformbench.cli.main import main
from conformbench.errors import UsageError
from conformbench.records.spec import RunSpec
from conformbench.runner.ledger.reproduce import ReproduceChoices, reproduction_spec, shipped_data_path
from conformbench.runner.shipped import shipped_replay

SECRET = "sk-stolen-secret-49"
FILE_TEXT = "SECRET-FILE-TEXT-4242"


@pytest.fixture
def servers() -> Iterator[tuple[Endpoint, Endpoint]]:
    with Endpoint() as attacker, Endpoint() as mine:
        yield attacker, mine


def _crafted(tmp_path: Path, mine: Endpoint, attacker: Endpoint) -> tuple[Path, Path]:
    """A real run's replay against the user's server, its header then edited
    as an attacker would: another server, a key variable, a secret file as
    the dataset. Returns the crafted replay and the user's own data."""
    data = tmp_path / "mine.jsonl"
    data.write_text(json.dumps({"question": "What is 1+1?", "answer": "2"}) + "\n", encoding="utf-8")
    (tmp_path / "secret.jsonl").write_text(
        json.dumps({"question": FILE_TEXT, "answer": "x"}) + "\n", encoding="utf-8")
    spec = {"models": [{"label": "m", "backend": "openai", "model": "ok", "base_url": mine.base("ok"),
                        "max_retries": 0}],
            "tasks": [{"name": "custom", "n": 1, "dataset": str(data), "arms": ["unconstrained"]}],
            "out": str(tmp_path / "made"), "quiet": True}
    api.run(spec)
    lines = (tmp_path / "made" / "replay.jsonl").read_text(encoding="utf-8").split("\n")
    header = json.loads(lines[0])
    model = header["spec"]["models"][0]
    model["base_url"], model["extra"] = attacker.base("ok"), {"api_key_env": "CB_TEST_STOLEN"}
    header["spec"]["tasks"][0]["dataset"] = str(tmp_path / "secret.jsonl")
    crafted = tmp_path / "crafted.jsonl"
    crafted.write_text("\n".join([json.dumps(header), *lines[1:]]), encoding="utf-8")
    mine.seen.clear()
    mine.bodies.clear()
    return crafted, data


def _refused(code: int, err: str, *words: str) -> None:
    lines = [line for line in err.splitlines() if line]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("conformbench: error:"), err
    assert all(word in lines[0] for word in words), err


def _nothing_leaked(attacker: Endpoint, mine: Endpoint) -> None:
    assert attacker.seen == [] and attacker.bodies == []
    assert all(SECRET not in (auth or "") for _, auth in mine.seen)
    assert all(FILE_TEXT.encode() not in body for body in mine.bodies)


def test_reproduce_takes_server_key_and_data_from_the_command_line(
        tmp_path: Path, servers: tuple[Endpoint, Endpoint], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    attacker, mine = servers
    crafted, data = _crafted(tmp_path, mine, attacker)
    monkeypatch.setenv("CB_TEST_STOLEN", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base = ["reproduce", str(crafted), "--out", str(tmp_path / "again")]
    _refused(main(base), capsys.readouterr().err, "--base-url", attacker.base("ok"))
    _refused(main([*base, "--base-url", mine.base("ok")]), capsys.readouterr().err,
             "--dataset", "outside conformbench's shipped data")
    assert mine.seen == []  # refused before any request
    code = main([*base, "--base-url", mine.base("ok"), "--dataset", str(data)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "api_key_env 'CB_TEST_STOLEN' is not used" in err and attacker.base("ok") in err
    assert mine.seen and any(b"What is 1+1?" in body for body in mine.bodies)
    _nothing_leaked(attacker, mine)


def test_the_api_reproduce_obeys_no_replay_either(
        tmp_path: Path, servers: tuple[Endpoint, Endpoint], monkeypatch: pytest.MonkeyPatch) -> None:
    attacker, mine = servers
    crafted, data = _crafted(tmp_path, mine, attacker)
    monkeypatch.setenv("CB_TEST_STOLEN", SECRET)
    monkeypatch.setenv("MY_KEY", "sk-mine")
    with pytest.raises(UsageError, match="--base-url"):
        api.reproduce(crafted, out=tmp_path / "api", quiet=True)
    with pytest.raises(UsageError, match="--dataset"):
        api.reproduce(crafted, out=tmp_path / "api", quiet=True, base_url=mine.base("ok"))
    done = api.reproduce(crafted, out=tmp_path / "api", quiet=True, base_url=mine.base("ok"),
                         api_key_env="MY_KEY", dataset=data)
    assert done.paired == 1
    assert mine.seen and all(auth == "Bearer sk-mine" for path, auth in mine.seen if "chat" in path)
    _nothing_leaked(attacker, mine)


def _spec(model: dict[str, object], task: dict[str, object]) -> RunSpec:
    return RunSpec.model_validate({"models": [{"label": "m", **model}], "tasks": [{"name": "custom", **task}]})


def test_a_replays_model_file_or_shots_file_needs_its_flag() -> None:
    with pytest.raises(UsageError, match="--model PATH"):
        reproduction_spec(_spec({"model": "/home/x/model.gguf"}, {}), ReproduceChoices())
    spec, notes = reproduction_spec(_spec({"model": "/home/x/model.gguf"}, {}), ReproduceChoices(model="mine.gguf"))
    assert spec.models[0].model == "mine.gguf" and "/home/x/model.gguf" in notes[0]
    # an alias or the embedded model is a name, not a file
    assert reproduction_spec(_spec({"model": "gemma3-270m"}, {}), ReproduceChoices())[1] == []
    with pytest.raises(UsageError, match="--shots-from FILE"):
        reproduction_spec(_spec({}, {"shots_from": "/etc/passwd"}), ReproduceChoices())
    with pytest.raises(UsageError, match="names nothing it would replace"):
        reproduction_spec(_spec({}, {}), ReproduceChoices(base_url="http://127.0.0.1:1/v1"))
    # a control character in what the replay names is shown as its escape
    with pytest.raises(UsageError) as refused:
        reproduction_spec(_spec({}, {"dataset": "/tmp/\x1b]0;x\x07.jsonl"}), ReproduceChoices())
    assert "\x1b" not in str(refused.value) and "\\x1b" in str(refused.value)


def test_a_shipped_data_path_means_this_installations_file_and_nothing_else() -> None:
    own = shipped_replay("concodeeval-generation")
    for named in ("src/conformbench/data/replays/concodeeval-generation.jsonl",
                  "/elsewhere/site-packages/conformbench/data/replays/concodeeval-generation.jsonl"):
        assert shipped_data_path(named) == own.resolve()
    for named in ("/etc/passwd", "conformbench/data/../../../etc/passwd", "src/conformbench/data",
                  "/tmp/conformbench/x.jsonl"):
        assert shipped_data_path(named) is None
    # the shipped few-shot replay names its shots file that way: it reproduces from any folder
    header = json.loads(shipped_replay("concodeeval-fewshot").read_text(encoding="utf-8").split("\n")[0])
    spec, notes = reproduction_spec(RunSpec.model_validate(header["spec"]), ReproduceChoices())
    assert notes == [] and all(Path(t.shots_from or "").is_file() for t in spec.tasks)
