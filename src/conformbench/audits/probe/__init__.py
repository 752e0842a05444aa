"""``conformbench engines probe``: which JSON Schema keywords each engine
enforces, silently ignores or refuses, found by generating with the model
under nudging prompts. This package owns the probe: the run over engines,
forms and keywords (``run``), the cases it sends (``cases``), its records
(``records``), its resume journal (``journal``), the server verdicts
(``server``) and the techniques that decide them (greedy ``twins``,
``logprobs``, the tools API's modes, ``tools``), and its
report (``markdown``)."""

from conformbench.audits.probe.run import (
    PROBE_FORMAT,
    EngineProbe,
    KeywordResult,
    ProbeConfig,
    ProbeReport,
    ProbeSample,
    probe_steps,
    run_probe,
    select_cases,
    write_probe,
)

__all__ = [
    "PROBE_FORMAT",
    "EngineProbe",
    "KeywordResult",
    "ProbeConfig",
    "ProbeReport",
    "ProbeSample",
    "probe_steps",
    "run_probe",
    "select_cases",
    "write_probe",
]
