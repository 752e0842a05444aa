"""A numeric option's bounds live in one place: a ``Range`` in its type
(the options common to backends) or the spec field's ``ge``/``le`` (the
run grid and decoding), and every check reads them from there."""

from __future__ import annotations

import typing

import pytest
from pydantic import BaseModel

from conformbench.errors import UsageError
from conformbench.records.base import Range, range_of
from conformbench.records.generation import BackendConfig
from conformbench.records.spec import DecodingSpec, ModelSpec, spec_bounds
from conformbench.runner.run_options import flags
from conformbench.runner.spec import parse_spec


def test_a_spec_model_and_a_backend_config_declare_each_range_once() -> None:
    config = typing.get_type_hints(BackendConfig, include_extras=True)
    ranged = {name: range_of(hint) for name, hint in config.items() if range_of(hint) is not None}
    assert set(ranged) == {"threads", "n_ctx", "concurrency", "timeout_s", "max_retries"}
    for name, declared in ranged.items():  # the very same declaration, not a copy of its numbers
        assert [m for m in ModelSpec.model_fields[name].metadata if isinstance(m, Range)] == [declared]
        assert declared is next(m for m in ModelSpec.model_fields[name].metadata if isinstance(m, Range))


def test_a_range_refuses_in_one_line_with_the_whole_range() -> None:
    with pytest.raises(UsageError, match=r"^n_ctx must be between 256 and 1048576, not 1073741824$"):
        BackendConfig(n_ctx=1 << 30)
    with pytest.raises(UsageError, match=r"^timeout_s must be between 0.001 and 86400, not 0.0$"):
        BackendConfig(timeout_s=0.0)
    with pytest.raises(UsageError, match=r"models\[0\]\.threads must be between 1 and 512, not 0$"):
        parse_spec({"models": [{"label": "m", "threads": 0}], "tasks": [{"name": "gsm8k"}]})
    assert Range(1, 2).refusal(True) is not None and Range(1, 2).refusal(None) is None


class _Probe(BaseModel):
    size: typing.Annotated[int, Range(0, 3)] = 0


def test_pydantic_checks_a_range_by_its_declaration() -> None:
    assert _Probe(size=3).size == 3
    with pytest.raises(ValueError, match="must be between 0 and 3, not 4"):
        _Probe(size=4)


def test_each_flag_takes_its_bounds_from_the_spec_field_it_sets() -> None:
    assert spec_bounds("decoding", "samples") == (1, 100)
    assert spec_bounds("decoding", "beams") == (1, 16)
    assert spec_bounds("model", "threads") == (None, None)  # a Range: its own message gives the range
    assert spec_bounds("params", "tolerance") == (None, None)
    decoding = {f.name for f, flag in flags() if flag.table == "decoding"}
    bounded = {name for name in decoding if spec_bounds("decoding", name if name != "decode_seed" else "seed")[0]
               is not None}
    assert {"samples", "beams", "max_rounds", "max_tokens", "temperature", "decode_seed"} <= bounded
    assert all(key in DecodingSpec.model_fields for key in ("samples", "beams", "max_rounds"))
