"""Few-shot selection: other schemas only, deterministic, short and
array-rooted first, samples that keep their verdict in every format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.schemas.case import SchemaCase, load_dataset
from conformbench.tasks.concodeeval.shots import Shot, ShotPool, is_array_root, shown_faithfully
from conformbench.validator.schema_validator import validator_for

SF = ("json", "yaml")
OF = ("json", "yaml", "xml")


@pytest.fixture(scope="module")
def cases(concodeeval_dataset: Path) -> list[SchemaCase]:
    return load_dataset(concodeeval_dataset)


def _size(schema: object) -> int:
    return len(json.dumps(schema, ensure_ascii=False))


def test_generation_shots_are_short_array_roots_from_other_schemas(cases: list[SchemaCase]) -> None:
    pool = ShotPool(cases, SF, OF)
    first = pool.generation(exclude_id="none")
    assert len(first) == 3
    assert [is_array_root(s.schema) for s in first] == [True, False, True]
    arrays = [c for c in cases if is_array_root(c.schema) and c.invalid_instances
              and c.valid_instance not in ([], {})]
    shortest = min(_size(c.schema) for c in arrays)
    assert _size(first[0].schema) == shortest
    # the test item's own schema is replaced by the next candidate
    own = first[0].schema_id
    other = pool.generation(exclude_id=own)
    assert own not in [s.schema_id for s in other] and len(other) == 3
    assert other == ShotPool(cases, SF, OF).generation(exclude_id=own)  # deterministic
    for shot in first:
        assert set(shot.renderings) == set(SF)
        assert validator_for(shot.schema).is_valid(shot.instance)  # type: ignore[arg-type]
        assert Shot.from_json(json.loads(json.dumps(shot.to_json()))) == shot


_GONE = object()


@pytest.mark.parametrize(("key", "value"), [
    ("answer", 1), ("keyword", ["minimum"]), ("schema", "object"), ("renderings", ["json"]), ("instance", _GONE),
])
def test_a_stored_shot_of_the_wrong_shape_is_a_usage_error(key: str, value: object) -> None:
    shot = Shot("s1", {"type": "integer"}, {"json": "{}"}, 3, answer="yes")
    stored: dict[str, object] = dict(shot.to_json())
    assert Shot.from_json(stored) == shot  # type: ignore[arg-type]
    if value is _GONE:
        del stored[key]
    else:
        stored[key] = value
    with pytest.raises(UsageError, match="malformed stored few-shot example"):
        Shot.from_json(stored)  # type: ignore[arg-type]


def test_validation_shots_one_yes_one_no(cases: list[SchemaCase]) -> None:
    pool = ShotPool(cases, SF, OF)
    yes, no = pool.validation(exclude_id=cases[0].id)
    assert (yes.answer, no.answer) == ("yes", "no")
    assert yes.schema_id != no.schema_id and cases[0].id not in (yes.schema_id, no.schema_id)
    assert is_array_root(yes.schema)
    assert validator_for(yes.schema).is_valid(yes.instance)  # type: ignore[arg-type]
    found = validator_for(no.schema).violations(no.instance)  # type: ignore[arg-type]
    assert no.keyword is not None and {v.keyword for v in found} == {no.keyword}


def test_shown_faithfully_rejects_samples_a_format_cannot_carry() -> None:
    schema = {"type": "string"}
    assert shown_faithfully("a", schema, "xml")
    assert not shown_faithfully("\x00", schema, "xml")  # XML 1.0 cannot hold NUL
    assert shown_faithfully("\x00", schema, "json")
    # an invalid sample must still break the keyword it is meant to break
    assert shown_faithfully("", {"type": "string", "minLength": 1}, "yaml", "minLength")
    assert not shown_faithfully("ab", {"type": "string", "minLength": 1}, "yaml", "minLength")
