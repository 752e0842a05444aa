"""Replays that ship with the package: full-size runs generated once with the
embedded model, so every demo table rescores in seconds without a model."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from conformbench.errors import UsageError
from conformbench.registry import did_you_mean

__all__ = ["shipped_replay", "shipped_replays"]


def _folder() -> Path:
    return Path(str(resources.files("conformbench") / "data" / "replays"))


def shipped_replays() -> dict[str, Path]:
    """Name (file stem) -> path of every shipped replay, in name order."""
    folder = _folder()
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.jsonl"))}


def shipped_replay(name: str) -> Path:
    """The shipped replay called ``name``; UsageError with did-you-mean."""
    found = shipped_replays()
    if name not in found:
        known = ", ".join(found) or "none"
        raise UsageError(
            f"no shipped replay {name!r}{did_you_mean(name, list(found))}; known: {known}")
    return found[name]
