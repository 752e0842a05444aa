"""The prompt a task builds and a backend renders: chat messages plus an
optional forced start of the answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["CANARY_PROMPT", "Message", "Prompt", "raw_prompt_text"]


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class Prompt:
    """Chat messages. A backend renders them with the model's chat template,
    or as a raw completion prompt for base models without one.
    ``assistant_prefix`` is text the answer is forced to start with (it is part
    of the prompt, not of the returned text)."""

    messages: tuple[Message, ...]
    assistant_prefix: str = ""


def raw_prompt_text(prompt: Prompt) -> str:
    """A prompt as plain completion text, for models without a chat template
    and completion endpoints: the message contents separated by blank lines,
    then ``assistant_prefix`` after one more blank line."""
    body = "\n\n".join(m.content for m in prompt.messages)
    return body + ("\n\n" if body and prompt.assistant_prefix else "") + prompt.assistant_prefix


#: The canary's prompt (conformbench.audits.canary): deliberately unrelated to
#: the constant it forces, so an unconstrained model writes something else
#: entirely. Kept here because the replay backend recognises it.
CANARY_PROMPT = Prompt(
    (Message("user", "Describe today's weather in one short sentence."),)
)
