"""``llama_cpp.Llama`` that compiles none of a GGUF's chat templates.

A chat template is data from the model file. ``Llama.__init__`` (0.3.x)
compiles every ``tokenizer.chat_template*`` metadata value with
llama-cpp-python's own, unbounded Jinja formatter while the model loads,
whatever ``chat_format`` or ``chat_handler`` is given: jinja2 folds constant
expressions while compiling, so a 75-byte ``{{ 'x' * 1500000000 }}`` would
allocate gigabytes before conformbench's bounded sandbox
(``backends.chat_template``) ever sees it.

``TemplateFreeLlama`` hides those keys from ``Llama.__init__`` (its
``metadata`` is a property: the loop over templates finds none, and the
chat format falls back to llama-cpp-python's named ``llama-2`` format,
which compiles nothing; conformbench never uses it) and shows the whole
metadata once loading is done, so ``metadata["tokenizer.chat_template"]``
still reaches the bounded formatter."""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = ["TEMPLATE_KEY", "llama_class"]

#: the metadata keys llama-cpp-python would compile (``tokenizer.chat_template``
#: and every named ``tokenizer.chat_template.NAME``)
TEMPLATE_KEY = "tokenizer.chat_template"


@cache
def llama_class() -> Any:
    """The ``Llama`` subclass (made on first use: llama_cpp loads lazily)."""
    from llama_cpp import Llama

    class TemplateFreeLlama(Llama):
        """``Llama`` that compiles no chat template while loading (module doc)."""

        @property
        def metadata(self) -> dict[str, str]:
            every: dict[str, str] = self.__dict__.get("_all_metadata", {})
            if self.__dict__.get("_loaded"):
                return every
            return {key: value for key, value in every.items() if not key.startswith(TEMPLATE_KEY)}

        @metadata.setter
        def metadata(self, value: dict[str, str]) -> None:
            self.__dict__["_all_metadata"] = dict(value)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("chat_format", "llama-2")  # a named format: nothing compiled
            super().__init__(*args, **kwargs)
            self.__dict__["_loaded"] = True

    return TemplateFreeLlama
