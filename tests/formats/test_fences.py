"""Where the sample is taken from in an answer (rules in formats.fences)."""

from __future__ import annotations

from conformbench.formats.fences import extract_sample


def test_first_matching_block_with_prose_around() -> None:
    text = 'Sure, here it is:\n```json\n{"a": 1}\n```\nAnything else?\n```json\n{"b": 2}\n```'
    sample = extract_sample(text, ["json"])
    assert sample.source == "fenced" and sample.text == '{"a": 1}\n'


def test_plain_fence_and_case_insensitive_language() -> None:
    assert extract_sample("```\nx: 1\n```", ["yaml"]).text == "x: 1\n"
    assert extract_sample("```YAML\nx: 1\n```", ["yaml"]).text == "x: 1\n"
    assert extract_sample("```yml\nx: 1\n```", ["yaml", "yml"]).text == "x: 1\n"


def test_blocks_in_other_languages_are_skipped_whole() -> None:
    text = "```python\nprint('```json')\n```\n```json\n[1]\n```"
    assert extract_sample(text, ["json"]).text == "[1]\n"
    only_other = "```python\nx = 1\n```"
    sample = extract_sample(only_other, ["json"])
    assert sample.source == "raw" and sample.text == only_other


def test_unterminated_fence_runs_to_the_end() -> None:
    sample = extract_sample('```json\n{"a": [1, 2]}\n', ["json"])
    assert sample.source == "fenced" and sample.text == '{"a": [1, 2]}\n'


def test_longer_fences_close_only_on_as_many_backticks() -> None:
    text = "````xml\n<root>```</root>\n```\n````"
    assert extract_sample(text, ["xml"]).text == "<root>```</root>\n```\n"


def test_indentation_up_to_three_spaces() -> None:
    assert extract_sample("   ```json\n1\n   ```", ["json"]).source == "fenced"
    assert extract_sample("    ```json\n1\n    ```", ["json"]).source == "raw"


def test_raw_text_is_the_whole_stripped_answer() -> None:
    sample = extract_sample('\n  {"a": 1}  \n', ["json"])
    assert sample == type(sample)('{"a": 1}', "raw")
