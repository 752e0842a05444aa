"""Real parts for testing what conformbench reports: servers that misbehave
on purpose (``schema_server.SchemaServer``) and a real vLLM
(``vllm_server.VllmServer``), an arm's policy walked over one item
with the model's answers given (``policy_walk.walk_policy``), and a child
process (or its process group) stopped for good: SIGTERM, a grace, SIGKILL
(``process.stop_process``). Nothing here is imported by the rest of the
package; a test or a user's own check imports it."""

from __future__ import annotations

from conformbench.testing.policy_walk import PolicyWalk, walk_policy
from conformbench.testing.process import stop_process
from conformbench.testing.schema_server import BEHAVIOURS, SchemaServer, scripted_answer
from conformbench.testing.vllm_server import VllmServer, vllm_missing

__all__ = ["BEHAVIOURS", "PolicyWalk", "SchemaServer", "VllmServer", "scripted_answer", "stop_process",
           "vllm_missing", "walk_policy"]
