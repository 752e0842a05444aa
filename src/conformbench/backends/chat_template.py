"""Chat templates rendered under bounds. A template comes with the model file
or folder, so it is untrusted: jinja2's sandbox stops attribute tricks and
caps ``range`` at 100,000, but ``'x' * 10**9``, ``'%0999999999d' % 1``,
``'x'.ljust(10**9)``, a string doubled by ``~`` in a loop or two nested
loops of 100,000 would still allocate gigabytes or run for hours.

``BoundedSandbox`` is jinja2's immutable sandbox with every operation that
can make a large value checked *before* it runs (no intermediate value over
``MAX_RENDER_CHARS``), the output counted as it is produced, and a deadline
of ``MAX_RENDER_SECONDS`` checked at every operation and output chunk (and,
in the main thread, by a timer signal, so a loop that produces nothing stops
too). Past a bound, rendering raises ``TemplateTooCostly``, which the
backends turn into one line naming the bound."""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from types import FrameType
from typing import Any

from jinja2 import BaseLoader
from jinja2.compiler import CodeGenerator, Frame
from jinja2.ext import loopcontrols
from jinja2.nodes import Concat
from jinja2.sandbox import ImmutableSandboxedEnvironment

__all__ = ["MAX_RENDER_CHARS", "MAX_RENDER_SECONDS", "BoundedSandbox", "TemplateTooCostly", "bounded_like",
           "bounded_llama_formatter", "bounded_template"]

#: the most characters a rendered prompt, or any value made while rendering,
#: may hold (a real prompt is well under 1 MB)
MAX_RENDER_CHARS = 4 << 20
#: the most seconds one rendering may take (a real template takes milliseconds)
MAX_RENDER_SECONDS = 10.0
#: str methods whose first argument is a width (the result is at least that long)
_WIDTH_METHODS = frozenset({"ljust", "rjust", "center", "zfill", "expandtabs"})
_NUMBERS = re.compile(r"\d+")
#: filters that make a string from a width or a count
_WIDE_FILTERS = frozenset({"center", "indent", "format", "replace", "wordwrap", "truncate", "join", "tojson",
                           "pprint", "urlize", "filesizeformat", "striptags", "xmlattr"})


class TemplateTooCostly(Exception):
    """The template went past a bound while rendering."""


class _Generator(CodeGenerator):
    """Jinja's code generator with every ``~`` concatenation checked."""

    def visit_Concat(self, node: Concat, frame: Frame) -> None:
        self.write("environment.checked_text(")
        super().visit_Concat(node, frame)
        self.write(")")


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes | list | tuple | dict) else 0


def _digits(text: str) -> int:
    """The widths a format string may name (a number past 12 digits counts
    as 10**12: never converted, always over the bound)."""
    return sum(int(n) if len(n) <= 12 else 10**12 for n in _NUMBERS.findall(text))


