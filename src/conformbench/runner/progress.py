"""Progress display for long commands: a rich bar on stderr (done/total,
rate, ETA), or nothing at all with --quiet."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["RunProgress", "stderr_console"]


def stderr_console(quiet: bool = False) -> Console:
    return Console(stderr=True, quiet=quiet)


class RunProgress:
    """Counts work units; ``advance`` after each batch is written."""

    def __init__(self, total: int, done: int = 0, quiet: bool = False) -> None:
        self._console = stderr_console(quiet)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self._console,
            disable=quiet,
            transient=False,
        )
        self._task: TaskID = self._progress.add_task("run", total=total, completed=done, rate="")
        self._start_done = done
        self._fresh = 0

    def describe(self, text: str) -> None:
        self._progress.update(self._task, description=text)

    def advance(self, count: int, elapsed_s: float) -> None:
        """``elapsed_s``: seconds spent generating so far in this session
        (the rate counts this session's generations only, not resumed ones)."""
        self._fresh += count
        rate = f"{self._fresh / elapsed_s:.2f} gen/s" if elapsed_s > 0 else ""
        self._progress.update(self._task, advance=count, rate=rate)

    def log(self, message: str) -> None:
        self._console.print(message, highlight=False)

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()
