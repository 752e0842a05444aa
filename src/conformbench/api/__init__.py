"""The library behind every command that runs something: what ``run``,
``score`` and ``reproduce`` do (``runs``), what ``engines probe`` and
``engines check`` do (``audits``) and what ``engines cost`` does
(``serving``). Each takes its command's options and returns a typed
result; the command line only parses flags and prints.

Importing it is light: each function imports the runner, audits or serving
modules it needs when it runs (tests/test_lazy_imports.py).
"""

from conformbench.api.audits import CheckOptions, CheckResult, ProbeOptions, ProbeResult, check, probe
from conformbench.api.runs import RunOptions, generate, reproduce, run, run_options, score
from conformbench.api.serving import CostOptions, CostResult, cost

__all__ = [
    "CheckOptions",
    "CheckResult",
    "CostOptions",
    "CostResult",
    "ProbeOptions",
    "ProbeResult",
    "RunOptions",
    "check",
    "cost",
    "generate",
    "probe",
    "reproduce",
    "run",
    "run_options",
    "score",
]
