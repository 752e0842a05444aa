"""Progress display for long commands: a rich bar on stderr (done/total,
rate, ETA) on a terminal; plain lines at most every ``LINE_INTERVAL_S``
seconds when stderr is a log file (nohup, CI), since rich draws nothing
there until the end; nothing at all with --quiet."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["ETA_MIN_UNITS", "LINE_INTERVAL_S", "PIPE_WIDTH", "RunProgress", "console", "progress_line", "stderr_console"]

#: seconds between two plain progress lines (stderr not a terminal)
LINE_INTERVAL_S = 30.0
#: units done in this session before a log line gives an ETA: one unit's
#: time (the first also pays for warm-up) predicts the rest badly
ETA_MIN_UNITS = 5


#: the width rich lays tables out in when output is not a terminal (a pipe,
#: a log file): wide enough that no table is cut or wrapped to fit
PIPE_WIDTH = 1000


def console(stderr: bool = False, quiet: bool = False, soft_wrap: bool = False) -> Console:
    """A rich Console for a command's output: a terminal's own width, and
    whole lines when piped or logged (rich would lay tables out in 80
    columns there, cutting cells with an ellipsis)."""
    out = Console(stderr=stderr, quiet=quiet, soft_wrap=soft_wrap)
    if not out.is_terminal:
        out.width = PIPE_WIDTH
    return out


def stderr_console(quiet: bool = False) -> Console:
    # soft wrap: a log file or a wide terminal gets each line whole (rich
    # hard-wraps at 80 columns when stderr is not a terminal, splitting labels)
    return console(stderr=True, quiet=quiet, soft_wrap=True)


class RunProgress:
    """Counts work units; ``advance`` after each batch is written."""

    def __init__(self, total: int, done: int = 0, quiet: bool = False, unit: str = "items×conditions") -> None:
        #: what is counted, plural, said after the count ("8/18 items×conditions", "3/10 schemas")
        self._unit = unit
        self._started = time.monotonic()
        self._console = stderr_console(quiet)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(unit),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self._console,
            disable=quiet,
            transient=False,
        )
        self._task: TaskID = self._progress.add_task("run", total=total, completed=done, rate="")
        self._total = total
        self._done = done
        self._fresh = 0
        self._description = "run"
        self._plain = not quiet and not self._console.is_terminal
        self._last_line = time.monotonic()

    def describe(self, text: str) -> None:
        self._description = text
        self._progress.update(self._task, description=escape(text))  # an arm's [mode] is text, not markup

    def stage(self, text: str) -> None:
        """A step that may take a while before any unit is done (loading a
        model, the canary): the bar shows it, and a log gets a line at once,
        so a log is never silent while nothing is counted yet."""
        self.describe(text)
        if self._plain:
            self.log(text)

    def advance(self, count: int, elapsed_s: float) -> None:
        """``elapsed_s``: seconds spent generating so far in this session
        (the rate counts this session's generations only, not resumed ones)."""
        self._fresh += count
        self._done += count
        rate = f"{self._fresh / elapsed_s:.2f}/s" if elapsed_s > 0 else ""
        self._progress.update(self._task, advance=count, rate=rate)
        now = time.monotonic()
        if self._plain and (now - self._last_line >= LINE_INTERVAL_S or self._done >= self._total):
            self._last_line = now
            self.log(progress_line(self._description, self._done, self._total,
                                   self._fresh / elapsed_s if elapsed_s > 0 else 0.0, self._unit, self._fresh))

    def step(self, description: str, count: int) -> None:
        """``advance`` timed from this bar's start, for commands whose every
        unit of work is done in this session (a check, a probe, a build)."""
        if description != self._description:
            self.describe(description)
        self.advance(count, time.monotonic() - self._started)

    def log(self, message: str) -> None:
        self._console.print(message, highlight=False, markup=False)

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


def progress_line(description: str, done: int, total: int, rate: float, unit: str = "items×conditions",
                  fresh: int | None = None) -> str:
    """One log line: ``desc: 160/2000 items×conditions (8.0%), 0.08/s, eta
    6h23m`` (the count is the whole run's; ``unit``: what is counted,
    plural); ``fresh``: units done in this session (fewer than
    ``ETA_MIN_UNITS``: no ETA yet, it would mean nothing)."""
    share = 100.0 * done / total if total else 100.0
    left = total - done
    eta = _duration(left / rate) if rate > 0 and left > 0 else ("0s" if left <= 0 else "?")
    if left > 0 and fresh is not None and fresh < ETA_MIN_UNITS:
        eta = f"known after {ETA_MIN_UNITS} done"
    return f"{description}: {done}/{total} {unit} ({share:.1f}%), {rate:.2f}/s, eta {eta}"


def _duration(seconds: float) -> str:
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
