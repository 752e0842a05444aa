"""``conformbench list KIND`` reads the built-ins' rows from a generated
table, cli/_list/catalogue.py, instead of importing every plugin (issue
#58: each ``list`` under half a second). The table is what the registries
make, byte for byte; a fresh ``list`` imports no registry and prints what
the registries print; the registries answer where the table could be
short of them (a registry already imported; a plugin entry point, which
tests/test_one_module_plugins.py installs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformbench.cli._list.catalogue import SOURCES
from conformbench.cli._list.catalogue_make import CATALOGUE_PATH, catalogue_source
from conformbench.cli._list.static import catalogue_engine_rows, static_engine_rows, static_groups
from conformbench.tasks.base import tasks

SRC = Path(__file__).resolve().parents[2] / "src"
KINDS = ("tasks", "arms", "backends", "engines", "formats", "sections")


def _fresh(code: str) -> str:
    """What ``code`` prints in a new interpreter: this process's registries
    may hold what other tests registered."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_catalogue_is_what_the_registries_make() -> None:
    made = _fresh("from conformbench.cli._list.catalogue_make import catalogue_source\n"
                  "print(catalogue_source(), end='')")
    assert CATALOGUE_PATH.read_text(encoding="utf-8") == made, (
        "cli/_list/catalogue.py is stale: write it again with `python -m conformbench.cli._list.catalogue_make`")


def test_the_catalogue_is_made_of_the_built_ins_alone() -> None:
    @tasks.register("catalogue-test-task")
    class _Extra:
        pass

    try:
        with pytest.raises(RuntimeError, match="holds more than its built-ins .catalogue-test-task"):
            catalogue_source()
    finally:
        del tasks._items["catalogue-test-task"]


def test_the_catalogue_knows_each_listed_kind() -> None:
    assert set(SOURCES) == set(KINDS)


def test_each_engine_status_from_the_catalogue_is_the_engines_own() -> None:
    code = ("import json\nfrom conformbench.cli._list.static import catalogue_engine_rows\n"
            "from conformbench.cli.engines import engine_statuses\n"
            "print(json.dumps([catalogue_engine_rows(), engine_statuses()]))")
    from_catalogue, from_engines = json.loads(_fresh(code))
    assert from_catalogue == from_engines
    assert catalogue_engine_rows() == from_catalogue  # and in this process too


def test_an_imported_registry_answers_for_itself() -> None:
    # this process imported every registry (and may have registered more): the table could be short of them
    assert all(static_groups(kind) is None for kind in KINDS if kind != "engines")
    assert static_engine_rows() is None


def _list_in_a_fresh_process(kind: str, tmp_path: Path, first: str = "") -> tuple[str, list[str]]:
    """``list KIND`` then ``list KIND --json`` in one new interpreter (after
    the statement ``first``): what they printed, and the modules imported."""
    modules = tmp_path / f"modules-{kind}-{bool(first)}.json"
    code = (f"import json, sys; {first}\nfrom conformbench.cli.main import main\n"
            f"codes = [main(['list', {kind!r}]), main(['list', {kind!r}, '--json'])]\n"
            f"json.dump(sorted(sys.modules), open({str(modules)!r}, 'w'))\nsys.exit(max(codes))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("COLUMNS", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout, json.loads(modules.read_text(encoding="utf-8"))


@pytest.mark.parametrize("kind", KINDS)
def test_a_fresh_list_imports_no_registry_and_prints_what_the_registries_print(kind: str, tmp_path: Path) -> None:
    registries = [module for module, _, _ in SOURCES[kind]]
    fast, imported = _list_in_a_fresh_process(kind, tmp_path)
    assert not set(registries) & set(imported), f"list {kind} imported its registry"
    live, imported = _list_in_a_fresh_process(kind, tmp_path, first=f"import {registries[0]}")
    assert set(registries) <= set(imported)
    assert fast == live
    assert fast.count("\n") > 5
