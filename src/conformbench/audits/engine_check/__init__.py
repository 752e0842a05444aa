"""``conformbench engines check``: each engine's grammar checked without a
model against documents known to be valid or invalid (the official
JSON-Schema-Test-Suite, the generated dataset's oracle instances, real
schemas), with coverage and compile and per-token mask costs."""

from conformbench.audits.engine_check.maskbench import maskbench_source, read_schemas_source
from conformbench.audits.engine_check.records import ENGINE_CHECK_FORMAT, EngineCheckReport
from conformbench.audits.engine_check.run import (
    SLOW_ENGINES,
    CheckConfig,
    attach_probe,
    check_steps,
    left_out,
    run_engine_check,
)
from conformbench.audits.engine_check.sources import (
    CheckSource,
    generated_source,
    known_suites,
    official_suite_source,
    schemas_source,
    suite_sources,
)

__all__ = [
    "ENGINE_CHECK_FORMAT",
    "SLOW_ENGINES",
    "CheckConfig",
    "CheckSource",
    "EngineCheckReport",
    "attach_probe",
    "check_steps",
    "generated_source",
    "known_suites",
    "left_out",
    "maskbench_source",
    "official_suite_source",
    "read_schemas_source",
    "run_engine_check",
    "schemas_source",
    "suite_sources",
]
