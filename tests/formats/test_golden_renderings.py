"""Every schema format on the handpicked schemas, against golden files.

Regenerate after an intended change with
``CONFORMBENCH_UPDATE_GOLDEN=1 python -m pytest tests/formats/test_golden_renderings.py``
and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from formats_cases import GOLDEN, GoldenCase
from formats_suite import canon
from pydantic import ValidationError

from conformbench.formats.base import schema_formats
from conformbench.formats.python_format import load_model
from conformbench.validation.validator import validator_for

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
    model = load_model(schema_formats.get("python")().render(case.schema))
    for instance in case.valid:
        model.model_validate(instance)
    for instance in case.invalid:
        with pytest.raises(ValidationError):
            model.model_validate(instance)


def test_yaml_golden_quotes_what_yaml_11_would_misread() -> None:
    text = (GOLDEN_DIR / "enum_const.yaml").read_text(encoding="utf-8")
    assert "- 'yes'" in text and "- 'null'" in text and "'1.0'" in text


def test_python_golden_shows_constraints_as_code() -> None:
    text = (GOLDEN_DIR / "object_nested.python").read_text(encoding="utf-8")
    assert "class Schema(BaseModel):" in text
    assert 'model_config = ConfigDict(extra="forbid"' in text
    assert "Field(MISSING, alias='zip code')" in text
    assert "Field(min_length=1, max_length=40" in text
    assert "BeforeValidator(unique_items)" in text
