"""Coverage-guided fuzzing of the output parsers with atheris (libFuzzer).

Run directly (libFuzzer flags pass through), e.g.::

    python tests/fuzz/atheris_parsers.py -atheris_runs=20000 -max_total_time=60 SEED_DIR

The first input byte picks the format (json, yaml, xml) and the rest is read
as text that may hold lone surrogates. A parse must return a ParsedOutput,
never raise; an accepted value must be in the JSON data model and a rejected
one must carry a reason. Any violation is an uncaught exception, which
libFuzzer reports with the crashing input and a non-zero exit.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import atheris

FORMATS = ("json", "yaml", "xml")

# the registry imports the parser modules on first use: do that inside the
# block so that they (and PyYAML, defusedxml) are instrumented for coverage
with atheris.instrument_imports(include=["conformbench.formats", "yaml", "defusedxml", "json"]):
    from conformbench.formats.base import ParsedOutput, output_formats

    PARSERS = [output_formats.get(name)() for name in FORMATS]


def _json_model(value: Any, depth: int = 0) -> bool:
    if depth > 1000:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_model(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_model(v, depth + 1) for v in value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace") == value
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (bool, int))


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    which = fdp.ConsumeIntInRange(0, len(PARSERS) - 1)
    text = fdp.ConsumeUnicode(fdp.remaining_bytes())
    result = PARSERS[which].parse(text, schema=None)
    if not isinstance(result, ParsedOutput):
        raise TypeError(f"{FORMATS[which]}: parse returned {type(result).__name__}")
    if result.ok and not _json_model(result.value):
        raise AssertionError(f"{FORMATS[which]}: accepted a value outside the JSON data model")
    if not result.ok and not (isinstance(result.error, str) and result.error.strip()):
        raise AssertionError(f"{FORMATS[which]}: rejected without a reason")


#: the harness's memory bound: an address-space limit set on itself, not
#: libFuzzer's -rss_limit_mb, which reads ru_maxrss, and Linux carries a
#: vfork parent's peak (pytest's, 2.4 GB once the transformers tests ran)
#: into the child's ru_maxrss across exec, so the child looked out of memory
#: from its first input. A parser past it raises MemoryError: a crash.
ADDRESS_SPACE_BYTES = 3 << 30


def main() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
