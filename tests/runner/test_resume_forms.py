"""The shipped generation spec, unchanged, resumed on a replay of it as it
was before YAML/XML grammars existed (the shipped replay's items and
generations less its constrained YAML and XML cells, under the spec's
header): no item written again, and exactly those cells left to generate;
the JSON cells' requests are what they were."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from conformbench.records.replay_file import REPLAY_NAME, read_replay
from conformbench.runner.ledger import open_run
from conformbench.runner.run import _constrained_forms, _session, build_plans
from conformbench.runner.shipped import shipped_replay
from conformbench.runner.spec import load_spec_file, parse_spec
from conformbench.runner.units import final_request

ROOT = Path(__file__).resolve().parents[2]


def test_the_unchanged_generation_spec_resumes_with_only_the_new_forms_to_run(tmp_path: Path) -> None:
    data = load_spec_file(ROOT / "examples" / "specs" / "concodeeval-generation.toml")
    data["out"] = str(tmp_path)
    spec = parse_spec(data)
    shipped = read_replay(shipped_replay("concodeeval-generation"))
    header = shipped.header.model_copy(update={"spec": spec.replay_spec()})
    before = [g for g in shipped.generations
              if g.condition.engine is None or g.condition.axis("output_format") == "json"]
    lines = [header, *shipped.items, *before]
    (tmp_path / REPLAY_NAME).write_text("".join(r.model_dump_json() + "\n" for r in lines), encoding="utf-8")
    (plan,) = build_plans(spec)
    with open_run(spec, [plan], force=False) as ledger:  # resumes: the spec did not change
        session = _session(spec, ledger, None)
    done = set(session.recorded)
    assert len(done) == len(before) == 2000
    # every item is in the replay already: none is written again
    assert session.items_written == {("generation", i.id) for i in plan.items}
    units = plan.units(spec.models[0].label)
    todo = [u for u in units if not session.finished(plan, u)]
    assert {u.key for u in units} - {u.key for u in todo} == done
    cells = Counter((u.condition.arm, u.condition.engine, u.condition.axis("output_format")) for u in todo)
    assert cells == {("constrained", "llguidance", "yaml"): 500, ("constrained", "llguidance", "xml"): 500}
    assert _constrained_forms([plan], todo) == [("llguidance", "xml"), ("llguidance", "yaml")]
    # a recorded constrained JSON cell is asked for as it was (JSON schema
    # format: its rendering has not changed since the replay was recorded)
    recorded = {g.key: g for g in before}
    for unit in [u for u in units if u.key in done and u.condition.engine and u.condition.axis("schema_format") == "json"][:20]:
        request = final_request(plan, unit, None)
        assert request.prompt == recorded[unit.key].prompt
        assert request.constraint is not None and request.constraint.output_format == "json"
