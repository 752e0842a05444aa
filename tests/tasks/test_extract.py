"""Free-text answer extraction: numbers, Answer: lines, Python calls, JSON."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from conformbench.tasks.extract import (
    MAX_TEXT_CHARS,
    NumberAnswer,
    answer_line,
    extract_number,
    find_python_call,
    normalize_text,
    parse_json_output,
    parse_python_call,
)


@pytest.mark.parametrize(
    ("text", "value", "source"),
    [
        ("\\boxed{1400} bananas to last for 2 months", Decimal(1400), "boxed"),
        ("so she makes 9 * 2 = 18 dollars.\nAnswer: 18", Decimal(18), "answer_line"),
        ("Answer: $1,234.50", Decimal("1234.50"), "answer_line"),
        ("**Answer:** 42", Decimal(42), "answer_line"),
        ("**Answer**: 42 eggs", Decimal(42), "answer_line"),
        ("Final answer: 2 * 9 = 18", Decimal(18), "answer_line"),
        ("\\boxed{3}\nAnswer: 7\nthen 9 more", Decimal(7), "answer_line"),
        ("Answer: not sure\nmaybe 12", Decimal(12), "last_number"),
        ("Answer: 5\nanswer: 6", Decimal(6), "answer_line"),
        ("The temperature is -5 degrees", Decimal(-5), "last_number"),
        ("It fell to \u22127", Decimal(-7), "last_number"),
        ("It costs -$3", Decimal(-3), "last_number"),
        ("pages 3-5", Decimal(5), "last_number"),
        ("- 5 apples", Decimal(5), "last_number"),
        ("a total of 1,000,000 people.", Decimal(1000000), "last_number"),
        ("that is 12.50.", Decimal("12.5"), "last_number"),
        ("lists 1,2,3", Decimal(3), "last_number"),
        ("\\boxed{\\frac{1}{2}} is the ratio", Decimal(1), "boxed"),
        # the number right after 'Answer:' comes first; a line that starts with
        # words names no number (gsm8k_test_113 of validbutwrong's replay)
        ("30 - 5 = 25 flowers\n\nAnswer: After 15 days, Ryan has 25 flowers.", Decimal(25),
         "last_number"),
        ("\\boxed{25}\nAnswer: After 15 days, Ryan has 25 flowers.", Decimal(25), "boxed"),
        ("Answer: 18 dollars, since 2 * 9 = 18\nAnswer: in total", Decimal(18), "answer_line"),
        ("Answer: 18 (after 3 weeks)", Decimal(18), "answer_line"),
        ("Answer: \\( 42 \\)", Decimal(42), "answer_line"),
        ("**Answer: $2,125**", Decimal(2125), "answer_line"),
        ("Answer: -3 degrees", Decimal(-3), "answer_line"),
        # a first group of more than three digits is still grouped in threes
        ("The final answer is 1080,000.", Decimal(1080000), "last_number"),
    ],
)
def test_extract_number(text: str, value: Decimal, source: str) -> None:
    found = extract_number(text)
    assert found is not None
    assert found.value == value
    assert found.source == source


@pytest.mark.parametrize("text", ["", "no digits here", "version v2 and x3", "9" * 50])
def test_extract_number_none(text: str) -> None:
    assert extract_number(text) is None


def test_number_as_json_keeps_integers_integral() -> None:
    integral = extract_number("Answer: 18.00")
    fractional = extract_number("Answer: 2.5")
    assert integral is not None and integral.as_json() == 18 and type(integral.as_json()) is int
    assert fractional is not None and fractional.as_json() == 2.5


def test_answer_line_and_normalize() -> None:
    assert answer_line("I think so.\n**Answer:** Paris **") == "Paris"
    assert answer_line("Paris") is None
    assert normalize_text("  New\n  YORK\tcity ") == "new york city"


# ----------------------------------------------------------------- Python calls


def test_parse_python_call_literals() -> None:
    call = parse_python_call(
        'math.geo.area(a=1, b=-2.5, c="x", d=[1, (2, 3)], e={"k": None}, f=True)'
    )
    assert call.name == "math.geo.area"
    assert call.arguments == {"a": 1, "b": -2.5, "c": "x", "d": [1, [2, 3]], "e": {"k": None},
                              "f": True}


def test_bare_names_read_as_strings_like_the_official_decoder() -> None:
    # BFCL's possible answers write variables as strings: data=my_data is 'my_data'
    call = parse_python_call("random_forest.train(n_estimators=100, max_depth=5, data=my_data)")
    assert call.arguments == {"n_estimators": 100, "max_depth": 5, "data": "my_data"}
    assert parse_python_call("f(x=[a, 1], y={'k': b})").arguments == {"x": ["a", 1], "y": {"k": "b"}}
    found = find_python_call("I would call lawsuit_info(case_number=XYZ123) here.").call
    assert found is not None and found.arguments == {"case_number": "XYZ123"}


def test_parse_python_call_accepts_a_one_call_list() -> None:
    assert parse_python_call("[f(x=1)]").arguments == {"x": 1}


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("f(1, x=2)", "positional"),
        ("f(x=1+2)", "not a literal"),
        ("f(x=g())", "not a literal"),
        ("f(**{'x': 1})", "kwargs"),
        ("f(x=lambda: 1)", "not a literal"),
        ("f(x=os.system)", "not a literal"),
        ("f(x=f'{1}')", "not a literal"),
        ("f(x={1, 2})", "not a literal"),
        ("f(x=b'1')", "unsupported constant"),
        ("f(x=1j)", "unsupported constant"),
        ("f(x=1e999)", "unsupported constant"),
        ("f(x={1: 2})", "dict key"),
        ("[f(x=1), g(y=2)]", "2 calls"),
        ("x = 1", "not Python"),
        ("f", "not a function call"),
        ("f()()", "not a \\(dotted\\) name"),
    ],
)
def test_parse_python_call_rejects(source: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_python_call(source)


def test_find_python_call_in_prose_and_fences() -> None:
    prose = "Sure! I will call area(base=10, height=5) to get it (in units)."
    assert find_python_call(prose).call == parse_python_call("area(base=10, height=5)")
    fenced = "Here:\n```python\nmath.factorial(number=5)\n```\nDone."
    found = find_python_call(fenced).call
    assert found is not None and found.name == "math.factorial"
    both = "print(x=1) and then area(base=2)"
    preferred = find_python_call(both, prefer="area").call
    assert preferred is not None and preferred.name == "area"
    assert find_python_call(both).call is not None


def test_find_python_call_explains_failure() -> None:
    reading = find_python_call("I would call area(10, 5).")
    assert reading.call is None
    assert reading.error is not None and "positional" in reading.error


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[area(base=1), area(base=2)]", "2 calls"),
        ("```python\narea(10, 5)\n```", "positional"),
        ("Paris", "not a function call"),
    ],
)
def test_a_reply_that_is_python_is_final(text: str, reason: str) -> None:
    # the prose search is only for replies that are not Python at all
    reading = find_python_call(text, prefer="area")
    assert reading.call is None
    assert reading.error is not None and reason in reading.error


def _hostile_texts(tmp_path: Path) -> list[str]:
    target = tmp_path / "pwned"
    return [
        "",
        " ",
        "\x00",
        f"f(x=open({str(target)!r}, 'w'))",
        f"__import__('os').system('touch {target}')",
        f"[f(x=__import__('os').system('touch {target}'))]",
        "f(x=" + "[" * 5000 + "]" * 5000 + ")",
        "f(x=" + "-" * 100_000 + "1)",
        "a." * 50_000 + "b()",
        "f(" * 50_000,
        "f(x='" + "\\" * 10_000,
        "word" * 30_000,
        "(" * 200_000,
        "f(x=" + "9" * 5000 + ")",
        "f(x=1)" * 20_000,
        "```python\n" * 10_000,
        "\ud800f(x=1)",
    ]


def test_find_python_call_never_evaluates_nor_raises(tmp_path: Path) -> None:
    for text in _hostile_texts(tmp_path):
        reading = find_python_call(text, prefer="f")
        assert reading.call is not None or reading.error
    assert not (tmp_path / "pwned").exists()


# ----------------------------------------------------------------- numbers, hostile


def test_extract_number_hostile_inputs_get_their_one_answer() -> None:
    """Each hostile text returns in time with the answer a reader gives it:
    only the first MAX_TEXT_CHARS characters are read, so a number or a
    closing brace past them is not there."""
    one = NumberAnswer(Decimal(1), "last_number")
    cases = [
        ("answer" + " " * MAX_TEXT_CHARS, None, None),
        ("\\boxed{" * 20_000, None, None),
        ("\\boxed{" + "1" * MAX_TEXT_CHARS, None, None),  # never closed; the digits are too many for a number
        ("1," * 50_000, one, None),
        ("-" * 100_000 + "1", None, None),  # the 1 lies past the characters read
        # one answer line, read to MAX_TEXT_CHARS: what follows its first label, the other labels included
        ("Answer:" * 20_000, None, ("Answer:" * 20_000)[len("Answer:"):MAX_TEXT_CHARS]),
    ]
    for text, number, line in cases:
        assert extract_number(text) == number, text[:20]
        assert answer_line(text) == line, text[:20]


# ----------------------------------------------------------------- JSON


def test_parse_json_output_strict_and_fenced() -> None:
    fenced = parse_json_output('Here it is:\n```json\n{"answer": 5}\n```')
    assert fenced.ok and fenced.value == {"answer": 5} and fenced.source == "fenced"
    assert parse_json_output('{"answer": 5}').ok
    for bad in ['{"answer": NaN}', '{"a": 1, "a": 2}', "{'answer': 5}", "", "answer: 5"]:
        parsed = parse_json_output(bad)
        assert not parsed.ok and parsed.error