def _arg_size(values: Iterable[Any]) -> int:
    """The most characters ``values`` may add to a formatted result: an int
    as a width, a string with the widths it may name, a list or tuple by its
    items (one level)."""
    total = 0
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool):
            total += abs(value)
        elif isinstance(value, str):
            total += len(value) + _digits(value)
        elif isinstance(value, list | tuple):
            total += len(value) + sum(_size(item) for item in value)
        else:
            total += _size(value)
    return total


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox with size and time bounds (see module)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})
    code_generator_class = _Generator

    def __init__(self, *args: Any, max_chars: int = MAX_RENDER_CHARS, max_seconds: float = MAX_RENDER_SECONDS,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_chars = max_chars
        self.max_seconds = max_seconds
        self._deadline: float | None = None
        self._depth = 0
        self.guard_filters()

    def guard_filters(self) -> None:
        """Check the filters that make a string from a width or a count
        (``center``, ``indent``, ``format``, ``replace``...) before they
        run; call again after replacing filters."""
        for name in _WIDE_FILTERS & set(self.filters):
            if not getattr(self.filters[name], "_bounded", False):
                self.filters[name] = self._guarded(self.filters[name], name == "format")

    def _guarded(self, original: Any, widths: bool) -> Any:
        def guarded(*args: Any, **kwargs: Any) -> Any:
            args = tuple(list(a) if isinstance(a, Iterator) else a for a in args)  # a generator: counted
            values = [*args, *kwargs.values()]
            texts = [v for v in values if isinstance(v, str)]
            estimate = _arg_size(values)
            if widths:  # ``format``'s first text is a %-format: its widths
                estimate += sum(_digits(t) for t in texts[:1])
            if len(texts) >= 3:  # replace(s, old, new): every old may become new
                estimate += texts[0].count(texts[1]) * len(texts[2]) if texts[1] else len(texts[0]) * len(texts[2])
            seqs = [v for v in values if isinstance(v, list | tuple)]
            if seqs and texts:  # join(seq, d): d between every two items
                estimate += len(seqs[0]) * max(len(t) for t in texts)
            if len(texts) >= 2:  # indent(s, width): the width string on every line
                estimate += (texts[0].count("\n") + 1) * max(len(t) for t in texts[1:])
            self._room(estimate)
            result = original(*args, **kwargs)
            self._room(_size(result))
            return result

        for attr in ("jinja_pass_arg",):  # pass_context / pass_eval_context / pass_environment
            if hasattr(original, attr):
                setattr(guarded, attr, getattr(original, attr))
        guarded._bounded = True  # type: ignore[attr-defined]
        return guarded

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        if wrapped is not None:  # ``'{:>999999999}'.format``: its widths, checked on access
            fmt = value.__self__
            self._room(len(fmt) + _digits(fmt))

            def checked(*args: Any, **kwargs: Any) -> Any:  # nested widths come as arguments
                self._room(len(fmt) + _digits(fmt) + _arg_size([*args, *kwargs.values()]))
                return wrapped(*args, **kwargs)

            return checked
        return wrapped

    # -- bounds ------------------------------------------------------------

    def _tick(self) -> None:
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise TemplateTooCostly(f"the chat template ran past {self.max_seconds:g} s")

    def _room(self, chars: float) -> None:
        self._tick()
        if chars > self.max_chars:
            raise TemplateTooCostly(f"the chat template made a value over {self.max_chars:,} characters")

    def checked_text(self, text: str) -> str:
        self._room(len(text))
        return text

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if _size(seq) and isinstance(times, int):
                    self._room(_size(seq) * times)
        elif operator == "**" and isinstance(left, int | float) and isinstance(right, int | float):
            if abs(right) > 1024 or (isinstance(left, int) and abs(left) > 1 and right > 0
                                     and abs(left).bit_length() * right > 65536):
                raise TemplateTooCostly("the chat template raised a number to a power too large to compute")
        elif operator == "+":
            self._room(_size(left) + _size(right))
        elif operator == "%" and isinstance(left, str):  # ``'%*d' % (N, 1)``: N is a width
            self._room(len(left) + _digits(left) + _arg_size(right if isinstance(right, tuple) else [right]))
        result = super().call_binop(context, operator, left, right)
        self._room(_size(result))
        return result

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(__obj, "__name__", "")
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str) and name in _WIDTH_METHODS and args and isinstance(args[0], int):
            __self._room(args[0] * (owner.count("\t") + 1 if name == "expandtabs" else 1) + len(owner))
        if isinstance(owner, str) and name in ("format", "format_map"):
            __self._room(len(owner) + _digits(owner) + _arg_size([*args, *kwargs.values()]))
        if isinstance(owner, str) and name == "replace" and len(args) >= 2 and all(isinstance(a, str) for a in args[:2]):
            __self._room(len(owner) + (owner.count(args[0]) if args[0] else len(owner) + 1) * len(args[1]))
        if isinstance(owner, str) and name == "join" and args:
            items = list(args[0])
            __self._room(len(owner) * len(items) + _arg_size(items))
            args = (items, *args[1:])
        __self._tick()
        result = super().call(__context, __obj, *args, **kwargs)
        __self._room(_size(result))
        return result

    def getattr(self, obj: Any, attribute: str) -> Any:
        self._tick()
        return super().getattr(obj, attribute)

    # -- output ------------------------------------------------------------

    def concat(self, chunks: Iterable[str]) -> str:
        """The rendered text, counted chunk by chunk; the outermost call
        (a render; macros and blocks concat inside it) sets the deadline."""
        if self._depth:
            return "".join(self._counted(chunks))
        self._depth += 1
        self._deadline = time.monotonic() + self.max_seconds
        try:
            with _alarm(self.max_seconds):
                return "".join(self._counted(chunks))
        finally:
            self._depth -= 1
            self._deadline = None

    def _counted(self, chunks: Iterable[str]) -> Iterator[str]:
        total = 0
        for chunk in chunks:
            total += len(chunk)
            self._room(total)
            yield chunk


class _alarm:
    """A timer signal raising TemplateTooCostly after ``seconds``, where one
    can be set: the main thread, no handler or timer already in use."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.previous: Any = None
        self.armed = False

    def __enter__(self) -> None:
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
            return
        if signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None) or signal.getitimer(signal.ITIMER_REAL)[0]:
            return

        def expired(_signum: int, _frame: FrameType | None) -> None:
            raise TemplateTooCostly(f"the chat template ran past {self.seconds:g} s")

        self.previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        self.armed = True

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


def bounded_template(source: str, **globals_: Any) -> Any:
    """``source`` compiled in a BoundedSandbox configured as transformers and
    llama-cpp-python configure theirs (blocks trimmed, ``break``/``continue``),
    ``globals_`` (``raise_exception``, ``tojson``...) available to it."""
    env = BoundedSandbox(loader=BaseLoader(), trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.globals.update(globals_)
    return env.from_string(source)


def bounded_like(source: str, compiled: Any) -> Any:
    """``source`` compiled in a BoundedSandbox set up as the environment of
    ``compiled`` (a library's own compile of an *empty* template: compiling
    the untrusted source there would already run it, as jinja2 folds
    constant expressions such as ``'x' * 10**9`` while compiling): the same
    options, extensions, filters, tests, globals and policies, so it renders
    the same text, bounded."""
    theirs = compiled.environment
    env = BoundedSandbox(loader=BaseLoader(), trim_blocks=theirs.trim_blocks, lstrip_blocks=theirs.lstrip_blocks,
                         keep_trailing_newline=theirs.keep_trailing_newline, autoescape=theirs.autoescape,
                         extensions=[type(ext) for ext in theirs.extensions.values()])
    env.filters.update(theirs.filters)
    env.tests.update(theirs.tests)
    env.globals.update(theirs.globals)
    env.policies.update(theirs.policies)
    env.guard_filters()  # the copied ones too
    return env.from_string(source)


def bounded_llama_formatter(source: str, eos_token: str, bos_token: str) -> Any:
    """llama-cpp-python's ``Jinja2ChatFormatter`` for ``source``, rendering
    in a BoundedSandbox set up as its own environment. The formatter is made
    on an empty template: made on ``source`` it would compile it unbounded."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    formatter = Jinja2ChatFormatter(template="", eos_token=eos_token, bos_token=bos_token, add_generation_prompt=True)
    formatter.template = source
    formatter._environment = bounded_like(source, formatter._environment)
    return formatter
