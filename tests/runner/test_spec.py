"""Run specs: strict validation with did-you-mean, TOML files, CLI overrides
and the default run."""

from __future__ import annotations

from pathlib import Path

import pytest
import runfakes

from conformbench.errors import UnknownNameError, UsageError
from conformbench.records.spec import RunSpec
from conformbench.runner.defaults import (
    DEFAULT_SIZES,
    build_spec,
    default_spec,
    default_spec_data,
)
from conformbench.runner.run_options import RunOptions
from conformbench.runner.spec import load_spec_file, parse_spec


def test_fake_spec_parses_into_backend_config_and_task_options(tmp_path: Path) -> None:
    spec = parse_spec(runfakes.fake_spec(tmp_path, arms=["constrained"], params={"a": 1}))
    opts = spec.tasks[0].options()
    assert opts.n == 6 and opts.arms == ("constrained",) and opts.params == {"a": 1}
    assert spec.models[0].backend_config().n_ctx == 4096
    assert spec.canary is False and spec.out == tmp_path
    # the header records what defines the generations and their scoring, not out or the display flags
    assert set(spec.replay_dict()) == {"models", "tasks", "decoding", "arms", "format_assertion"}


def test_unknown_key_gets_a_did_you_mean(tmp_path: Path) -> None:
    data = runfakes.fake_spec(tmp_path)
    data["tasks"][0]["nn"] = 3
    with pytest.raises(UsageError, match=r"unknown key 'nn' in tasks\[0\] \(did you mean 'n'\?\)"):
        parse_spec(data)
    data = runfakes.fake_spec(tmp_path)
    data["decodng"] = {}
    with pytest.raises(UsageError, match=r"unknown key 'decodng' in spec \(did you mean 'decoding'\?\)"):
        parse_spec(data)


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        ("name", "fake-qaa", r"tasks\[0\]\.name: unknown task 'fake-qaa' \(did you mean 'fake-qa'\?\)"),
        ("arms", ["constraind[answer]"], r"unknown arm 'constraind' \(did you mean 'constrained'\?\)"),
        ("engines", ["llguidanc"], r"unknown engine 'llguidanc' \(did you mean 'llguidance'\?\)"),
        ("schema_formats", ["jsn"], r"unknown schema format 'jsn' \(did you mean 'json'\?\)"),
        ("output_formats", ["xmlx"], r"unknown output format 'xmlx'"),
    ],
)
def test_unknown_names_are_rejected(tmp_path: Path, where: str, value: object, message: str) -> None:
    data = runfakes.fake_spec(tmp_path)
    data["tasks"][0][where] = value
    with pytest.raises(UnknownNameError, match=message):
        parse_spec(data)


def test_unknown_backend_and_bad_values(tmp_path: Path) -> None:
    data = runfakes.fake_spec(tmp_path, model={"backend": "llamacp"})
    with pytest.raises(UnknownNameError, match=r"did you mean 'llamacpp'"):
        parse_spec(data)
    data = runfakes.fake_spec(tmp_path, n=0)
    with pytest.raises(UsageError, match=r"tasks\[0\]\.n: Input should be greater than or equal to 1"):
        parse_spec(data)
    data = runfakes.fake_spec(tmp_path)
    data["tasks"].append(dict(data["tasks"][0]))
    with pytest.raises(UsageError, match="task 'fake-qa' appears twice"):
        parse_spec(data)


def test_toml_file_round_trip_and_errors(tmp_path: Path) -> None:
    good = tmp_path / "spec.toml"
    good.write_text(
        'out = "o"\ncanary = false\n[decoding]\nmax_tokens = 9\n'
        '[[models]]\nlabel = "m"\nbackend = "fake"\n'
        '[[tasks]]\nname = "fake-qa"\nn = 2\narms = ["unconstrained"]\n'
        '[tasks.params]\nunsupported = ["q1"]\n',
        encoding="utf-8",
    )
    spec = parse_spec(load_spec_file(good), str(good))
    assert spec.decoding.max_tokens == 9 and spec.tasks[0].params == {"unsupported": ["q1"]}
    bad = tmp_path / "bad.toml"
    bad.write_text("[[tasks]\nname=", encoding="utf-8")
    with pytest.raises(UsageError, match="is not valid TOML"):
        load_spec_file(bad)
    with pytest.raises(UsageError, match="cannot read"):
        load_spec_file(tmp_path / "missing.toml")


