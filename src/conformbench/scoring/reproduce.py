"""A published replay against its rerun on this machine (``conformbench
reproduce REPLAY``): the share of identical texts, the verdicts that flipped
and each headline metric's shift with its paired interval.

Greedy texts are bit-identical only on the same llama.cpp build, CPU
features and thread count; the replay headers' build facts say whether that
holds (``scoring.builds``), and the numbers here say how much it mattered.
"""

from __future__ import annotations

from pydantic import Field

from conformbench.records.base import FrozenRecord
from conformbench.scoring.against import AgainstData, Paired, against_data
from conformbench.scoring.builds import build_differences
from conformbench.scoring.load import LoadedRun
from conformbench.scoring.percent import pct
from conformbench.scoring.table import ScoredGeneration

__all__ = ["Flip", "Reproduction", "compare_reproduction", "reproduction_lines"]


class Flip(FrozenRecord):
    """One answer whose verdict (correct or not) changed on the rerun."""

    task: str
    model: str
    item_id: str
    condition: str
    sample: int
    published: bool
    rerun: bool


class Reproduction(FrozenRecord):
    published: str
    rerun: str
    #: generations on both sides (same key), and of those with the same text
    paired: int
    identical: int
    #: published generations without a rerun (a --n subset, an exclusion)
    unmatched: int
    flips: list[Flip]
    #: each headline metric, rerun minus published, paired by item
    shifts: AgainstData
    #: how the builds differ (empty: the same build, CPU features and threads)
    builds: list[str] = Field(default_factory=list)


def _rows(run: LoadedRun) -> dict[tuple[str, str, str, str, int], ScoredGeneration]:
    out: dict[tuple[str, str, str, str, int], ScoredGeneration] = {}
    for loaded in run.tables:
        table = loaded.table
        for cond in table.conditions:
            for row in table.column(cond):
                out[(table.task, table.model, row.item_id, cond.key, row.sample)] = row
    return out


def compare_reproduction(old: LoadedRun, new: LoadedRun, paired: Paired, detect: float) -> Reproduction:
    """Compare the published replay (``old``) and its rerun (``new``), both
    loaded, generation by generation; ``paired``: the items both hold as one
    item (``runner.ledger.paired_items``, through ``reports.rescore``)."""
    published, rerun = old.sources[0].path, new.sources[0].path
    before, after = _rows(old), _rows(new)
    both = [key for key in before if key in after]
    flips = [Flip(task=k[0], model=k[1], item_id=k[2], condition=k[3], sample=k[4],
                  published=bool(before[k].score.correct), rerun=bool(after[k].score.correct))
             for k in both
             if before[k].score.correct is not None and before[k].score.correct != after[k].score.correct]
    shifts = against_data(new, old, detect, paired).model_copy(update={"from_label": "published", "to_label": "rerun"})
    builds = build_differences([(published, old.sources[0].build), ("this machine", new.sources[0].build)])
    return Reproduction(published=published, rerun=rerun, paired=len(both),
                        identical=sum(before[k].text == after[k].text for k in both),
                        unmatched=len(before) - len(both), flips=flips, shifts=shifts, builds=builds)


def reproduction_lines(rep: Reproduction, shown: int = 20) -> list[str]:
    """The comparison for the terminal."""
    share = rep.identical / rep.paired if rep.paired else 0.0
    lines = [f"reproduce: {rep.identical}/{rep.paired} answers have the identical text ({pct(share)}) "
             f"rerunning {rep.published} into {rep.rerun}"]
    if rep.unmatched:
        lines.append(f"  {rep.unmatched} published generation(s) were not rerun (a --n subset or an exclusion)")
    lines += [f"  build differs: {b}" for b in rep.builds] or [
        "  same build, CPU features and threads as recorded: greedy texts should all be identical"]
    lines.append(f"  verdicts flipped: {len(rep.flips)}")
    for f in rep.flips[:shown]:
        lines.append(f"    {f.task} {f.item_id} {f.condition}"
                     + (f" sample {f.sample}" if f.sample else "")
                     + f": {'right' if f.published else 'wrong'} -> {'right' if f.rerun else 'wrong'}")
    if len(rep.flips) > shown:
        lines.append(f"    ... and {len(rep.flips) - shown} more (reproduce.json)")
    for r in rep.shifts.rows:
        for d in r.deltas:
            lo, hi = d.ci95
            lines.append(f"  {r.task} {r.condition}: {d.metric} {pct(d.from_rate)} -> {pct(d.to_rate)}, "
                         f"shift {100 * d.delta:+.1f} pts [{100 * lo:+.1f}, {100 * hi:+.1f}] (N={r.n}, "
                         f"{d.discordant[0]} / {d.discordant[1]} discordant)")
    return lines
