"""The public face of arms as policies (``conformbench.arms``, the runner's
turns, internal): the decorator that registers a policy, what it is given
(``ArmContext``, the ``TurnOutcome`` of each turn so far) and what it returns
(a ``TurnPlan`` or None), and the three pieces that walk a policy over one
item by hand, as the runner does (``plan_task``, ``UnitContext``,
``outcome_of``). docs/extending.md shows them in use.

Like ``conformbench`` itself, this module only re-exports: the modules
behind it may change, these names may not without a note."""

from __future__ import annotations

from conformbench.arms import ArmContext, policy
from conformbench.records.rounds import TurnOutcome, TurnPlan
from conformbench.runner.turns import outcome_of
from conformbench.runner.units import UnitContext, plan_task

__all__ = ["ArmContext", "TurnOutcome", "TurnPlan", "UnitContext", "outcome_of", "plan_task", "policy"]
