"""Real parts for testing what conformbench reports: servers that misbehave
on purpose (``schema_server.SchemaServer``). Nothing here is imported by the
rest of the package; a test or a user's own check imports it."""

from __future__ import annotations

from conformbench.testing.schema_server import BEHAVIOURS, SchemaServer, scripted_answer

__all__ = ["BEHAVIOURS", "SchemaServer", "scripted_answer"]
