"""A corpus of hostile model outputs.

Every case is text a model could emit (or an attacker could make it emit)
that a careless parser turns into a hang, a memory blow-up, code execution, a
local file read, a network fetch, or a value outside the JSON data model.
Each case is built on demand (some are 10 MB) and may carry a secret
``marker``: a parse result that mentions it has leaked a local file.

Cases are written by hand from the published attack shapes (billion laughs,
XXE, YAML language tags); no file here is copied from elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BIG", "DEPTH", "HostileCase", "Sandbox", "build_corpus"]

#: nesting depth of the deep-nesting cases
DEPTH = 100_000
#: size of the oversized outputs
BIG = 10 * 1024 * 1024


@dataclass(frozen=True)
class Sandbox:
    """Local resources the attacks aim at: a secret file, a DTD that would
    leak it, a path a shell command would create, and a loopback port that
    must never be contacted."""

    root: Path
    marker: str
    secret: Path
    dtd: Path
    pwned: Path
    port: int

    @classmethod
    def create(cls, root: Path, port: int) -> Sandbox:
        marker = "CONFORMBENCH-SECRET-7f3a9c"
        secret = root / "secret.txt"
        secret.write_text(marker + "\n", encoding="utf-8")
        dtd = root / "evil.dtd"
        dtd.write_text(f'<!ENTITY leak "{marker}">\n', encoding="utf-8")
        return cls(root, marker, secret, dtd, root / "pwned", port)


@dataclass(frozen=True)
class HostileCase:
    name: str
    build: Callable[[Sandbox], str]
    #: what a parser that falls for it would do
    threat: str
    #: output formats whose parser must reject it (ok=False with a reason);
    #: the others may read it as something harmless (an XML bomb is a plain
    #: YAML string) but must still not raise, hang, leak or return a value
    #: outside the JSON data model
    reject: frozenset[str] = frozenset({"json", "yaml", "xml"})
    #: small enough to also try wrapped in a fenced code block
    fence: bool = True


def _yaml_laughs(_: Sandbox) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def _yaml_merge_laughs(_: Sandbox) -> str:
    lines = ["k0: &k0 {x0: lol, y0: lol}"]
    for i in range(1, 12):
        lines.append(f"k{i}: &k{i} {{<<: [*k{i - 1}], x{i}: *k{i - 1}, y{i}: *k{i - 1}}}")
    return "\n".join(lines) + "\n"


def _yaml_apply(box: Sandbox) -> str:
    return f"answer: !!python/object/apply:os.system ['touch {box.pwned}']\n"


def _yaml_new(box: Sandbox) -> str:
    return (
        "answer: !!python/object/new:subprocess.check_output\n"
        f"  args: [['touch', '{box.pwned}']]\n"
    )


def _yaml_name(_: Sandbox) -> str:
    return "answer: !!python/name:os.system\nmodule: !!python/module:os\n"


def _yaml_foreign_tags(_: Sandbox) -> str:
    return (
        "a: !ruby/object:Gem::Installer {i: x}\n"
        "b: !!javax.script.ScriptEngineManager [!!java.net.URLClassLoader [[]]]\n"
        "c: !custom {x: 1}\n"
    )


def _yaml_non_json_values(_: Sandbox) -> str:
    return (
        "when: !!timestamp 2024-01-01\nblob: !!binary aGVsbG8=\n"
        "set: !!set {a, b}\n1: int key\n? [x, y]\n: list key\n"
    )


def _xml_laughs(_: Sandbox) -> str:
    ents = ['<!ENTITY l0 "lol">']
    for i in range(1, 10):
        ents.append(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">')
    return "<?xml version=\"1.0\"?>\n<!DOCTYPE r [\n" + "\n".join(ents) + "\n]>\n<r>&l9;</r>\n"


def _xml_quadratic(_: Sandbox) -> str:
    return f'<!DOCTYPE r [<!ENTITY a "{"x" * 50_000}">]>\n<r>{"&a;" * 50_000}</r>\n'


def _xxe_file(box: Sandbox) -> str:
    return f'<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x SYSTEM "file://{box.secret}">]>\n<r>&x;</r>\n'


def _xxe_parameter(box: Sandbox) -> str:
    return f'<!DOCTYPE r [<!ENTITY % p SYSTEM "file://{box.dtd}"> %p;]>\n<r>&leak;</r>\n'


def _xml_external_dtd_file(box: Sandbox) -> str:
    return f'<?xml version="1.0"?>\n<!DOCTYPE r SYSTEM "file://{box.dtd}">\n<r>&leak;</r>\n'


def _xml_external_dtd_http(box: Sandbox) -> str:
    url = f"http://127.0.0.1:{box.port}/evil.dtd"
    return f'<?xml version="1.0"?>\n<!DOCTYPE r SYSTEM "{url}">\n<r>1</r>\n'


def _xml_xinclude(box: Sandbox) -> str:
    return (
        '<r xmlns:xi="http://www.w3.org/2001/XInclude">'
        f'<xi:include href="file://{box.secret}" parse="text"/></r>\n'
    )


def _big_json(_: Sandbox) -> str:
    return "[" + "0," * (BIG // 2) + "0]"


def _big_text(_: Sandbox) -> str:
    return "x" * BIG


def _big_xml(_: Sandbox) -> str:
    return "<r>" + "<i>0</i>" * (BIG // 8) + "</r>"


def _deep_json(_: Sandbox) -> str:
    return "[" * DEPTH + "]" * DEPTH


def _deep_json_obj(_: Sandbox) -> str:
    return '{"a":' * DEPTH + "1" + "}" * DEPTH


def _deep_yaml_flow(_: Sandbox) -> str:
    return "{a: " * DEPTH + "1" + "}" * DEPTH


def _deep_yaml_block(_: Sandbox) -> str:
    # compact block sequences: "- - x" is [["x"]]
    return "- " * 5_000 + "x\n"


def _deep_xml(_: Sandbox) -> str:
    return "<a>" * DEPTH + "x" + "</a>" * DEPTH


def _surrogate(_: Sandbox) -> str:
    return '{"answer": "bad \udcff byte"}'


def _escaped_surrogate(_: Sandbox) -> str:
    return '{"answer": "lone \\ud800 half"}'


def _surrogate_everywhere(_: Sandbox) -> str:
    return "answer: \udcff\n<answer>\ud800</answer>\n"


def _nul_bytes(_: Sandbox) -> str:
    return '{"answer": "a\x00b"}\x00\n<answer>a\x00b</answer>'


def _huge_int(_: Sandbox) -> str:
    return '{"answer": ' + "9" * 50_000 + "}"


def _non_finite(_: Sandbox) -> str:
    return '{"a": NaN, "b": Infinity, "c": -Infinity, "d": 1e999}'


_JX = frozenset({"json", "xml"})

CASES: tuple[HostileCase, ...] = (
    HostileCase("yaml_billion_laughs", _yaml_laughs, "alias expansion to 10^9 nodes"),
    HostileCase("yaml_merge_laughs", _yaml_merge_laughs, "merge-key alias expansion"),
    HostileCase("yaml_python_apply", _yaml_apply, "runs a shell command"),
    HostileCase("yaml_python_new", _yaml_new, "runs a subprocess"),
    HostileCase("yaml_python_name", _yaml_name, "imports Python objects"),
    HostileCase("yaml_foreign_tags", _yaml_foreign_tags, "language-specific tags"),
    HostileCase("yaml_non_json_values", _yaml_non_json_values, "dates, bytes, sets, non-string keys", _JX),
    HostileCase("xml_billion_laughs", _xml_laughs, "entity expansion to 10^9 characters", _JX),
    HostileCase("xml_quadratic_blowup", _xml_quadratic, "one big entity referenced often", _JX),
    HostileCase("xml_xxe_local_file", _xxe_file, "reads a local file into the value", _JX),
    HostileCase("xml_xxe_parameter_entity", _xxe_parameter, "loads an external DTD via %p;", _JX),
    HostileCase("xml_external_dtd_file", _xml_external_dtd_file, "loads a local DTD", _JX),
    HostileCase("xml_external_dtd_http", _xml_external_dtd_http, "fetches a DTD over the network", _JX),
    HostileCase("xml_xinclude", _xml_xinclude, "includes a local file", frozenset({"json"})),
    HostileCase("big_json_10mb", _big_json, "10 MB document", fence=False),
    HostileCase("big_text_10mb", _big_text, "10 MB scalar", fence=False),
    HostileCase("big_xml_10mb", _big_xml, "10 MB document", fence=False),
    HostileCase("deep_json_arrays", _deep_json, "100,000-deep recursion"),
    HostileCase("deep_json_objects", _deep_json_obj, "100,000-deep recursion"),
    HostileCase("deep_yaml_flow", _deep_yaml_flow, "100,000-deep recursion"),
    HostileCase("deep_yaml_block", _deep_yaml_block, "5,000-deep block recursion"),
    HostileCase("deep_xml", _deep_xml, "100,000-deep recursion", _JX),
    HostileCase("surrogate_in_str", _surrogate, "lone surrogate (invalid UTF-8 byte)"),
    HostileCase("escaped_lone_surrogate", _escaped_surrogate, "\\ud800 escape: not encodable"),
    HostileCase("surrogates_all_formats", _surrogate_everywhere, "lone surrogates"),
    HostileCase("nul_bytes", _nul_bytes, "NUL bytes"),
    HostileCase("huge_integer", _huge_int, "int() digit limit ValueError"),
    HostileCase("non_finite_numbers", _non_finite, "NaN / Infinity are not JSON", _JX),
)


def build_corpus() -> tuple[HostileCase, ...]:
    return CASES


def fenced(text: str, fmt: str) -> str:
    """The text as a model would wrap it: prose, then a fenced block."""
    return f"Here is the answer:\n```{fmt}\n{text}\n```\n"
