"""The shipped ConCodeEval replays are the paper's measurement: its budget
(1024 new tokens, the task default, with the loop stop), every paper cell over
every item, and few answers cut by the budget (loops counted apart)."""

from __future__ import annotations

from collections import Counter
from functools import cache
from itertools import product

import pytest

from conformbench.records.replay import GenerationRecord
from conformbench.records.replay_file import ReplayContents, read_replay
from conformbench.runner.shipped import shipped_replay

FORMATS = ("json", "yaml", "xml", "python", "nl")
OUTPUTS = ("json", "yaml", "xml")


@cache
def _shipped(name: str) -> ReplayContents:
    """The replay's header and, per generation, its latest record (a grown
    run's newer answer supersedes the older one)."""
    return read_replay(shipped_replay(name))


def _cell(contents: ReplayContents, arm: str, schema_format: str, output_format: str) -> list[GenerationRecord]:
    return [g for g in contents.generations
            if (g.condition.arm, g.condition.axis("schema_format"), g.condition.axis("output_format"))
            == (arm, schema_format, output_format)]


#: replay -> the paper's arm (its cells' sizes are in CELL_SIZES below)
PAPER_ARMS = {
    "concodeeval-generation": "prompt_only",
    "concodeeval-validation": "unconstrained",
}


#: every shipped ConCodeEval replay: (task, arm, output formats) -> items per cell and model
CELL_SIZES: dict[str, dict[tuple[str, str, tuple[str, ...]], int]] = {
    "concodeeval-generation": {("generation", "prompt_only", OUTPUTS): 100,
                               ("generation", "constrained", OUTPUTS): 100},
    "concodeeval-validation": {("validation", "unconstrained", OUTPUTS): 200},
    "concodeeval-validation-arms": {("validation", "prompt_only", OUTPUTS): 40,
                                    ("validation", "constrained", OUTPUTS): 40},
    "concodeeval-fewshot": {("generation", "prompt_only", ("json",)): 40,
                            ("validation", "unconstrained", ("json",)): 40},
    "concodeeval-models": {("generation", "prompt_only", ("json",)): 30,
                           ("validation", "unconstrained", ("json",)): 30},
}


@pytest.mark.parametrize("name", sorted(CELL_SIZES))
def test_the_paper_budget_and_the_loop_stop(name: str) -> None:
    spec = _shipped(name).header.spec
    assert spec.decoding.loop_stop is True
    assert spec.decoding.max_tokens is None
    assert all(task.max_tokens is None for task in spec.tasks)  # the task default: 1024


@pytest.mark.parametrize("name", sorted(CELL_SIZES))
def test_every_cell_of_every_model_has_its_items(name: str) -> None:
    """Each cell holds one record per item and model (an exclusion is a
    record too, with its reason; the paper cells have none, above)."""
    shipped = _shipped(name)
    models = {g.model for g in shipped.generations}
    for (task, arm, outputs), n in CELL_SIZES[name].items():
        for model, schema_format, output_format in product(sorted(models), FORMATS, outputs):
            cell = [g for g in _cell(shipped, arm, schema_format, output_format)
                    if g.task == task and g.model == model]
            assert len({g.item_id for g in cell}) == len(cell) == n, (task, arm, model, schema_format, output_format)


@pytest.mark.parametrize("name", sorted(PAPER_ARMS))
def test_every_paper_cell_is_over_every_item(name: str) -> None:
    arm = PAPER_ARMS[name]
    shipped = _shipped(name)
    (n,) = [n for (_, cell_arm, _), n in CELL_SIZES[name].items() if cell_arm == arm]
    for schema_format, output_format in product(FORMATS, OUTPUTS):
        cell = _cell(shipped, arm, schema_format, output_format)
        assert len(cell) == n, (schema_format, output_format)
        assert not [g for g in cell if g.excluded], (schema_format, output_format)


