"""Our BFCL v4 verdicts against the official checker's, on every item of the
eight shipped categories and a set of recorded answers to each (right,
right in reverse order, a changed value, the wrong function, a missing
call, an extra call, malformed JSON, a fenced block, prose around the
calls, parameters as a string; on irrelevance: no call, prose, a call,
malformed).

The official verdicts are data (``data/bfcl_v4_official_verdicts.jsonl``),
made by ``data/bfcl_v4_official_driver.py`` with BFCL's own decoder and
``ast_checker`` run outside the repository (the recipe is in its
docstring). The answers are rebuilt here by the same driver's rules and
checked by digest, so the golden file need not hold the texts.
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conformbench.tasks.bfcl.calls import CATEGORIES
from conformbench.tasks.bfcl.calls.answer_reading import read_calls
from conformbench.tasks.bfcl.calls.verdicts import check_calls
from conformbench.tasks.bfcl.v4_data import load_category

DATA = Path(__file__).resolve().parent / "data"
SHIPPED = Path(__file__).resolve().parents[3] / "src" / "conformbench" / "data" / "bfcl-v4"


@cache
def _driver() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bfcl_v4_official_driver", DATA / "bfcl_v4_official_driver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def _golden() -> dict[tuple[str, str], dict[str, Any]]:
    lines = (DATA / "bfcl_v4_official_verdicts.jsonl").read_text(encoding="utf-8").split("\n")
    assert "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8" in json.loads(lines[0])["provenance"]
    rows = [json.loads(line) for line in lines[1:] if line]
    return {(r["id"], r["case"]): r for r in rows}


@pytest.mark.parametrize("category", CATEGORIES)
def test_our_verdicts_equal_the_official_checkers_on_every_recorded_answer(category: str) -> None:
    driver, golden = _driver(), _golden()
    name = f"BFCL_v4_{category}.json"
    rows = driver._rows(SHIPPED / name)
    truths = {} if category == "irrelevance" else \
        {r["id"]: r["ground_truth"] for r in driver._rows(SHIPPED / "possible_answer" / name)}
    items = {item.id: item for item in load_category(category)}
    compared: Counter[bool] = Counter()
    differ: list[str] = []
    for row in rows:
        texts = driver.answer_texts(row, truths.get(row["id"]))
        for case, text in texts.items():
            official = golden[(row["id"], case)]
            assert official["sha256"] == driver.digest(text), f"{row['id']} {case}: the answer changed"
            ours = check_calls(items[row["id"]], read_calls(text)).correct
            compared[ours] += 1
            if ours != official["valid"]:
                differ.append(f"{row['id']} {case}: ours {ours}, official {official['valid']} "
                              f"({official['error_type']})")
    assert not differ, "\n".join(differ[:20])
    expected = sum(1 for key in golden if key[0] in items)
    assert sum(compared.values()) == expected
    assert compared[True] and compared[False]  # both verdicts occur: the comparison can fail
