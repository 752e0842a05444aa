"""Report sections: task-specific analyses added to every report.

HOW TO ADD A SECTION (a worked example: docs/extending.md, "A report section"):
  1. Create a module (in conformbench: ``conformbench/scoring/<feature>/sections.py``
     and its name in the ``sections`` table below; elsewhere: your own module,
     imported before scoring, or an entry point ``conformbench.report_sections``).
  2. Define a pydantic model for the section's data (JSON-able; it is stored
     in report.json and reloaded to render Markdown/HTML from scores alone).
  3. Subclass ``Section[YourData]``, set ``name``, ``title`` and ``data_model``,
     implement ``applies_to(task_name)`` and ``compute(table)`` (``table`` is a
     ``ScoredTable``: one task on one model, exclusions already removed; read
     ``table.item_ids``, ``table.conditions``, ``table.column(cond)`` rows with
     ``.score`` (ItemScore), ``.item`` (Item), ``.finish_reason``...).
  4. Optionally override ``metrics(data)`` -> {"gen_acc[json->json]": 0.42, ...}
     (usable in ``--fail-if``; list the names in ``gate_metrics``) and ``markdown(data)`` / ``html(data)``
     (``html`` may embed inline SVG or base64 PNG; no external URLs, no JS).
  5. Decorate the class with ``@sections.register("<name>")``.

A RUN SECTION compares across the whole scored run (every task and model,
e.g. one table over models): subclass ``RunSection[YourData]`` instead,
implement ``compute(run)`` (a ``ScoredRun``; return None when the run has
nothing for it), optionally ``markdown``/``html``, and decorate it with
``@run_sections.register("<name>")``. Reports show run sections once, after
the per-(task, model) results; report.json stores them in ``ScoredRun.sections``.
"""

from __future__ import annotations

import html as _html
import json
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from conformbench.records.markdown_escape import md_text
from conformbench.records.results import ScoredRun
from conformbench.registry import Registry
from conformbench.scoring.table import ScoredTable

__all__ = ["RunSection", "Section", "md_text", "run_sections", "sections"]

D = TypeVar("D", bound=BaseModel)


class _Rendered(Generic[D]):
    """What every section kind shares: typed data, its rendering, reloading."""

    name: ClassVar[str]
    title: ClassVar[str]
    data_model: type[D]

    def markdown(self, data: D) -> str:
        """Markdown body of the section (the report adds the heading)."""
        return "```json\n" + json.dumps(data.model_dump(mode="json"), indent=2) + "\n```\n"

    def html(self, data: D) -> str:
        """HTML body of the section (the report adds the heading)."""
        text = json.dumps(data.model_dump(mode="json"), indent=2)
        return f"<pre>{_html.escape(text)}</pre>"

    def terminal(self, data: D) -> list[str]:
        """Lines for the terminal summary (default: none; the section is in
        report.md and report.html)."""
        return []

    def load(self, stored: object) -> D:
        """Rebuild the typed data from its JSON form in report.json."""
        return self.data_model.model_validate(stored)


class Section(_Rendered[D], ABC):
    """One task-specific analysis of a ScoredTable."""

    @abstractmethod
    def applies_to(self, task_name: str) -> bool:
        """Whether the section is computed for this task."""

    @abstractmethod
    def compute(self, table: ScoredTable) -> D | None:
        """The section's data for one task on one model; None when the table
        has nothing for it (the report then leaves the section out)."""

    #: the names ``metrics`` keys its values by: ``--fail-if`` refuses any
    #: other before a run starts, and scoring refuses a section that emits one
    gate_metrics: ClassVar[tuple[str, ...]] = ()

    #: what a run needs to have ``gate_metrics``, said when a gate names one
    #: a run lacks (e.g. "the generation task")
    gate_metrics_need: ClassVar[str] = ""

    def planned_metrics(self, task_name: str, samples: int) -> tuple[str, ...]:
        """The gate metrics a run of ``task_name`` drawing ``samples``
        answers per item will have (``--fail-if`` accepts these before the
        run, and no others: the list it prints is the list it takes)."""
        return self.gate_metrics if self.applies_to(task_name) else ()

    def metrics(self, data: D) -> dict[str, float]:
        """Gate metrics keyed 'name[label]' (or 'name'), e.g. 'gen_acc[json->json]',
        each name one of ``gate_metrics``."""
        return {}

    def unmeasured(self, data: D) -> dict[str, str]:
        """Gate metrics n/a in ``data`` (left out of ``metrics``), keyed
        alike, with why: a ``--fail-if`` that matches one cannot be
        evaluated and exits 2, never passes silently."""
        return {}


class RunSection(_Rendered[D], ABC):
    """One analysis across every (task, model) result of a scored run. It
    has no gate metrics: ``--fail-if`` checks one task on one model."""

    @abstractmethod
    def compute(self, run: ScoredRun) -> D | None:
        """The section's data, or None when the run has nothing for it
        (``run.sections`` is still empty while run sections are computed)."""


# Any: a registry holds sections of every data type (Section is invariant in D)
sections: Registry[type[Section[Any]]] = Registry("report section", {
    "concodeeval_generation": "conformbench.scoring.concodeeval.sections",
    "concodeeval_validation": "conformbench.scoring.concodeeval.sections",
    "concodeeval_attention": "conformbench.scoring.concodeeval.attention_section",
    "sampling": "conformbench.scoring.sample_section",
    "cost": "conformbench.scoring.cost_section",
    "thinking": "conformbench.scoring.thinking_section",
    "bfcl_calls": "conformbench.scoring.calls_section",
    "mask_toll": "conformbench.scoring.mask_section",
})
run_sections: Registry[type[RunSection[Any]]] = Registry("run report section", {
    "concodeeval_compare": "conformbench.scoring.concodeeval.across_models",
    "decoding_against": "conformbench.scoring.against",
})


