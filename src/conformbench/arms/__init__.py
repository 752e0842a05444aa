"""Decoding arms: the interface (``base``: ``Arm``, ``ArmContext``, the
``policy`` decorator, the ``arms`` registry), the four one-answer arms
(``one_answer``), the loops as policy factories (``multi_round``: repair,
resample, fallback) and think_then_constrain (``think``).

What an arm's author uses is re-exported here (this module defines
nothing): the decorator, what a policy is given (``ArmContext``, each
turn's ``TurnOutcome`` and its ``Verdict``) and returns (a ``TurnPlan`` of a
``TurnKind``, or None), and the factories a variant is made from.
docs/extending.md shows them in use; ``conformbench.testing.walk_policy``
walks a policy over one item by hand."""

from __future__ import annotations

from conformbench.arms.base import Arm, ArmContext, MadePolicy, Policy, Recipe, made, policy, split_arm_spec
from conformbench.arms.multi_round import (
    FEEDBACK_ERRORS,
    RESAMPLE_SEED_STEP,
    RESAMPLE_TEMPERATURE,
    Feedback,
    fallback,
    feedback_request,
    repair,
    repair_wording,
    resample,
)
from conformbench.records.rounds import ErrorNote, TurnKind, TurnOutcome, TurnPlan, Verdict

__all__ = [
    "FEEDBACK_ERRORS",
    "RESAMPLE_SEED_STEP",
    "RESAMPLE_TEMPERATURE",
    "Arm",
    "ArmContext",
    "ErrorNote",
    "Feedback",
    "MadePolicy",
    "Policy",
    "Recipe",
    "TurnKind",
    "TurnOutcome",
    "TurnPlan",
    "Verdict",
    "fallback",
    "feedback_request",
    "made",
    "policy",
    "repair",
    "repair_wording",
    "resample",
    "split_arm_spec",
]
