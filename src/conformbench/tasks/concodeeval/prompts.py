"""Every prompt text of the ConCodeEval tasks, in one place.

The templates follow the paper's appendix A.1 (common prompt, QA-prompt-1/2,
the few-shot layout of Listing 6) and Listing 2 (validation). The paper's
templates name the schema format ``{output_representation}`` and the output
format ``{input_representation}`` (swapped, and QA-prompt-1 uses one variable
twice); here the sensible reading is used throughout: the model writes an
OUTPUT-format sample for a SCHEMA-format schema.

The paper's prompts end with an opened code fence (``Answer:`` then three
backticks); that text is kept verbatim at the end of the user message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from conformbench.errors import UsageError
from conformbench.formats.base import format_display_name
from conformbench.records.prompt import Message, Prompt
from conformbench.registry import did_you_mean

__all__ = [
    "ANSWER_SCHEMA",
    "GENERATION_VARIANTS",
    "SYSTEM_PROMPTS",
    "GenerationShotText",
    "PromptStyle",
    "ValidationShotText",
    "display_name",
    "generation_prompt",
    "validation_packaging_prompt",
    "validation_prompt",
]

FENCE = "```"

#: Paper A.1.2 (Granite family), used with the QA prompts.
_GRANITE_SYSTEM = (
    "You are an intelligent AI programming assistant, utilizing a Granite code language "
    "model developed by IBM. Your primary function is to assist users in code explanation, "
    "code generation and other software engineering tasks. You MUST follow these "
    "guidelines: - Your responses must be factual. Do not assume the answer is yes when "
    "you do not know, and DO NOT SHARE FALSE INFORMATION. - You should give concise "
    "answers. You should follow the instruction and provide the answer in the specified "
    "format and DO NOT SHARE FALSE INFORMATION."
)

#: Paper A.1.3 (Llama family).
_LLAMA_SYSTEM = (
    "You are a helpful, respectful, and honest assistant. Always answer as helpfully as "
    "possible, while being safe. Your answers should not include any harmful, unethical, "
    "racist, sexist, toxic, dangerous, or illegal content. Please ensure that your "
    "responses are socially unbiased and positive. If a question does not make any sense "
    "or is not factually coherent, explain why instead of answering something not "
    "correct. If you don't know the answer to a question, please don't share false "
    "information."
)

#: params.system values; None = no system message (the backend's chat
#: template may still insert its own default).
SYSTEM_PROMPTS: dict[str, str | None] = {
    "none": None,
    "granite": _GRANITE_SYSTEM,
    "llama": _LLAMA_SYSTEM,
}

#: params.prompt values of the generation task, and the system prompt each
#: used in the paper (the common prompt had none; the QA prompts were the
#: Granite family's).
GENERATION_VARIANTS: dict[str, str] = {"common": "none", "qa1": "granite", "qa2": "granite"}

#: The contract S = "answer" of the validation task's JSON arms.
ANSWER_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["answer"],
    "additionalProperties": False,
}

_RESPOND_PLAIN = "Respond with yes or no."
_RESPOND_JSON = 'Respond with a JSON object: {"answer": "yes"} or {"answer": "no"}.'


@dataclass(frozen=True)
class PromptStyle:
    """The prompt choices of one condition."""

    schema_format: str
    output_format: str
    #: generation variant: common | qa1 | qa2
    variant: str = "common"
    #: system prompt name (key of SYSTEM_PROMPTS)
    system: str = "none"
    #: validation: answer as JSON {"answer": ...} instead of a plain yes/no
    json_answer: bool = False


@dataclass(frozen=True)
class GenerationShotText:
    """One solved generation example, already rendered."""

    schema_text: str
    sample_text: str


@dataclass(frozen=True)
class ValidationShotText:
    """One solved validation example, already rendered; answer is yes|no."""

    schema_text: str
    sample_text: str
    answer: str


def display_name(fmt: str) -> str:
    """'JSON', 'natural language'... (UnknownNameError for an unknown format)."""
    return format_display_name(fmt)


def _article(word: str) -> str:
    # "an XML sample", "a JSON sample", "a YAML sample"
    return "an" if word[:1] in "AEIOX" else "a"


def _messages(system: str, user: str) -> Prompt:
    text = SYSTEM_PROMPTS[system]
    head = () if text is None else (Message("system", text),)
    return Prompt(messages=(*head, Message("user", user)))


def _write_instruction(style: PromptStyle) -> str:
    out = display_name(style.output_format)
    schema = display_name(style.schema_format)
    return (
        f"Write {_article(out)} {out} sample with field values as per the {schema} "
        "format schema given below."
    )


def _zero_shot_generation(style: PromptStyle, schema_text: str) -> str:
    schema_text = schema_text.rstrip()
    out = display_name(style.output_format)
    instruction = _write_instruction(style)
    if style.variant == "common":
        return f"{instruction}\n\n{schema_text}\n\n{out} sample:\n{FENCE}"
    if style.variant == "qa1":
        return f"Question:\n{instruction}\n\n{schema_text}\n\nAnswer:\n{FENCE}"
    # qa2: the paper puts the wrapping instruction between the task and the schema
    return (
        f"Question:\n{instruction} Please wrap your code answer using {FENCE}\n\n"
        f"{schema_text}\n\nAnswer:\n{FENCE}"
    )


def _few_shot_generation(
    style: PromptStyle, schema_text: str, shots: tuple[GenerationShotText, ...]
) -> str:
    out = display_name(style.output_format)
    schema = display_name(style.schema_format)
    head = (
        f"Your task is to write {_article(out)} {out} sample with field values as per "
        f"{schema} format schema.\nYou are given a few examples demonstrating the same."
    )
    blocks = [
        f"{schema} format schema:\n{shot.schema_text.rstrip()}\n\n{out} sample:\n{FENCE}\n"
        f"{shot.sample_text.rstrip()}\n{FENCE}"
        for shot in shots
    ]
    blocks.append(f"{schema} format schema:\n{schema_text.rstrip()}\n\n{out} sample:\n{FENCE}")
    return "\n\n".join([head, *blocks])


def generation_prompt(
    style: PromptStyle, schema_text: str, shots: tuple[GenerationShotText, ...] = ()
) -> Prompt:
    """The data-as-code generation prompt (zero-shot: the chosen variant;
    few-shot: the paper's Listing 6 layout, whatever the variant)."""
    if style.variant not in GENERATION_VARIANTS:
        hint = did_you_mean(style.variant, list(GENERATION_VARIANTS))
        raise UsageError(f"unknown generation prompt {style.variant!r}{hint}")
    user = (
        _few_shot_generation(style, schema_text, shots)
        if shots
        else _zero_shot_generation(style, schema_text)
    )
    return _messages(style.system, user)


def _question(style: PromptStyle, schema_text: str, sample_text: str) -> str:
    out = display_name(style.output_format)
    schema = display_name(style.schema_format)
    respond = _RESPOND_JSON if style.json_answer else _RESPOND_PLAIN
    return (
        f"Question:\nDoes the {out} sample\n{sample_text.rstrip()}\nadhere to all the "
        f"constraints defined in {schema} format schema\n{schema_text.rstrip()}\n\n{respond}"
    )


def _shot_answer(style: PromptStyle, answer: str) -> str:
    return json.dumps({"answer": answer}) if style.json_answer else answer


def validation_prompt(
    style: PromptStyle,
    schema_text: str,
    sample_text: str,
    shots: tuple[ValidationShotText, ...] = (),
) -> Prompt:
    """Listing 2's validation question; with ``json_answer`` the only change
    is the last line asking for {"answer": "yes"|"no"}."""
    question = _question(style, schema_text, sample_text) + f"\nAnswer:\n{FENCE}"
    if not shots:
        return _messages(style.system, question)
    out = display_name(style.output_format)
    schema = display_name(style.schema_format)
    head = (
        f"Your task is to answer whether {_article(out)} {out} sample adheres to all the "
        f"constraints defined in {_article(schema)} {schema} format schema.\n"
        "You are given a few examples demonstrating the same."
    )
    blocks = [
        _question(style, shot.schema_text, shot.sample_text)
        + f"\nAnswer:\n{FENCE}\n{_shot_answer(style, shot.answer)}\n{FENCE}"
        for shot in shots
    ]
    return _messages(style.system, "\n\n".join([head, *blocks, question]))


def validation_packaging_prompt(first: Prompt, free_text: str) -> Prompt:
    """Second turn of reason_then_constrain: the plain question and the
    model's own free answer, then a request for the JSON answer."""
    return Prompt(
        messages=(
            *first.messages,
            Message("assistant", free_text),
            Message("user", f"Based on your answer above, {_RESPOND_JSON[0].lower()}{_RESPOND_JSON[1:]}"),
        )
    )
