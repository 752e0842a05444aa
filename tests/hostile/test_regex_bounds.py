"""Regex blow-up by counted repetition (issue #28, item 1): a pattern whose
counted repetitions unroll past ``pattern_size.MAX_PATTERN_SIZE`` is refused
before any compile, everywhere a pattern is compiled, with a reason."""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from conformbench.audits.engine_check.sources import schemas_source
from conformbench.engines.grammars.strings import pattern_regex
from conformbench.formats.base import UnrenderableSchemaError
from conformbench.formats.python.types import python_regex
from conformbench.schemas.regexgen import regex_samples
from conformbench.validator.pattern_size import MAX_PATTERN_SIZE, PatternTooLarge, check_size, expanded_size
from conformbench.validator.patterns import PatternError, compile_pattern
from conformbench.validator.schema_validator import SchemaError, SchemaValidator

BOMB = "((a{999}){999}){999}"
#: a memory ceiling for the child processes: the unbounded compile took 5.7 GB
_CHILD_BYTES = 1536 << 20


def test_expanded_size_multiplies_nested_counts() -> None:
    assert expanded_size("a{999}") == 999
    assert expanded_size(r"(\d{1,3}\.){3}\d{1,3}") == 18
    assert expanded_size(r"\p{L}{3}") == 3  # \p{..} is not a count
    assert expanded_size("[a{9}]{2}") == 2  # inside a class, braces are literal
    assert expanded_size(BOMB) > MAX_PATTERN_SIZE
    with pytest.raises(PatternTooLarge, match="unrolls to more than"):
        check_size(BOMB)


def test_validator_refuses_the_pattern_with_a_reason() -> None:
    with pytest.raises(PatternError, match="unrolls to more than"):
        compile_pattern(BOMB)
    with pytest.raises(SchemaError, match="unrolls to more than"):
        SchemaValidator({"type": "string", "pattern": BOMB})


def test_a_format_regex_answer_is_invalid_not_a_memory_error() -> None:
    validator = SchemaValidator({"type": "string", "format": "regex"}, formats="assert")
    assert not validator.is_valid(BOMB)
    assert validator.is_valid("a{999}")


def test_generators_and_grammars_refuse_it() -> None:
    assert list(regex_samples(BOMB, random.Random(0))) == []
    assert pattern_regex(BOMB) is None
    with pytest.raises(UnrenderableSchemaError, match="unrolls"):
        python_regex(BOMB)


def test_engine_check_excludes_the_schema(tmp_path: Path) -> None:
    (tmp_path / "bomb.json").write_text(json.dumps({"type": "string", "pattern": BOMB}))
    (tmp_path / "fine.json").write_text(json.dumps({"type": "string", "pattern": "^a+$"}))
    source = schemas_source(tmp_path)
    assert [s.id for s in source.schemas] == ["fine"]
    assert [(e.id, "unrolls" in e.reason) for e in source.excluded] == [("bomb", True)]


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_CHILD_BYTES, _CHILD_BYTES))


@pytest.mark.parametrize("command", [["validate", "SCHEMA", "ANSWER"], ["render", "-f", "nl", "SCHEMA"]])
def test_commands_answer_in_one_line_and_bounded_cpu(tmp_path: Path, command: list[str]) -> None:
    schema, answer = tmp_path / "s.json", tmp_path / "a.json"
    schema.write_text(json.dumps({"type": "string", "pattern": BOMB}))
    answer.write_text('"aaa"')
    args = [str(schema) if a == "SCHEMA" else str(answer) if a == "ANSWER" else a for a in command]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "conformbench.cli.main", *args], capture_output=True,
                          text=True, timeout=300, preexec_fn=_limit_memory)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert done.returncode == 2, done.stderr[-500:]
    assert done.stderr.startswith("conformbench: error: ") and done.stderr.count("\n") == 1
    assert "unrolls to more than" in done.stderr
    assert cpu < 30, f"{cpu:.1f} CPU-seconds"
