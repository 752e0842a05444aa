"""A `--schemas` folder is read lazily and once per real file, and a link
that loops is an explained exclusion (issue #59, cases 6 and 8): the three
commands that read a folder (``dataset build``, ``engines cost``, ``engines
check``) share ``read_external``, and each is checked here through its own
reader."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_hostile_surfaces import _cli

from conformbench.audits.engine_check.sources import schemas_source
from conformbench.errors import UsageError
from conformbench.schemas import external
from conformbench.schemas.build import BuildOptions, _external_cases
from conformbench.schemas.external import read_external
from conformbench.serving.workload import corpus_prompts

SMALL = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def _folder(tmp: Path) -> Path:
    folder = tmp / "corpus"
    folder.mkdir()
    for name in ("a", "c"):
        (folder / f"{name}.json").write_text(json.dumps(SMALL), encoding="utf-8")
    (folder / "b.json").symlink_to(folder / "b.json")  # loops on itself
    (folder / "d.json").symlink_to(folder / "e.json")
    (folder / "e.json").symlink_to(folder / "d.json")  # a loop of two
    return folder


def test_a_link_loop_in_a_folder_is_an_explained_exclusion_for_every_reader(tmp_path: Path) -> None:
    """The issue's case: `Path.resolve()` raised on the loop and all three
    commands ended in a traceback."""
    folder = _folder(tmp_path)
    entries = list(read_external(folder))
    reasons = {e.source: getattr(e, "reason", None) for e in entries}
    assert reasons == {"a.json": None, "b.json": "a link that loops (never followed)", "c.json": None,
                       "d.json": "a link that loops (never followed)", "e.json": "a link that loops (never followed)"}
    cases, excluded = _external_cases(BuildOptions(out=tmp_path / "ds", schemas=folder))  # dataset build
    assert len(cases) == 2 and [e.source for e in excluded] == ["b.json", "d.json", "e.json"]
    source = schemas_source(folder)  # engines check --schemas
    assert len(source.schemas) == 2 and len(source.excluded) == 3
    prompts, left_out = corpus_prompts(folder, 2)  # engines cost --schemas
    assert len(prompts) == 2 and {e.source for e in left_out} == {"b.json"}


def test_a_schemas_path_that_is_itself_a_loop_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for read in (lambda p: list(read_external(p)), lambda p: corpus_prompts(p, 1), schemas_source):
        with pytest.raises(UsageError) as exc:
            read(tmp_path / "loop")
        assert "\n" not in str(exc.value)


@pytest.mark.long
def test_dataset_build_on_a_folder_with_loops_is_a_build(tmp_path: Path) -> None:
    """End to end, the CLI (about 10 s): exit 0, the loops listed in excluded.json."""
    folder = _folder(tmp_path)
    done = _cli("dataset", "build", "--schemas", str(folder), "--out", str(tmp_path / "ds"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    excluded = json.loads((tmp_path / "ds" / "excluded.json").read_text(encoding="utf-8"))
    assert {e["source"] for e in excluded} >= {"b.json", "d.json", "e.json"}
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    done = _cli("dataset", "build", "--schemas", str(loop), "--out", str(tmp_path / "ds2"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.splitlines()[-1].startswith("conformbench: error: no such schema file"), done.stderr


def _big_schema(path: Path) -> None:
    """A 7.8 MiB schema that parses to well over 10x its size in Python."""
    values = ",".join(str(1_000_000 + i) for i in range(980_000))
    path.write_text('{"type": "integer", "enum": [' + values + "]}", encoding="utf-8")


# VmHWM, not ru_maxrss: Linux carries a vfork parent's peak (pytest's own) into the
# child's ru_maxrss at exec (tests/hostile/test_hostile_servers.py)
_PEAK = """
import sys
from pathlib import Path
from conformbench.schemas.external import ExternalSchema, read_external
entries = list(read_external(Path(sys.argv[1])))
peak = next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM'))
print(len(entries), sum(1 for e in entries if isinstance(e, ExternalSchema)), peak)
"""


def test_one_big_schema_linked_300_times_is_read_once_under_1_gb(tmp_path: Path) -> None:
    """The issue's case: 8 MB on disk reached 4.6 GB and a MemoryError at
    `-n 1`. Every entry is read here (not only the first) in a fresh
    process, whose peak resident memory is measured."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    _big_schema(folder / "big.json")
    assert 7 << 20 < (folder / "big.json").stat().st_size < 8 << 20
    for i in range(300):
        (folder / f"link-{i:03d}.json").symlink_to(folder / "big.json")
    done = subprocess.run([sys.executable, "-c", _PEAK, str(folder)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    total, read, peak_kib = map(int, done.stdout.split())
    assert (total, read) == (301, 1)
    assert peak_kib < 1 << 20, f"peak {peak_kib >> 10} MiB"


def test_a_folder_is_parsed_only_as_far_as_n_reaches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A variant: distinct files, not links. `-n 1` parses the first file
    alone, whatever follows it."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i in range(5):
        (folder / f"s{i}.json").write_text(json.dumps({**SMALL, "title": f"s{i}"}), encoding="utf-8")
    parsed: list[str] = []
    real = external.loads_schema

    def counting(text: str) -> Any:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(external, "loads_schema", counting)
    cases, excluded = _external_cases(BuildOptions(out=tmp_path / "ds", schemas=folder, n=1))
    assert len(cases) + len(excluded) == 1 and len(parsed) == 1
    parsed.clear()
    prompts, _ = corpus_prompts(folder, 2)
    assert len(prompts) == 2 and len(parsed) == 2
    parsed.clear()
    assert len(schemas_source(folder, limit=1).schemas) == 1 and len(parsed) <= 2


def test_a_reference_into_a_linked_file_is_still_bundled(tmp_path: Path) -> None:
    """Bundling reads a referenced file when the reference is met, by file
    name (a link's name too) or by its $id, as the eager index did."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "defs.json").write_text(json.dumps({"$id": "https://example.com/defs.json",
                                                  "$defs": {"n": {"type": "integer"}}}), encoding="utf-8")
    (folder / "alias.json").symlink_to(folder / "defs.json")
    (folder / "a.json").write_text(json.dumps({"$ref": "alias.json#/$defs/n"}), encoding="utf-8")
    (folder / "b.json").write_text(json.dumps({"$ref": "https://example.com/defs.json#/$defs/n"}), encoding="utf-8")
    by_source = {e.source: e for e in read_external(folder)}
    for name in ("a.json", "b.json"):
        schema = by_source[name].schema  # type: ignore[union-attr]
        assert schema["$ref"].startswith("#/$defs/") and "$defs" in schema, schema
    assert "read once" in by_source["defs.json"].reason  # type: ignore[union-attr]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0
