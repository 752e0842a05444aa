"""Hostile model outputs through every output parser.

Guards the parsers' resource limits (size cap, depth cap), their refusal of
YAML aliases/language tags and XML DTDs/entities/external references, their
UTF-8 and NUL checks, and their promise never to raise: each case must end as
``ok=False`` with a reason (where ``reject`` says so; elsewhere at least as a
harmless JSON value), inside a deadline and a memory budget, with no local
file read, no command run and no network fetch.
"""

from __future__ import annotations

import select
import socket
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from conformbench.formats.base import OutputFormat, output_formats

sys.path.insert(0, str(Path(__file__).resolve().parent))  # helpers beside this file

from hostile_corpus import CASES, HostileCase, Sandbox, fenced
from hostile_isolate import Outcome, run_isolated

FORMATS = ("json", "yaml", "xml")
MAX_SECONDS = 5.0
MAX_PEAK_BYTES = 100 * 1024 * 1024


@pytest.fixture(scope="module")
def listener() -> Iterator[socket.socket]:
    """A loopback port the external-DTD case points at: nothing may connect."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield sock
    sock.close()


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory, listener: socket.socket) -> Sandbox:
    root = tmp_path_factory.mktemp("hostile")
    return Sandbox.create(root, listener.getsockname()[1])


@cache
def _parser(fmt: str) -> OutputFormat:
    return output_formats.get(fmt)()


#: XML answers are read differently when a schema guides the types
GUIDE = {"type": "object", "properties": {"answer": {"type": "string"}, "a": {"type": "number"}}}


def _params() -> list[object]:
    out: list[object] = []
    for case in CASES:
        for fmt in FORMATS:
            out.append(pytest.param(case, fmt, "raw", id=f"{case.name}-{fmt}"))
            if case.fence:
                out.append(pytest.param(case, fmt, "fenced", id=f"{case.name}-{fmt}-fenced"))
        out.append(pytest.param(case, "xml", "guided", id=f"{case.name}-xml-guided"))
    return out


def _check_outcome(case: HostileCase, fmt: str, outcome: Outcome) -> None:
    assert outcome.died is None, outcome.died
    assert outcome.raised is None, f"parse() raised:\n{outcome.raised}"
    assert not outcome.leaked, "the secret file's content reached the parse result"
    if fmt in case.reject:
        assert outcome.ok is False, f"{case.threat}: accepted instead of rejected"
    if outcome.ok:
        assert outcome.model_problem is None, f"value outside the JSON data model: {outcome.model_problem}"
    else:
        assert isinstance(outcome.error, str) and outcome.error.strip(), "rejected without a reason"
    assert outcome.seconds < MAX_SECONDS, f"took {outcome.seconds:.1f} s"
    assert outcome.peak_bytes < MAX_PEAK_BYTES, f"peak {outcome.peak_bytes / 2**20:.0f} MiB"


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("case", "fmt", "mode"), _params())
def test_hostile_output(
    case: HostileCase, fmt: str, mode: str, sandbox: Sandbox, listener: socket.socket
) -> None:
    text = case.build(sandbox)
    if mode == "fenced":
        text = fenced(text, fmt)
    schema = GUIDE if mode == "guided" else None
    parser = _parser(fmt)
    outcome = run_isolated(lambda: parser.parse(text, schema=schema), sandbox.marker)
    _check_outcome(case, fmt, outcome)
    assert not sandbox.pwned.exists(), "a YAML tag ran a command"
    ready, _, _ = select.select([listener], [], [], 0)
    assert not ready, "the parser opened a network connection"


def test_corpus_is_live(sandbox: Sandbox) -> None:
    """The attacks are real: unprotected stdlib parsers fall for them (so the
    tests above would fail if the parsers' protections were removed)."""
    import json
    import xml.etree.ElementTree as ET

    import yaml

    texts = {case.name: case.build(sandbox) for case in CASES}
    with pytest.raises(RecursionError):
        json.loads(texts["deep_json_arrays"])
    assert json.loads(texts["non_finite_numbers"])["a"] != json.loads(texts["non_finite_numbers"])["a"]
    with pytest.raises(ValueError, match="digits"):
        json.loads(texts["huge_integer"])
    assert "\ud800" in json.loads(texts["escaped_lone_surrogate"])["answer"]
    assert len(json.loads(texts["big_json_10mb"])) > 5_000_000
    loaded = yaml.unsafe_load(texts["yaml_python_apply"])  # runs `touch` on purpose
    assert loaded["answer"] == 0 and sandbox.pwned.exists()
    sandbox.pwned.unlink()
    laughs = yaml.safe_load(texts["yaml_billion_laughs"])
    assert laughs["a9"][0] is laughs["a9"][1]  # shared: expanding it is 9**10 nodes
    root = ET.fromstring(texts["deep_xml"])  # expat itself is not recursive
    assert root.tag == "a"


def test_sandbox_files_exist(sandbox: Sandbox) -> None:
    assert sandbox.marker in Path(sandbox.secret).read_text()
    assert sandbox.marker in Path(sandbox.dtd).read_text()