def test_default_spec_touches_both_experiments_and_every_arm() -> None:
    spec = default_spec()
    names = [t.name for t in spec.tasks]
    assert {"generation", "validation", "gsm8k", "bfcl-simple"} <= set(names)
    arms = {a.partition("[")[0] for t in spec.tasks for a in t.arms}
    assert {"unconstrained", "prompt_only", "constrained", "reason_then_constrain"} <= arms
    assert spec.canary is True and spec.models[0].backend == "llamacpp"
    assert spec.task_spec("gsm8k").n == DEFAULT_SIZES.gsm8k_n


def test_overrides_pick_tasks_and_replace_the_model(tmp_path: Path) -> None:
    o = RunOptions(tasks=("gsm8k",), n=2, backend="fake", label="m1", max_tokens=17,
                      out=tmp_path, no_canary=True, quiet=True)
    spec = build_spec(None, o)
    assert [t.name for t in spec.tasks] == ["gsm8k"]
    task = spec.tasks[0]
    # the default run's arms for the task are kept, n is overridden
    assert task.n == 2 and task.arms == list(DEFAULT_SIZES.gsm8k_arms)
    assert task.max_tokens is None and spec.decoding.max_tokens == 17
    assert [(m.label, m.backend) for m in spec.models] == [("m1", "fake")]
    assert spec.canary is False and spec.out == tmp_path and spec.quiet


def test_canary_stays_on_unless_turned_off(tmp_path: Path) -> None:
    data = default_spec_data()
    data.pop("out", None)
    assert parse_spec(data).canary is True
    spec_file = tmp_path / "s.toml"
    spec_file.write_text('[[tasks]]\nname = "gsm8k"\nn = 1\n', encoding="utf-8")
    spec = build_spec(spec_file, RunOptions())
    assert spec.canary is True and spec.models[0].label == "smollm2-135m"


def test_prompt_style_flag_sets_the_task_option(tmp_path: Path) -> None:
    spec_file = tmp_path / "s.toml"
    spec_file.write_text('[[tasks]]\nname = "gsm8k"\nn = 1\nparams = { keep = 1 }\n\n'
                         '[[tasks]]\nname = "bfcl-simple"\nn = 1\n', encoding="utf-8")
    spec = build_spec(spec_file, RunOptions(prompt_style="validbutwrong"))
    assert [t.params for t in spec.tasks] == [{"keep": 1, "prompt_style": "validbutwrong"},
                                              {"prompt_style": "validbutwrong"}]
    assert build_spec(spec_file, RunOptions()).tasks[1].params == {}


def test_format_assertion_is_a_top_level_key_of_the_replay(tmp_path: Path) -> None:
    default = parse_spec(runfakes.fake_spec(tmp_path))
    assert default.format_assertion is False and default.replay_dict()["format_assertion"] is False
    spec_file = tmp_path / "spec.toml"
    spec_file.write_text('format_assertion = true\n[[models]]\nlabel = "m"\nbackend = "fake"\n'
                         '[[tasks]]\nname = "fake-qa"\n')
    asserted = build_spec(spec_file, RunOptions())
    stored = asserted.replay_dict()
    assert stored["format_assertion"] is True
    # the header's spec reads back to the same spec, the same options and the same header
    again = RunSpec.model_validate(stored)
    assert again.format_assertion and again.replay_dict() == stored
    assert again.task_options(again.tasks[0]).format_mode == "assert"
    assert default.task_options(default.tasks[0]).format_mode == "annotate"
    # the flag overrides the file either way
    assert not build_spec(spec_file, RunOptions(format_assertion=False)).format_assertion
    assert build_spec(None, RunOptions(format_assertion=True)).format_assertion
    data = runfakes.fake_spec(tmp_path)
    data["format_assertions"] = True
    with pytest.raises(UsageError, match=r"unknown key 'format_assertions' in spec \(did you mean "
                                         r"'format_assertion'\?\)"):
        parse_spec(data)


@pytest.mark.parametrize("arm", ["constrained[answer", "constrained]answer[", "[answer]"])
def test_a_malformed_arm_spec_is_refused_where_it_is_written(tmp_path: Path, arm: str) -> None:
    """Arm specs are read by the one arm-spec grammar (arms.split_arm_spec),
    not by cutting at the first bracket, which took 'constrained[answer'."""
    with pytest.raises(UsageError, match=r"tasks\[0\]\.arms: bad arm"):
        parse_spec(runfakes.fake_spec(tmp_path, arms=[arm]))
