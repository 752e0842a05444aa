"""``conformbench import``: another tool's results read into a conformbench
replay (then ``conformbench score DIR/replay.jsonl``). This package owns the
command line of every importer: the ``import`` group with what its
subcommands share and ``validbutwrong`` (``group``), Inspect AI logs
(``inspect_logs``), lm-eval's samples (``lm_eval_samples``) and outputs
generated anywhere (``outputs_file``). The reading itself is
``conformbench.importers``'."""

from __future__ import annotations

import typer

from conformbench.cli.imports import group, inspect_logs, lm_eval_samples, outputs_file

__all__ = ["register"]

#: the modules whose commands ``import`` holds, in the order its help lists them
SUBCOMMANDS = (group, inspect_logs, lm_eval_samples, outputs_file)


def register(app: typer.Typer) -> None:
    """Add the ``import`` group, with every subcommand, to ``app``."""
    group.register(app)
