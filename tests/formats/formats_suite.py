"""Test data for the formats tests: the JSON-Schema-Test-Suite (draft
2020-12) shipped in the package, and exact-equality helpers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from conformbench.files import JSON_SCHEMA_TEST_SUITE, shipped_data

__all__ = [
    "SuiteCase",
    "SuiteGroup",
    "canon",
    "optional_groups",
    "suite_cases",
    "suite_dir",
    "suite_groups",
]


def suite_dir() -> Path:
    """The JSON-Schema-Test-Suite copy shipped in the package."""
    return shipped_data(JSON_SCHEMA_TEST_SUITE)


@dataclass(frozen=True)
class SuiteGroup:
    file: str
    index: int
    description: str
    schema: Any
    tests: tuple[tuple[str, Any, bool], ...]

    @property
    def id(self) -> str:
        return f"{self.file}#{self.index}"


@dataclass(frozen=True)
class SuiteCase:
    group: SuiteGroup
    description: str
    data: Any
    valid: bool

    @property
    def id(self) -> str:
        return f"{self.group.id}/{self.description}"


def _load(pattern: str) -> tuple[SuiteGroup, ...]:
    root = suite_dir() / "tests" / "draft2020-12"
    out = []
    for path in sorted(root.glob(pattern)):
        name = path.relative_to(root).with_suffix("").as_posix()
        for i, group in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            tests = tuple((t["description"], t["data"], t["valid"]) for t in group["tests"])
            out.append(SuiteGroup(name, i, group["description"], group["schema"], tests))
    return tuple(out)


@cache
def suite_groups() -> tuple[SuiteGroup, ...]:
    """The required tests of draft 2020-12."""
    return _load("*.json")


@cache
def optional_groups() -> tuple[SuiteGroup, ...]:
    """The optional tests (bignum, float overflow, regex dialects, formats)."""
    return _load("optional/*.json") + _load("optional/format/*.json")


def suite_cases() -> list[SuiteCase]:
    return [SuiteCase(g, d, data, valid) for g in suite_groups() for d, data, valid in g.tests]


def canon(value: Any) -> str:
    """Exact JSON text: tells 1 from 1.0 from true, and keeps key order."""
    return json.dumps(value, ensure_ascii=False)
