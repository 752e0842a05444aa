"""The ledger: the one owner of a run folder's state (its replay, the
parts of a sharded run, the header), modelled on inspect_ai's ``log/``.

Its door is ``run_folder``: ``open_run(spec, plans, force, shard)``
answers what is done, what must be redone, what grew and which parts fold
in (``RunLedger``, which holds the replay open while the run lasts), and
``reproduction(replay, out, quiet, choices, n)`` what ``reproduce`` reruns.
Specs are compared through one projection only, the ``GenerationKey``
(``key``), and recorded items through one comparison, ``same_item``
(``content``). No module outside this package compares specs or item records; ``records/``
keeps the record types and the low-level reader and writer.

Scoring merges replays too (``score A B``, ``--against``, ``reproduce``),
and shares a layer with the runner, so it cannot ask the ledger. The layer
above both asks instead (``reports.rescore``: read and checked by
``checked_replays``, paired by ``paired_items``) and hands scoring the
checked items, which scoring merges without comparing them: one owner of
the decision "are these the same items?", its refusals worded here.

- ``run_folder``: the door (``open_run``, ``RunLedger``, ``reproduction``),
  and the resume: continue, grow, or (with --force) move aside a replay;
- ``key``: the ``GenerationKey`` and the differences a refusal names;
- ``content``: items and datasets checked by content, not by name, for a
  resume, a fold or a scoring's merge;
- ``growth``, ``grow_grid``: what a larger n, samples, budgets or grid adds;
- ``shards``: the parts of a sharded run, their locks, and the fold;
- ``header``: a new replay's header, and its rewriting (growth, build notes);
- ``reproduce``: the spec ``reproduce`` reruns, with the user's paths.
"""

from __future__ import annotations

from conformbench.runner.ledger.content import ReplayItems, checked_replays, paired_items
from conformbench.runner.ledger.header import BUILD_NOTE, current_build, new_header
from conformbench.runner.ledger.key import GenerationKey
from conformbench.runner.ledger.reproduce import ReproduceChoices, reproduction_spec, shipped_data_path
from conformbench.runner.ledger.run_folder import RunLedger, open_run, reproduction
from conformbench.runner.ledger.shards import Shard, locked, shard_files

__all__ = ["BUILD_NOTE", "GenerationKey", "ReplayItems", "ReproduceChoices", "RunLedger", "Shard", "checked_replays",
           "current_build", "locked", "new_header", "open_run", "paired_items", "reproduction", "reproduction_spec",
           "shard_files", "shipped_data_path"]
