"""Hostile answers end as ok=False with a reason, within safety bounds
(2 CPU-seconds and 50 MB of Python allocations; bounds, not benchmarks)."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from conformbench.formats.base import ParsedOutput, output_formats

SECONDS = 2.0
PEAK_BYTES = 50 * 2**20

_LAUGHS_YAML = "a0: [x]\n" + "".join(
    f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]\n" for i in range(1, 10)
).replace("a0: [x]", "a0: &a0 [x]")
_LAUGHS_XML = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10))
    + ']><root>&lol9;</root>'
)


def _xxe(path: Path) -> str:
    return f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{path}">]><root>&x;</root>'


CASES: dict[str, tuple[str, Callable[[Path], str]]] = {
    "yaml alias bomb": ("yaml", lambda _: _LAUGHS_YAML),
    "yaml python tag": ("yaml", lambda p: f"!!python/object/apply:os.system ['touch {p}/pwned']"),
    "xml billion laughs": ("xml", lambda _: _LAUGHS_XML),
    "xml external entity": ("xml", _xxe),
    "xml external dtd": ("xml", lambda p: f'<?xml version="1.0"?><!DOCTYPE r SYSTEM "file://{p}/x.dtd"><root/>'),
    "json 10 MB": ("json", lambda _: "[" + "1," * 5_000_000 + "1]"),
    "yaml 10 MB": ("yaml", lambda _: "- 1\n" * 2_500_000),
    "xml 10 MB": ("xml", lambda _: "<root>" + "<item>1</item>" * 800_000 + "</root>"),
    "json 100000 deep": ("json", lambda _: "[" * 100_000 + "]" * 100_000),
    "yaml 100000 deep": ("yaml", lambda _: "[" * 100_000 + "]" * 100_000),
    "yaml 100000 deep mappings": ("yaml", lambda _: "{a: " * 100_000 + "}" * 100_000),
    "xml 100000 deep": ("xml", lambda _: "<a>" * 100_000 + "</a>" * 100_000),
    "json invalid utf-8": ("json", lambda _: b'{"a": "\xff\xfe"}'.decode("utf-8", "surrogateescape")),
    "yaml invalid utf-8": ("yaml", lambda _: b"a: \xff".decode("utf-8", "surrogateescape")),
    "xml invalid utf-8": ("xml", lambda _: b"<root>\xff</root>".decode("utf-8", "surrogateescape")),
    "json nul": ("json", lambda _: '{"a": 1}\x00'),
    "yaml nul": ("yaml", lambda _: "a: b\x00c"),
    "xml nul": ("xml", lambda _: "<root>\x00</root>"),
    "json lone surrogate escape": ("json", lambda _: '{"a": "\\ud800"}'),
    "xml surrogate reference": ("xml", lambda _: "<root>&#xD800;</root>"),
}


def _measured(parse: Callable[[], ParsedOutput]) -> tuple[ParsedOutput, float, int]:
    # CPU time of this process: the bound is on the work a parse does, which a
    # busy machine (other processes on the cores) must not turn into a failure
    tracemalloc.start()
    started = time.process_time()
    try:
        result = parse()
        seconds = time.process_time() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, seconds, peak


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_answer_is_refused_quickly(name: str, tmp_path: Path) -> None:
    fmt, build = CASES[name]
    (tmp_path / "x.dtd").write_text('<!ENTITY x "SECRET">')
    text = build(tmp_path)  # built before measuring: only the parser is measured
    parser = output_formats.get(fmt)()
    for schema in (None, {"type": "object", "properties": {"a": {"type": "string"}}}):
        result, seconds, peak = _measured(lambda schema=schema: parser.parse(text, schema))
        assert result.ok is False, f"{name}: accepted {str(result.value)[:80]}"
        assert result.error and "\n" not in result.error
        assert "SECRET" not in result.error
        assert seconds < SECONDS, f"{name}: {seconds:.2f} s"
        assert peak < PEAK_BYTES, f"{name}: peak {peak / 2**20:.0f} MiB"
    assert not (tmp_path / "pwned").exists()


def test_reasons_name_the_threat() -> None:
    yaml_out, xml_out = output_formats.get("yaml")(), output_formats.get("xml")()
    assert "anchors are not allowed" in str(yaml_out.parse(_LAUGHS_YAML).error)
    assert "DTDs) are not allowed" in str(xml_out.parse(_LAUGHS_XML).error)
    assert "over the limit" in str(output_formats.get("json")().parse("1" * 1_000_001).error)
    assert "nesting deeper than 200" in str(yaml_out.parse("[" * 300 + "]" * 300).error)
    assert "nesting deeper than 200" in str(xml_out.parse("<a>" * 300 + "</a>" * 300).error)
