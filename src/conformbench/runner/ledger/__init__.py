"""The ledger: the one owner of a run folder's state (its replay, the
parts of a sharded run, the header), modelled on inspect_ai's ``log/``.

Its door is ``run_folder``: ``open_run(spec, plans, force, shard)``
answers what is done, what must be redone, what grew and which parts fold
in (``RunLedger``, which holds the replay open while the run lasts), and
``reproduction(replay, out, quiet, choices, n)`` what ``reproduce`` reruns.
Specs are compared through one projection only, the ``GenerationKey``
(``key``), and recorded items through their content (``content``). No
module outside this package compares specs or item records; ``records/``
keeps the record types and the low-level reader and writer.

- ``run_folder``: the door (``open_run``, ``RunLedger``, ``reproduction``),
  and the resume: continue, grow, or (with --force) move aside a replay;
- ``key``: the ``GenerationKey`` and the differences a refusal names;
- ``content``: items and datasets checked by content, not by name;
- ``growth``, ``grow_grid``: what a larger n, samples, budgets or grid adds;
- ``shards``: the parts of a sharded run, their locks, and the fold;
- ``header``: a new replay's header, and its rewriting (growth, build notes);
- ``reproduce``: the spec ``reproduce`` reruns, with the user's paths.
"""

from __future__ import annotations

from conformbench.runner.ledger.header import BUILD_NOTE, current_build, new_header
from conformbench.runner.ledger.key import GenerationKey
from conformbench.runner.ledger.reproduce import ReproduceChoices, reproduction_spec, shipped_data_path
from conformbench.runner.ledger.run_folder import RunLedger, open_run, reproduction
from conformbench.runner.ledger.shards import Shard, locked, shard_files

__all__ = ["BUILD_NOTE", "GenerationKey", "ReproduceChoices", "RunLedger", "Shard", "current_build", "locked",
           "new_header", "open_run", "reproduction", "reproduction_spec", "shard_files", "shipped_data_path"]
