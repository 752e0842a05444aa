"""Where the first refusal of a generation's mask falls, in the terms of
the recorded answer (runner/mask_place.py)."""

from __future__ import annotations

from conformbench.records.generation import Constraint, GenerationRequest, GenerationResult, Thinking
from conformbench.records.mask_toll import MaskToll
from conformbench.records.prompt import Message, Prompt
from conformbench.runner.mask_place import THINKING, placed_toll

PROMPT = Prompt((Message("user", "q"),))
TOLL = MaskToll(steps=5, mean_share=0.5, min_share=0.1, refused_top=1, first_refused_step=2)


def _placed(char: int, thinking: Thinking | None, text: str, thought: str | None = None,
            output_format: str = "json") -> MaskToll | None:
    request = GenerationRequest(PROMPT, constraint=Constraint({}, "llguidance", output_format, thinking))
    toll = TOLL.model_copy(update={"first_refused_char": char})
    return placed_toll(request, GenerationResult(text=text, finish_reason="stop", thinking=thought, mask_toll=toll))


def test_a_json_answer_names_the_member() -> None:
    placed = _placed(10, None, '{"answer": 4}')
    assert placed is not None and (placed.first_refused_char, placed.first_refused_at) == (10, "/answer")
    yaml = _placed(3, None, "answer: 4", output_format="yaml")
    assert yaml is not None and yaml.first_refused_at is None  # other forms: the offset alone


def test_think_then_constrain_moves_the_offset_into_the_answer_or_the_thinking() -> None:
    thinking = Thinking(stop="</think>")
    # whole output: "I think" + "</think>" + '{"answer": 4}'
    after = _placed(len("I think</think>") + 11, thinking, '{"answer": 4}', "I think")
    assert after is not None and (after.first_refused_char, after.first_refused_at) == (11, "/answer")
    within = _placed(3, thinking, '{"answer": 4}', "I think")
    assert within is not None and (within.first_refused_char, within.first_refused_at) == (3, THINKING)
    in_stop = _placed(9, thinking, '{"answer": 4}', "I think")  # inside the stop string
    assert in_stop is not None and (in_stop.first_refused_char, in_stop.first_refused_at) == (7, THINKING)


def test_the_answer_part_is_placed_in_the_answer_even_from_a_straddling_token() -> None:
    thinking = Thinking(stop="</think>")
    request = GenerationRequest(PROMPT, constraint=Constraint({}, "llguidance", "json", thinking))
    answer = TOLL.model_copy(update={"first_refused_step": 0, "first_refused_char": len("I think</thi")})
    whole = TOLL.model_copy(update={"first_refused_char": 3, "answer": answer})
    outcome = GenerationResult(text='{"answer": 4}', finish_reason="stop", thinking="I think", mask_toll=whole)
    placed = placed_toll(request, outcome)
    assert placed is not None and placed.first_refused_at == THINKING and placed.answer is not None
    # the answer's first step chose a token that began inside the stop string: offset 0, the root
    assert (placed.answer.first_refused_char, placed.answer.first_refused_at) == (0, "")
