"""Two-constraint violations built from the oracle's one-keyword ones."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

from conformbench.schemas.build import BuildOptions, build_dataset
from conformbench.schemas.oracle import find_invalid, find_valid
from conformbench.schemas.pairs import DELETED, PairViolation, Patch, combine, patch_of, violate_two
from conformbench.validator.schema_validator import validator_for


def _pairs_of(schema: dict[str, Any]) -> list[PairViolation]:
    valid = find_valid(schema)
    assert valid.found
    invalids = find_invalid(schema, valid.instance).instances
    return list(violate_two(validator_for(schema), valid.instance, itertools.combinations(invalids, 2)))


def test_patches_read_edits_per_member_and_element() -> None:
    valid = {"a": 1, "b": [1, 2], "c": "x"}
    assert patch_of(valid, {"a": 1, "b": [1, 3], "c": "x"}) == [Patch(("b", 1), 3)]
    assert patch_of(valid, {"a": 1, "b": [1, 2]}) == [Patch(("c",), DELETED)]
    assert patch_of(valid, {"a": 1, "b": [1, 2, 2], "c": "x"}) == [Patch(("b",), [1, 2, 2])]
    # 1, 1.0 and True are different JSON values
    assert patch_of(1, True) == [Patch((), True)] and patch_of(1, 1.0) == [Patch((), 1.0)]
    assert combine(valid, {"a": 2, "b": [1, 2], "c": "x"}, {"a": 1, "b": [1, 2]}) == {"a": 2, "b": [1, 2]}
    # two edits of one place do not stack
    assert combine(valid, {"a": 2, "b": [1, 2], "c": "x"}, {"a": "s", "b": [1, 2], "c": "x"}) is None


def test_object_pairs_break_exactly_two_occurrences() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "maximum": 9}, "s": {"type": "string", "maxLength": 3}},
        "required": ["n", "s"],
        "additionalProperties": False,
    }
    found = _pairs_of(schema)
    assert found
    validator = validator_for(schema)
    for pair in found:
        got = {(v.keyword, v.schema_path) for v in validator.violations(pair.instance)}
        assert got == set(zip(pair.keywords, pair.schema_paths)) and len(got) == 2
    assert ("maximum", "maxLength") in {pair.keywords for pair in found}


def test_one_scalar_breaks_two_keywords_when_re_solved() -> None:
    """minimum and multipleOf both edit the root number: stacking cannot
    work, re-solving with both negated can."""
    schema = {"type": "integer", "minimum": 10, "multipleOf": 4}
    found = _pairs_of(schema)
    pair = next(p for p in found if set(p.keywords) == {"minimum", "multipleOf"})
    assert isinstance(pair.instance, int) and pair.instance < 10 and pair.instance % 4 != 0


def test_no_pair_where_one_violation_rules_out_the_other() -> None:
    """format applies to strings only: a value that breaks type cannot break
    format, and the exactness check refuses every candidate."""
    schema = {"type": "string", "format": "email"}
    valid = find_valid(schema)
    invalids = find_invalid(schema, valid.instance).instances
    assert {i.keyword for i in invalids} == {"type", "format"}
    assert _pairs_of(schema) == []
    assert _pairs_of({"type": "string"}) == []


def test_pairs_over_generated_schemas(tmp_path: Path) -> None:
    """On real generated schemas most pairs of violations combine, and every
    pair kept violates exactly its two occurrences."""
    built = build_dataset(BuildOptions(out=tmp_path, n=24, seed=11))
    with_pair = 0
    kinds: Counter[bool] = Counter()
    for case in built.cases:
        validator = validator_for(case.schema)  # type: ignore[arg-type]
        pairs = itertools.combinations(case.invalid_instances, 2)
        found = list(itertools.islice(violate_two(validator, case.valid_instance, pairs), 5))
        with_pair += bool(found)
        for pair in found:
            got = {(v.keyword, v.schema_path) for v in validator.violations(pair.instance)}
            assert got == set(zip(pair.keywords, pair.schema_paths)) and len(got) == 2
            kinds[pair.keywords[0] == pair.keywords[1]] += 1
    several = sum(len(c.invalid_instances) >= 3 for c in built.cases)
    assert with_pair >= several * 0.8, (with_pair, several)
    assert kinds[False] > 0
