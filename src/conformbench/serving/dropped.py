"""The schema keywords a server's grammar dropped, counted beside the cost:
for every answer made with the grammar on that parses as JSON (what a
grammar run promises), the keywords of the full schema it breaks (the
scorer's validator; ``format`` is an annotation, as in validity). A keyword
is counted once per answer however many places break it, beside how many
parsed answers were under a schema that uses it; the keyword probe
(``engines probe``) says why, one keyword at a time."""

from __future__ import annotations

from collections import Counter
from typing import Any

from conformbench.records.base import FrozenRecord
from conformbench.schemas.walk import keywords_of
from conformbench.serving.workload import CostPrompt

__all__ = ["ArmDrops", "KeywordDrop", "dropped_keywords"]

#: prompt ids named per keyword
_EXAMPLES = 5


class KeywordDrop(FrozenRecord):
    keyword: str
    #: parsed grammar-on answers that break the keyword
    broken: int
    #: parsed grammar-on answers whose schema uses the keyword
    under: int
    #: the first prompts (ids) whose answer broke it
    examples: list[str]


class ArmDrops(FrozenRecord):
    """One grammar-on arm (cache state), pooled over levels and repeats."""

    arm: str
    #: requests answered (no error)
    answered: int
    #: answers that parsed as JSON: the ones judged keyword by keyword
    parsed: int
    #: keywords broken at least once, the most broken first
    keywords: list[KeywordDrop]


def _arm(arm: str, rows: list[dict[str, Any]], prompts: list[CostPrompt]) -> ArmDrops:
    answered = [m for m in rows if m["tokens"] is not None]
    parsed = [m for m in answered if m["violated"] is not None]
    broken: Counter[str] = Counter(k for m in parsed for k in m["violated"])
    uses = [keywords_of(prompts[int(m["index"])].schema) for m in parsed]
    drops = []
    for keyword, count in sorted(broken.items(), key=lambda kv: (-kv[1], kv[0])):
        under = sum(1 for m, used in zip(parsed, uses) if keyword in used or keyword in m["violated"])
        ids = list(dict.fromkeys(prompts[int(m["index"])].id for m in parsed if keyword in m["violated"]))
        drops.append(KeywordDrop(keyword=keyword, broken=count, under=under, examples=ids[:_EXAMPLES]))
    return ArmDrops(arm=arm, answered=len(answered), parsed=len(parsed), keywords=drops)


def dropped_keywords(measured: dict[tuple[int, int, str], list[dict[str, Any]]], prompts: list[CostPrompt],
                     done: list[tuple[int, int, str]]) -> list[ArmDrops]:
    """Per grammar-on arm of the finished batches ``done``; ``measured``
    holds each request's ``request_measures`` and its prompt ``index``."""
    arms: dict[str, list[dict[str, Any]]] = {}
    for key in done:
        if key[2] != "off":
            arms.setdefault(key[2], []).extend(measured[key])
    return [_arm(arm, rows, prompts) for arm, rows in arms.items()]
