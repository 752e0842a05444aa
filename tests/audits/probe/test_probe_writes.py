"""``write_probe`` (issue #28): engines.json and engines.md are written whole
or not at all. A full disk while the new pair is written leaves the old
pair, byte for byte, and no temporary file (never a torn engines.json, or a
new one beside the old engines.md)."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

from conformbench.audits.probe import ProbeReport, write_probe

_CHILD = """
import sys
from pathlib import Path
from conformbench.audits.probe import ProbeReport, write_probe
from conformbench.errors import UsageError
settings = {"engines": [], "keywords": ["x" * (1 << 20)], "n_per_keyword": 1, "max_tokens": 8, "seed": 0}
report = ProbeReport(created="2026-12-02T00:00:00+00:00", settings=settings, model={}, engines=[])
try:
    write_probe(report, Path(sys.argv[1]))
except UsageError as exc:
    print(exc)
    sys.exit(2)
"""


def _full_disk() -> None:
    """In the child: files stop growing past 64 KiB (EFBIG, as on a full disk)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))


def test_a_full_disk_leaves_the_old_probe_whole(tmp_path: Path) -> None:
    settings = {"engines": [], "keywords": ["maximum"], "n_per_keyword": 1, "max_tokens": 8, "seed": 0}
    old = ProbeReport(created="2026-12-01T00:00:00+00:00", settings=settings, model={"model_file": "m.gguf"},
                      engines=[])
    json_path, md_path = write_probe(old, tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(before) == {json_path.name, md_path.name}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path)], capture_output=True, text=True,
                          timeout=120, preexec_fn=_full_disk)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.startswith("cannot write ")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_engines_md_says_on_how_many_attempts_each_verdict_rests(tmp_path: Path) -> None:
    """Issue #48: 'enforced' on 2 samples is thin support; the table says so,
    as the terminal's does (one function writes both cells)."""
    from conformbench.audits.probe.markdown import verdict_cell
    from conformbench.audits.probe.records import EngineProbe, KeywordResult, ProbeSample

    def sample(text: str, violations: list[str], parsed: bool = True) -> ProbeSample:
        return ProbeSample(prompt="p", text=text, finish_reason="stop", parsed=parsed, violations=violations)

    held = KeywordResult(keyword="maximum", status="enforced", detail="", probe_schema="{}",
                         samples=[sample("1", []), sample("2", []), sample("x", [], parsed=False)])
    broke = KeywordResult(keyword="minimum", status="ignored", detail="", probe_schema="{}",
                          samples=[sample("-5", ["minimum"]), sample("3", [])])
    engine = EngineProbe(engine="gbnf", version="1", available=True, reason=None, canary="passed",
                         canary_detail=None, keywords=[held, broke])
    settings = {"engines": ["gbnf"], "keywords": ["maximum", "minimum"], "n_per_keyword": 3, "max_tokens": 8,
                "seed": 0}
    _json, md_path = write_probe(ProbeReport(created="2026-12-01T00:00:00+00:00", settings=settings,
                                             model={"model_file": "m.gguf"}, engines=[engine]), tmp_path)
    md = md_path.read_text(encoding="utf-8")
    assert verdict_cell(held) == "enforced (2/3 held)" and verdict_cell(broke) == "ignored (1/2 broke)"
    assert "| maximum | enforced (2/3 held) |" in md and "| minimum | ignored (1/2 broke) |" in md
    assert "evidence on n attempts, not proof" in md
