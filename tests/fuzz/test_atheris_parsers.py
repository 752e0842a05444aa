"""A bounded coverage-guided fuzzing run of the output parsers (atheris).

Guards the parsers' never-raise promise and JSON-model values against
inputs hypothesis would not think of: libFuzzer mutates seed answers towards
new coverage of the parsers, PyYAML and defusedxml. Bounded by a run count
and a wall-clock cap so CI stays within a minute or so.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("atheris_parsers.py")
RUNS = 300_000
MAX_SECONDS = 30

#: (format index, ASCII text): ConsumeIntInRange reads one byte, then a
#: ConsumeUnicode mode byte whose low bit 0 means ASCII
SEEDS = [
    (0, '{"name": "a", "tags": [1, 2.5, true, null]}'),
    (0, 'Answer:\n```json\n{"a": {"b": [{}]}}\n```\n'),
    (1, "name: a\ntags:\n  - 1\n  - x: [y, {z: 2}]\n"),
    (1, "```yaml\nkey: &a [1]\nother: *a\n```"),
    (2, '<?xml version="1.0"?><root><name>a</name><tags><item>1</item></tags></root>'),
    (2, '<!DOCTYPE r [<!ENTITY e "x">]><r a="1">&e;<![CDATA[<x>]]></r>'),
]


@pytest.mark.long
@pytest.mark.timeout(MAX_SECONDS + 120)
def test_atheris_bounded_run(tmp_path: Path) -> None:
    if importlib.util.find_spec("atheris") is None:
        pytest.skip("atheris is not installed (it is in the 'test' extra; pip install atheris)")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, (fmt, text) in enumerate(SEEDS):
        (corpus / f"seed{i}").write_bytes(bytes([fmt, 0]) + text.encode("ascii"))
    cmd = [
        sys.executable, str(SCRIPT), f"-atheris_runs={RUNS}", f"-max_total_time={MAX_SECONDS}",
        # no -rss_limit_mb: the harness bounds its own memory (ADDRESS_SPACE_BYTES)
        "-rss_limit_mb=0", "-timeout=10", f"-artifact_prefix={tmp_path}/", str(corpus),
    ]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=MAX_SECONDS + 90)
    log = (proc.stdout + proc.stderr)[-6000:]
    if proc.returncode != 0 and "atheris" in log and "ModuleNotFoundError" in log:
        pytest.skip("atheris failed to import in the fuzzing subprocess")
    crashes = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("crash-", "timeout-", "oom-")))
    assert proc.returncode == 0 and not crashes, f"fuzzer found {crashes}:\n{log}"
    assert "Done" in log, f"the fuzzer did not finish its runs:\n{log}"
