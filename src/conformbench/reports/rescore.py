"""Replays to scores, the ledger deciding which items are the same: the
front half of ``conformbench score`` (``score_replays``), of ``--against``
and of ``reproduce``'s comparison.

Scoring and the runner share a layer, so scoring cannot ask the ledger
whether the replays it merges hold the same items; this layer, above both,
reads them through the ledger (``runner.ledger.checked_replays``: an item
id recorded with two contents is refused, in the ledger's words) and hands
scoring the checked items; the pairs of ``--against`` and ``reproduce`` are
the ledger's too (``runner.ledger.paired_items``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformbench.records.results import ScoredRun
from conformbench.runner.ledger import checked_replays, paired_items
from conformbench.scoring.against import against_data
from conformbench.scoring.load import LoadedRun, load_replays
from conformbench.scoring.paired import DEFAULT_DETECT
from conformbench.scoring.reproduce import Reproduction, compare_reproduction
from conformbench.scoring.score import score_loaded, with_against

__all__ = ["compare_rerun", "loaded_replays", "score_replays"]


def loaded_replays(paths: Sequence[Path], format_assertion: bool | None = None,
                   task_params: dict[str, Any] | None = None) -> LoadedRun:
    """The replays at ``paths`` read, their items checked, and scored per
    table (``scoring.load.load_replays``)."""
    return load_replays(checked_replays(paths), format_assertion, task_params)


def score_replays(paths: list[Path], format_assertion: bool | None = None,
                  detect: float = DEFAULT_DETECT, against: list[Path] | None = None,
                  task_params: dict[str, Any] | None = None) -> ScoredRun:
    """Score replay files. ``format_assertion``: check ``format`` (True) or
    read it as an annotation (False); None: as the replays' run specs say.
    ``detect``: the difference (a share) each comparison's items-needed is for.
    ``against``: replays of another decoding of the same items (``--against``),
    paired with these by item and condition in a run section."""
    read = checked_replays(paths)
    loaded = load_replays(read, format_assertion, task_params)
    run = score_loaded(loaded, detect)
    if not against:
        return run
    theirs = checked_replays(against)
    paired = paired_items([items for _, items in read], [items for _, items in theirs])
    return with_against(run, against_data(loaded, load_replays(theirs, loaded.format_assertion), detect, paired))


def compare_rerun(published: Path, rerun: Path, detect: float) -> Reproduction:
    """Score both replays and compare them generation by generation
    (``scoring.reproduce.compare_reproduction``)."""
    old, new = checked_replays([published]), checked_replays([rerun])
    paired = paired_items([items for _, items in new], [items for _, items in old])
    return compare_reproduction(load_replays(old), load_replays(new), paired, detect)
