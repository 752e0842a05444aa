"""GeneratorConfig: defaults, file overrides, rejection of unknown keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.schemas.config import KEYWORDS, GeneratorConfig, load_config


def test_defaults_cover_every_keyword() -> None:
    config = load_config(None)
    assert set(config.keywords) == set(KEYWORDS)
    assert config.max_depth >= 3


def test_toml_overrides_merge_into_tables(tmp_path: Path) -> None:
    path = tmp_path / "gen.toml"
    path.write_text('max_depth = 3\n[keywords]\npattern = 0.9\n')
    config = load_config(path)
    assert config.max_depth == 3
    assert config.keywords["pattern"] == 0.9
    assert config.keywords["format"] == GeneratorConfig().keywords["format"]


def test_json_config(tmp_path: Path) -> None:
    path = tmp_path / "gen.json"
    path.write_text('{"root_kinds": {"array": 5}, "schema_uri": true}')
    config = load_config(path)
    assert config.root_kinds["array"] == 5 and config.schema_uri


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("colour = 1\n", "colour"),
        ("[keywords]\npatern = 0.5\n", "patern"),
        ("[keywords]\npattern = 1.5\n", "pattern"),
        ("enum_size = [4, 2]\n", "enum_size"),
        ("max_depth = 0\n", "max_depth"),
        (("[root_kinds]\nobject = 0\narray = 0\nstring = 0\nnumber = 0\ninteger = 0\n"
          "boolean = 0\nnull = 0\nenum = 0\nconst = 0\nany = 0\n"), "root_kinds"),
        ("not toml = = 1\n", "not a valid config"),
    ],
)
def test_bad_configs_are_rejected(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "gen.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        load_config(path)


def test_unreadable_config(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read"):
        load_config(tmp_path / "missing.toml")
