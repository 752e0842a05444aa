"""Every schema format on the handpicked schemas, against golden files.

Regenerate after an intended change with
``CONFORMBENCH_UPDATE_GOLDEN=1 python -m pytest tests/formats/test_golden_renderings.py``
and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from formats_cases import GOLDEN, GoldenCase
from formats_suite import canon
from pydantic import BaseModel, ValidationError

from conformbench.formats.base import schema_formats
from conformbench.formats.python.format import load_model
from conformbench.validator.schema_validator import validator_for

GOLDEN_DIR = Path(__file__).parent / "golden"
FORMATS = ("json", "yaml", "xml", "python", "nl")
UPDATE = os.environ.get("CONFORMBENCH_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", GOLDEN.values(), ids=list(GOLDEN))
def test_rendering_matches_golden(case: GoldenCase, fmt: str) -> None:
    text = schema_formats.get(fmt)().render(case.schema)
    path = GOLDEN_DIR / f"{case.name}.{fmt}"
    if UPDATE:
        path.write_text(text + "\n", encoding="utf-8")
    assert path.exists(), f"missing {path}; run with CONFORMBENCH_UPDATE_GOLDEN=1"
    assert text + "\n" == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["json", "yaml", "xml"])
@pytest.mark.parametrize("case", GOLDEN.values(), ids=list(GOLDEN))
def test_data_renderings_load_back_exactly(case: GoldenCase, fmt: str) -> None:
    renderer = schema_formats.get(fmt)()
    loaded = renderer.load(renderer.render(case.schema))
    assert canon(loaded) == canon(case.schema)  # key order included


@pytest.mark.parametrize("case", GOLDEN.values(), ids=list(GOLDEN))
def test_cases_are_labelled_right(case: GoldenCase) -> None:
    validator = validator_for(case.schema)
    assert all(validator.is_valid(v) for v in case.valid)
    assert not any(validator.is_valid(v) for v in case.invalid)


@pytest.mark.parametrize("case", GOLDEN.values(), ids=list(GOLDEN))
def test_pydantic_model_agrees_on_every_instance(case: GoldenCase) -> None:
    """The model judges JSON text like the validator, except on the
    instances the case lists as known differences, which must differ."""
    model = load_model(schema_formats.get("python")().render(case.schema))
    differs = {canon(v) for v in case.python_differs}
    assert differs <= {canon(v) for v in (*case.valid, *case.invalid)}
    for instance in (*case.valid, *case.invalid):
        expected = canon(instance) in {canon(v) for v in case.valid}
        agrees = _accepts(model, instance) == expected
        assert agrees != (canon(instance) in differs), instance


def _accepts(model: type[BaseModel], instance: Any) -> bool:
    try:
        model.model_validate_json(json.dumps(instance))
    except ValidationError:
        return False
    return True


def test_yaml_golden_quotes_what_yaml_11_would_misread() -> None:
    text = (GOLDEN_DIR / "enum_const.yaml").read_text(encoding="utf-8")
    assert "- 'yes'" in text and "- 'null'" in text and "'1.0'" in text


def test_python_golden_shows_constraints_as_code() -> None:
    text = (GOLDEN_DIR / "object_nested.python").read_text(encoding="utf-8")
    assert "class Schema(BaseModel):" in text
    assert 'model_config = ConfigDict(strict=True, extra="forbid"' in text
    assert 'zip_code: str = Field(None, pattern=r"^[0-9]{5}$", alias="zip code")' in text
    assert 'name: str = Field(min_length=1, max_length=40, pattern=r"^[A-Z][a-z]+$")' in text
    assert "nickname: str | None = None" in text and "joined: date = None" in text
    assert "if len(set(v)) < len(v):" in text


@pytest.mark.parametrize("case", GOLDEN.values(), ids=list(GOLDEN))
def test_python_golden_is_imports_then_classes(case: GoldenCase) -> None:
    """No helper functions, no jsonschema: only import lines come before
    the first class, and nothing but classes (and model rebuilds) after."""
    text = (GOLDEN_DIR / f"{case.name}.python").read_text(encoding="utf-8")
    head, _, _ = text.partition("\nclass ")
    assert all(line.startswith(("from ", "import ")) for line in head.splitlines() if line)
    assert "jsonschema" not in text and not re.search(r"^def ", text, re.MULTILINE)
