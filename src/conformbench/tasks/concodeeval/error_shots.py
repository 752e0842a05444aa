"""Few-shot examples picked from zero-shot errors (``--shots-from REPLAY``).

The paper: "we identify errors from the zero-shot setting, then select shots
similar to the most frequent errors". Given the error profile of a zero-shot
run (``error_profile``), each test item gets shots chosen one keyword at a
time from a list of target keywords:

1. the keywords the item's own schema got wrong zero-shot (most often first),
2. the most frequent failing keywords of the whole run (the top
   ``FREQUENT_KEYWORDS``) that the item's schema also has,
3. the rest of those most frequent failing keywords.

For each target keyword not yet shown by an earlier shot, the shot is the
candidate schema that has that keyword (as a violable constraint) and is
most similar to the failures: a non-empty sample first, then the root type
most failing samples had, then a JSON length closest to the failing schemas'
median, then the shorter, then the id. A generation shot shows the oracle's
valid sample; the validation "no" shot shows a violation of the target
keyword, and its "yes" shot is the candidate most similar to the failures.

Never the item's own schema (by id or by identical content). Where targets
run out, or the replay has no failure at all, the static choice
(``ShotPool``) fills in; every shot records why it was picked.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue
from conformbench.tasks.concodeeval.error_profile import ErrorProfile, canonical, root_name, schema_size
from conformbench.tasks.concodeeval.shots import GENERATION_SHOTS, CaseLike, Shot, ShotPool

__all__ = [
    "FREQUENT_KEYWORDS",
    "ErrorShots",
    "ShotChoice",
    "ShotChooser",
    "StaticShots",
    "Target",
]

#: how many of the run's most frequent failing keywords are targets
FREQUENT_KEYWORDS = 5


@dataclass(frozen=True)
class ShotChoice:
    """The shots of one test item and how they were chosen."""

    shots: tuple[Shot, ...]
    #: "static" | "zero-shot errors" | "static: <why the errors gave nothing>"
    selection: str = "static"
    #: the error replay's sha256 (None for the plain static choice)
    source_sha256: str | None = None

    def meta(self) -> dict[str, JSONValue]:
        """Item meta fields (none for the plain static choice, so those
        items stay what they were before error-driven shots existed)."""
        if self.source_sha256 is None:
            return {}
        return {
            "shot_selection": self.selection,
            "shot_reasons": [s.reason for s in self.shots],
            "shots_from_sha256": self.source_sha256,
        }


class ShotChooser(Protocol):
    def generation(self, case: CaseLike, k: int = GENERATION_SHOTS) -> ShotChoice: ...

    def validation(self, case: CaseLike) -> ShotChoice: ...


@dataclass(frozen=True)
class StaticShots:
    """The fixed choice of ``ShotPool`` (short schemas, array roots)."""

    pool: ShotPool

    def generation(self, case: CaseLike, k: int = GENERATION_SHOTS) -> ShotChoice:
        return ShotChoice(self.pool.generation(case.id, k))

    def validation(self, case: CaseLike) -> ShotChoice:
        return ShotChoice(self.pool.validation(case.id))


@dataclass(frozen=True)
class Target:
    keyword: str
    why: str


def _keywords(case: CaseLike) -> set[str]:
    """Keywords the case has as violable constraints (oracle-isolated)."""
    return {str(i.keyword) for i in case.invalid_instances}


class ErrorShots:
    """Shots similar to the most frequent zero-shot errors of ``profile``."""

    def __init__(self, pool: ShotPool, profile: ErrorProfile) -> None:
        self.pool = pool
        self.profile = profile
        self._ranked = sorted(pool.candidates, key=self._similarity)
        self._texts = {c.id: canonical(c.schema) for c in self._ranked}

    # -- ranking ------------------------------------------------------------

    def targets(self, case: CaseLike) -> list[Target]:
        p = self.profile
        out: list[Target] = []
        own = p.errors_of(case.id, case.schema)
        if own is not None:
            out += [Target(kw, f"{kw} failed on this schema zero-shot ({n} of {own.generations} samples)")
                    for kw, n in own.keywords]
        frequent = p.top_keywords(FREQUENT_KEYWORDS)
        present = _keywords(case)
        out += [Target(kw, f"{kw} is a frequent zero-shot failure ({n} of {p.failures} failing "
                           "samples) and in this schema") for kw, n in frequent if kw in present]
        out += [Target(kw, f"{kw} is a frequent zero-shot failure ({n} of {p.failures} failing "
                           "samples)") for kw, n in frequent]
        first = {t.keyword: t for t in reversed(out)}  # the earliest reason per keyword
        return [first[kw] for kw in dict.fromkeys(t.keyword for t in out)]

    def _similarity(self, case: CaseLike) -> tuple[bool, bool, float, int, str]:
        size = schema_size(case.schema)
        median = self.profile.median_size or size
        return (
            case.valid_instance in ([], {}),
            root_name(case.schema) != self.profile.dominant_root,
            round(abs(math.log(max(size, 1) / max(median, 1))), 6),
            size,
            case.id,
        )

    def _candidates(self, case: CaseLike, taken: set[str]) -> Iterator[CaseLike]:
        """Candidates most similar to the failures first, never ``case``'s
        own schema nor one in ``taken``."""
        own = canonical(case.schema)
        for cand in self._ranked:
            if cand.id == case.id or cand.id in taken or self._texts[cand.id] == own:
                continue
            yield cand

    def _looks(self, cand: CaseLike) -> str:
        root = root_name(cand.schema)
        like = " like most failing samples" if root == self.profile.dominant_root else ""
        return (f"{root} root{like}; {schema_size(cand.schema)} chars of JSON "
                f"(failing median {self.profile.median_size})")

    # -- choices ------------------------------------------------------------

    def _fallback(self, why: str) -> str:
        return f"static: {why} in {self.profile.source}"

    def generation(self, case: CaseLike, k: int = GENERATION_SHOTS) -> ShotChoice:
        sha = self.profile.sha256
        if self.profile.failures == 0:
            return ShotChoice(self.pool.generation(case.id, k), self._fallback("no zero-shot errors"), sha)
        chosen: list[Shot] = []
        shown: set[str] = set()
        for target in self.targets(case):
            if len(chosen) == k:
                break
            if target.keyword in shown:
                continue
            taken = {s.schema_id for s in chosen}
            cand = next((c for c in self._candidates(case, taken) if target.keyword in _keywords(c)), None)
            if cand is None:
                continue
            reason = f"shows {target.keyword}: {target.why}; {self._looks(cand)}"
            chosen.append(self.pool.shot(cand, cand.valid_instance, reason))
            shown |= _keywords(cand)
        if not chosen:
            return ShotChoice(self.pool.generation(case.id, k),
                              self._fallback("no candidate shows a failing keyword"), sha)
        if len(chosen) < k:
            fill = self.pool.generation(case.id, k - len(chosen), {s.schema_id for s in chosen})
            chosen += [replace(s, reason=f"static fill: {s.reason}") for s in fill]
        return ShotChoice(tuple(chosen), "zero-shot errors", sha)

    def validation(self, case: CaseLike) -> ShotChoice:
        sha = self.profile.sha256
        if self.profile.failures == 0:
            return ShotChoice(self.pool.validation(case.id), self._fallback("no zero-shot errors"), sha)
        yes_case = next(self._candidates(case, set()), None)
        if yes_case is None:
            raise UsageError("not enough usable schemas for validation shots")
        yes = self.pool.shot(yes_case, yes_case.valid_instance,
                             f"valid sample similar to the failures: {self._looks(yes_case)}", answer="yes")
        for target in self.targets(case):
            for cand in self._candidates(case, {yes_case.id}):
                if target.keyword not in _keywords(cand):
                    continue
                inv = self.pool.invalid_for(cand, target.keyword)
                if inv is not None:
                    reason = f"violates {target.keyword}: {target.why}; {self._looks(cand)}"
                    no = self.pool.shot(cand, inv.instance, reason, answer="no", keyword=inv.keyword)
                    return ShotChoice((yes, no), "zero-shot errors", sha)
        static = self.pool.validation(case.id)
        return ShotChoice(static, self._fallback("no candidate violates a missed keyword"), sha)
