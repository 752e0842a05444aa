"""``conformbench engines``: the group (``group``: ``list``, ``probe`` and
``check``), ``engines cost`` (``cost_command``) and the probe's terminal
table (``probe_table``). Each command parses its flags into its ``api``
options record, calls ``api.probe``, ``api.check`` or ``api.cost`` and
prints the result."""

from conformbench.cli.engines.group import engine_statuses, engines_app, engines_table, register

__all__ = ["engine_statuses", "engines_app", "engines_table", "register"]
