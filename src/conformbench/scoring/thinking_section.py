"""The report section of think_then_constrain (free text, then the schema,
in one call): per condition how the thinking ended (the model wrote the
stop string, or the decoder wrote it at the thinking's budget: cut, or the
call ended before any stop string: no answer) and the answer after it
(valid, right), split by cut and not cut. Its cost columns and paired
comparisons are the other arms' (the cost and comparison tables)."""

from __future__ import annotations

from pydantic import BaseModel

from conformbench.records.markdown_escape import md_code
from conformbench.records.stored_text import answer_chars
from conformbench.scoring.concodeeval.figures import markdown_html
from conformbench.scoring.intervals import wilson
from conformbench.scoring.sections import Section, sections
from conformbench.scoring.table import ScoredGeneration, ScoredTable

__all__ = ["ThinkingArm", "ThinkingData", "ThinkingSection"]

ARM = "think_then_constrain"


class ThinkingArm(BaseModel):
    key: str
    n: int
    #: model calls per item (one: the thinking and the answer are one call)
    calls: float
    #: the model wrote the stop string itself
    closed: int
    #: the decoder wrote it: at the thinking's budget (``--think-tokens``),
    #: or in a loop (the loop stop's rule on the thinking)
    cut: int
    cut_at_budget: int
    cut_in_loop: int
    #: the call ended before any stop string (a loop, an error): no answer
    no_answer: int
    valid: int
    right: int
    valid_when_cut: int
    right_when_cut: int
    #: mean characters of thinking
    thinking_chars: float
    valid_ci95: tuple[float, float]


class ThinkingData(BaseModel):
    arms: list[ThinkingArm]


def _arm(key: str, rows: list[ScoredGeneration]) -> ThinkingArm:
    cut = [r for r in rows if r.think_cut]
    no_answer = [r for r in rows if not r.think_cut and not r.text.strip()]
    valid = sum(1 for r in rows if r.score.valid)
    return ThinkingArm(
        key=key, n=len(rows), calls=sum(len(r.rounds) for r in rows) / len(rows) if rows else 0.0,
        closed=len(rows) - len(cut) - len(no_answer), cut=len(cut), no_answer=len(no_answer),
        cut_at_budget=sum(1 for r in cut if r.think_cut == "budget"),
        cut_in_loop=sum(1 for r in cut if r.think_cut == "loop"),
        valid=valid, right=sum(1 for r in rows if r.score.correct),
        valid_when_cut=sum(1 for r in cut if r.score.valid), right_when_cut=sum(1 for r in cut if r.score.correct),
        thinking_chars=sum(answer_chars(r.thinking or "") for r in rows) / len(rows) if rows else 0.0,
        valid_ci95=wilson(valid, len(rows)),
    )


def thinking_data(table: ScoredTable) -> ThinkingData | None:
    arms = [_arm(c.key, table.column(c)) for c in table.conditions if c.arm == ARM]
    return ThinkingData(arms=arms) if arms else None


def _pct(k: int, n: int) -> str:
    return f"{k} ({100 * k / n:.1f}%)" if n else "0"


@sections.register("thinking")
class ThinkingSection(Section[ThinkingData]):
    title = "Thinking, then the schema, in one call"
    data_model = ThinkingData

    def applies_to(self, task_name: str) -> bool:
        return True

    def compute(self, table: ScoredTable) -> ThinkingData | None:
        return thinking_data(table)

    def terminal(self, data: ThinkingData) -> list[str]:
        return [f"{a.key}: {a.calls:.2f} calls/item; thinking closed by the model {a.closed}, cut by the decoder "
                f"{a.cut} ({a.cut_at_budget} at its budget, {a.cut_in_loop} in a loop), no answer {a.no_answer} "
                f"of N={a.n}; valid {a.valid}/{a.n}, right {a.right}/{a.n}"
                for a in data.arms]

    def markdown(self, data: ThinkingData) -> str:
        head = ["arm", "N", "calls/item", "stop written by the model", "cut: at the thinking budget / in a loop",
                "no stop string (no answer)", "valid [95% CI]", "right", "valid when cut", "right when cut",
                "thinking chars/item"]
        lines = ["The model thinks, writes the stop string and answers under the grammar, in one call. "
                 "A thinking that reaches its budget (`--think-tokens`), or falls into a degenerate loop, is "
                 "closed by the decoder, which writes the stop string itself: cut. Only the text after the stop "
                 "string is scored.", "",
                 "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for a in data.arms:
            lo, hi = a.valid_ci95
            cells = [f"{md_code(a.key)}", str(a.n), f"{a.calls:.2f}", _pct(a.closed, a.n),
                     f"{_pct(a.cut, a.n)}: {a.cut_at_budget} / {a.cut_in_loop}",
                     _pct(a.no_answer, a.n), f"{_pct(a.valid, a.n)} [{100 * lo:.1f}, {100 * hi:.1f}]",
                     _pct(a.right, a.n), f"{a.valid_when_cut}/{a.cut}", f"{a.right_when_cut}/{a.cut}",
                     f"{a.thinking_chars:.0f}"]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def html(self, data: ThinkingData) -> str:
        return markdown_html(self.markdown(data))
