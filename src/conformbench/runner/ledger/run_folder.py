"""The ledger's door: a run folder opened against a spec and its plans,
and a replay opened for ``reproduce``.

``open_run`` folds finished parts in, then decides which replay in OUT the
run continues, grows, or (with --force) moves aside, and answers what is
done, what must be redone and what grew (``RunLedger``, which also holds
the replay open for appending while the run lasts: ``with ledger:``).
``reproduction`` answers what ``reproduce`` reruns of a replay. The runner
calls these two; the rest of the package is behind them."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from conformbench.errors import UsageError
from conformbench.nofollow import no_link
from conformbench.records.replay import GenerationRecord, ReplayHeader
from conformbench.records.replay_file import REPLAY_NAME, ReplayContents, ReplayWriter, read_replay
from conformbench.records.spec import ReplaySpec, RunSpec
from conformbench.runner.ledger.content import check_content
from conformbench.runner.ledger.growth import Growth, grow_replay
from conformbench.runner.ledger.header import new_header, note_build, rerun_spec
from conformbench.runner.ledger.key import GenerationKey
from conformbench.runner.ledger.reproduce import ReproduceChoices, cut_to, reproduction_spec
from conformbench.runner.ledger.shards import Shard, fold_shards, locked, main_generations
from conformbench.runner.units import TaskPlan

__all__ = ["RunLedger", "existing_replay", "open_run", "reproduction"]

Key = tuple[str, str, str, str]


@dataclass
class RunLedger:
    """What a run folder holds for one run: the file this process appends
    to (and its writer), what is done, and what grew."""

    #: the file this process appends to: OUT/replay.jsonl, or its part's
    path: Path
    #: appends to ``path`` (a new replay: its header written first)
    writer: ReplayWriter
    #: what a larger spec added (empty: nothing grew); ``growth.redo``: the
    #: recorded generations a larger budget may have cut, made again
    growth: Growth
    #: the replay it continues (None: a new one)
    contents: ReplayContents | None = None
    #: generations folded in from finished parts (``--shard``)
    folded: int = 0
    #: the recorded answers it reuses (not failed, not redone), by unit key,
    #: then round; a part's include the main replay's, which it skips
    done: dict[Key, dict[int, GenerationRecord]] = field(default_factory=dict)
    #: (task, item id) of the item records the replay holds already
    items: set[tuple[str, str]] = field(default_factory=set)
    #: the lock on ``path`` (``shards.locked``), held until the ledger is closed
    held: ExitStack = field(default_factory=ExitStack, repr=False)

    def __enter__(self) -> RunLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        """The run is over (or failed): what was appended is flushed, the
        file closed (a crash loses at most the line being written), and the
        lock released."""
        try:
            self.writer.close()
        finally:
            self.held.close()


def open_run(spec: RunSpec, plans: list[TaskPlan], force: bool, shard: Shard | None = None) -> RunLedger:
    """The ledger of ``spec``'s run in ``spec.out``, its file locked until
    the ledger is closed (``with open_run(...) as ledger:``; another run or
    the same part elsewhere is refused at once), never through a link at the
    replay's name (``nofollow``): finished parts folded into
    OUT/replay.jsonl first (not for a part, which reads the main replay only
    to skip what it holds)."""
    path = spec.out / REPLAY_NAME if shard is None else shard.path(spec.out)
    with ExitStack() as held:
        held.enter_context(locked(path, "another run" if shard is None else f"another process running part {shard}"))
        no_link(path)
        ledger = _opened(spec, plans, force, shard, path)
        ledger.held = held.pop_all()  # the ledger releases it when closed
    return ledger


def _opened(spec: RunSpec, plans: list[TaskPlan], force: bool, shard: Shard | None, path: Path) -> RunLedger:
    header = new_header(spec)
    main = spec.out / REPLAY_NAME
    folded, loaded = fold_shards(spec.out, header, plans) if shard is None else (0, None)
    elsewhere = [] if shard is None else main_generations(main, header, plans)
    contents, growth = existing_replay(path, header, plans, force, loaded)
    return RunLedger(path, _writer(path, header, contents), growth, contents, folded,
                     _done([*elsewhere, *(contents.generations if contents else [])], growth),
                     {(rec.task, rec.item.id) for rec in contents.items} if contents else set())


def _writer(path: Path, header: ReplayHeader, contents: ReplayContents | None) -> ReplayWriter:
    if contents is None:
        return ReplayWriter.create(path, header)
    return ReplayWriter.resume(path, contents.good_size)


def _done(recorded: list[GenerationRecord], growth: Growth) -> dict[Key, dict[int, GenerationRecord]]:
    """Every recorded generation that is reused: not failed (a dead
    server...), and not one a larger budget may have cut (redone)."""
    done: dict[Key, dict[int, GenerationRecord]] = {}
    for gen in recorded:
        if gen.finish_reason != "error" and gen.unit_key not in growth.redo:
            done.setdefault(gen.unit_key, {})[gen.round] = gen
    return done


_HINT = "use a new --out directory, or --force to move the old replay aside"


def _move_aside(path: Path) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.stem}.{stamp}.jsonl.bak")
    path.rename(backup)
    return backup


def _load(path: Path, force: bool, loaded: ReplayContents | None) -> ReplayContents | None:
    try:
        return loaded or read_replay(path, links=False)
    except UsageError as exc:
        if not force:
            raise UsageError(f"{exc}; {_HINT}") from None
        return None


def _reused(contents: ReplayContents, now: ReplayHeader, plans: list[TaskPlan], force: bool) -> Growth | None:
    """The growth of ``contents`` to the spec of ``now`` (empty: the same
    generations, operational keys aside), its content checked; None when
    that is another spec, or (with ``force``, or where nothing was
    generated) other content under the same names."""
    wanted = now.spec
    same = GenerationKey.of(contents.header.spec) == GenerationKey.of(wanted)
    try:
        check_content(contents, now, plans if same else None)
    except UsageError:
        if force or not contents.generations:
            return None
        raise
    grown = Growth() if same else grow_replay(contents, wanted, plans)
    if not same and not grown:
        return None
    note_build(contents, now.build)  # this machine's build, as the new header records it
    return grown


def existing_replay(path: Path, now: ReplayHeader, plans: list[TaskPlan], force: bool,
                    loaded: ReplayContents | None = None) -> tuple[ReplayContents | None, Growth]:
    """The replay to resume (grown to a larger n, samples or budgets, or
    more arms, engines or formats, where that is all that changed, with
    what grew), or None to start afresh (moving a different run's replay
    aside only with --force). ``now``: the header a new replay of the run's
    spec would start with (its spec, this machine's build); ``loaded``: the
    replay's contents where the caller has read it already (the file is
    read once)."""
    if loaded is None and not path.exists():
        return None, Growth()
    contents = _load(path, force, loaded)
    if contents is not None and (grown := _reused(contents, now, plans, force)) is not None:
        return contents, grown
    if contents is not None and not contents.generations:
        path.unlink()  # a run that generated nothing (e.g. a model that failed to load)
        return None, Growth()
    if not force:
        raise _refusal(path, contents, now.spec)
    _move_aside(path)
    return None, Growth()


def _refusal(path: Path, contents: ReplayContents | None, wanted: ReplaySpec) -> UsageError:
    """Why ``path`` is not resumed: what differs, and what to do."""
    old, new = GenerationKey.of(contents.header.spec) if contents else None, GenerationKey.of(wanted)
    differs = old.differences(new) if old else ""
    advice = _HINT
    if old is not None and old.scoring_only(new):
        flag = "--format-assertion" if wanted.format_assertion else "--no-format-assertion"
        advice = ("they differ only in format_assertion, which changes the scoring, not the generations: "
                  f"rescore the replay with 'conformbench score {flag}'")
    return UsageError(f"{path} holds a run of a different spec{differs}; {advice}")


def reproduction(replay: Path, out: Path | str, quiet: bool, choices: ReproduceChoices,
                 n: int | None = None) -> tuple[RunSpec, list[str]]:
    """The run spec that reproduces ``replay`` into ``out`` (its tasks cut
    to the first ``n`` items each), with what the user named in place of
    what the replay named, and a line per replacement (``ledger.reproduce``)."""
    spec, notes = reproduction_spec(rerun_spec(read_replay(replay).header.spec, out, quiet), choices)
    return cut_to(spec, n), notes