@pytest.mark.parametrize("name", sorted(PAPER_ARMS))
def test_at_most_5_percent_of_answers_end_on_the_budget(name: str) -> None:
    finishes = Counter(g.finish_reason for g in _shipped(name).generations)
    assert finishes["length"] <= 0.05 * sum(finishes.values()), finishes


def test_the_grammar_comparison_covers_all_15_cells() -> None:
    """The constrained cells (JSON through llguidance's JSON Schema grammar in
    its lenient mode, YAML and XML through ours) hold every item: YAML and XML
    generate all 100; JSON leaves out only the one schema llguidance refuses
    (minProperties over optional properties, guidance-ai/llguidance#168), with
    its reason recorded."""
    shipped = _shipped("concodeeval-generation")
    for schema_format, output_format in product(FORMATS, OUTPUTS):
        cell = _cell(shipped, "constrained", schema_format, output_format)
        assert len(cell) == 100, (schema_format, output_format)
        assert all(g.condition.engine == "llguidance" and g.engine_input for g in cell if not g.excluded)
        left_out = {g.item_id: g.excluded for g in cell if g.excluded}
        if output_format == "json":
            assert list(left_out) == ["cc_gen-0093"]
            assert "llguidance cannot compile the schema" in left_out["cc_gen-0093"]
        else:
            assert not left_out, (schema_format, output_format)


@pytest.mark.long
def test_the_beam_replay_pairs_with_the_greedy_replays_item_for_item() -> None:
    """concodeeval-beam (examples/specs/concodeeval-beam.toml): beams 3 and
    attention on the first 10 schemas' JSON and YAML cells, JSON output; every
    generation carries attention, and every item pairs with the greedy
    decoding of the same prompt, made on the same build (nothing unpaired)."""
    from conformbench.runner.ledger import checked_replays, paired_items
    from conformbench.scoring.against import against_data
    from conformbench.scoring.load import load_replays

    shipped = _shipped("concodeeval-beam")
    decoding = shipped.header.spec.decoding
    assert (decoding.beams, decoding.attention, decoding.max_tokens) == (3, True, None)
    assert all(g.attention is not None for g in shipped.generations if not g.excluded)
    cells = Counter((g.task, g.condition.axis("schema_format")) for g in shipped.generations)
    assert cells == {("generation", "json"): 10, ("generation", "yaml"): 10,
                     ("validation", "json"): 20, ("validation", "yaml"): 20}
    greedy = _shipped("concodeeval-beam-greedy")
    # both arms from one build (issue #41): the comparison holds the decoding alone
    assert shipped.header.build is not None and shipped.header.build == greedy.header.build
    assert greedy.header.spec.decoding.beams == 1
    beam, beam_greedy = (checked_replays([shipped_replay(name)]) for name in ("concodeeval-beam",
                                                                              "concodeeval-beam-greedy"))
    paired = paired_items([items for _, items in beam], [items for _, items in beam_greedy])
    data = against_data(load_replays(beam), load_replays(beam_greedy), 0.1, paired)
    assert not data.unpaired
    assert sorted((r.task, r.condition.split("/")[0], r.n) for r in data.rows) == [
        ("generation", "json->json", 10), ("generation", "yaml->json", 10),
        ("validation", "json->json", 20), ("validation", "yaml->json", 20)]


def test_no_shipped_replay_records_the_packagers_paths() -> None:
    """A model is recorded by file name and sha256, never by the path it had
    on the machine that made the replay (a home directory)."""
    from conformbench.runner.shipped import shipped_replays

    for name, path in shipped_replays().items():
        contents = read_replay(path)
        for model in contents.models:
            meta = model.metadata
            assert "model_path" not in meta, name
            assert meta.get("model_file") and len(meta.get("model_sha256") or "") == 64, name
        text = path.read_text(encoding="utf-8")
        for prefix in ('"/root/', '"/home/', '"/Users/', '"/work/'):
            assert prefix not in text, (name, prefix)
