"""One comparison of item records, wherever answers are reused or merged
(a resume, a growth, a fold, ``score A B``): the ledger's ``same_item``."""

from __future__ import annotations

from conformbench.records.items import Item
from conformbench.runner.ledger.content import same_item


def test_an_item_read_twice_with_a_nan_is_the_same_item() -> None:
    # two reads of one record (as pydantic parses a replay line) give two NaN objects
    first, second = (Item(id="q1", input={"q": float("nan")}, target=1) for _ in range(2))
    assert first != second  # NaN != NaN, so == alone would refuse a resume of this run
    assert same_item(first, second)


def test_another_question_or_target_under_the_same_id_is_not() -> None:
    item = Item(id="q1", input={"question": "1 + 1?"}, target="2")
    assert same_item(item, Item(id="q1", input={"question": "1 + 1?"}, target="2"))
    assert not same_item(item, Item(id="q1", input={"question": "2 + 2?"}, target="2"))
    assert not same_item(item, Item(id="q1", input={"question": "1 + 1?"}, target="3"))


def test_an_equal_number_written_another_way_is_the_same_item() -> None:
    # 1 == 1.0, as the record's own equality held; their JSON texts differ
    assert same_item(Item(id="q1", input={"n": 1}, target=1), Item(id="q1", input={"n": 1.0}, target=1.0))
