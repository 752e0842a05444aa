"""ECMA-262 regular expressions (JSON Schema's dialect, read with the ``u``
flag as 2020-12 asks) rewritten for RE2 and for Python's ``regex`` module.

The two engines and ECMA disagree on more than look-around:

* ``\\d`` and ``\\w`` (and ``\\b``) are ASCII in ECMA and RE2; Python's are
  Unicode, so the Python target is compiled with the ASCII flag.
* ``\\s`` in ECMA is the Unicode white space and line terminators (NBSP,
  U+2028, U+FEFF...); RE2's ``\\s`` is ``[\\t\\n\\f\\r ]``. Both engines get
  the ECMA set spelled out.
* ``.`` excludes ``\\r``, U+2028 and U+2029 as well as ``\\n`` in ECMA.
* ``$`` is the end of input in ECMA; Python's also matches before a final
  newline (so the Python target gets ``\\Z``).
* ``\\uXXXX`` (surrogate pairs joined), ``\\u{...}``, ``\\cX``, ``\\0``,
  ``(?<name>...)``, ``\\k<name>``, ``\\p{Script=Greek}``, ``\\p{Letter}``,
  ``[^]`` and ``[]`` are ECMA spellings that RE2 or Python lack.

Unless ``strict``, the Python-dialect spellings found in schemas written for
python-jsonschema are read as Python reads them: ``\\A``, ``\\Z``, ``\\a``,
``(?P<name>...)`` and inline flags (``(?i)``). ``strict`` (the ``regex``
format: is this string an ECMA-262 regular expression?) rejects them.

A pattern that needs a backtracking engine (look-around, back-references) is
marked with the reason; the caller decides what to do with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from conformbench.validator.ecma_sets import LINE_END, WS, ClassSet, class_bodies, cp_py, cp_re2, property_set

__all__ = ["EcmaSyntaxError", "Translation", "translate"]


class EcmaSyntaxError(ValueError):
    """Not a regular expression of the ECMA-262 dialect."""


@dataclass(frozen=True)
class Translation:
    #: RE2 syntax (meaningless when ``backtracking`` is set)
    re2: str
    #: Python ``regex``/``re`` syntax, to compile with the ASCII flag
    python: str
    #: why only a backtracking engine can run it (look-around, back-reference)
    backtracking: str | None = None


_CONTROL = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D, "a": 0x07}
_QUANTIFIER = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}")
_GROUP_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
#: (?: and inline flags (?i) (?i: (?-i:
_GROUP_OPENER = re.compile(r"\?(?::|[A-Za-z]*(?:-[A-Za-z]+)?[:)])")


@dataclass
class _Scanner:
    src: str
    strict: bool = False
    pos: int = 0
    re2: list[str] = field(default_factory=list)
    py: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def error(self, what: str) -> EcmaSyntaxError:
        return EcmaSyntaxError(f"{what} at position {self.pos} of {self.src!r}")

    def emit(self, re2: str, py: str | None = None) -> None:
        self.re2.append(re2)
        self.py.append(re2 if py is None else py)

    def take(self, n: int = 1) -> str:
        text = self.src[self.pos:self.pos + n]
        self.pos += n
        return text

    def peek(self, n: int = 1) -> str:
        return self.src[self.pos:self.pos + n]

    def run(self) -> Translation:
        while self.pos < len(self.src):
            self.step()
        reason = "; ".join(dict.fromkeys(self.reasons)) or None
        return Translation("".join(self.re2), "".join(self.py), reason)

    def step(self) -> None:
        ch = self.take()
        if ch == "\\":
            self.escape()
        elif ch == "[":
            self.char_class()
        elif ch == "(":
            self.group()
        elif ch == ".":
            self.emit(*(f"[^{body}]" for body in class_bodies(LINE_END)))
        elif ch == "$":
            self.emit("$", "\\Z")
        elif ch == "{":
            match = _QUANTIFIER.match(self.src, self.pos - 1)
            if match:
                self.pos = match.end()
                self.emit(match.group())
            else:  # a literal brace (Annex B)
                self.emit("\\{")
        elif ch in "}]":
            self.emit("\\" + ch)
        elif ch in "^*+?|)":
            self.emit(ch)
        else:
            self.emit(cp_re2(ord(ch)), cp_py(ord(ch)))

    def group(self) -> None:
        if self.peek() != "?":
            self.emit("(")
            return
        for opener in ("?=", "?!", "?<=", "?<!"):
            if self.src.startswith(opener, self.pos):
                self.pos += len(opener)
                self.reasons.append("look-around")
                self.emit("(" + opener)
                return
        if self.strict and not (self.src.startswith("?<", self.pos) or self.src.startswith("?:", self.pos)):
            raise self.error("not an ECMA-262 group")
        if self.src.startswith("?<", self.pos) or self.src.startswith("?P<", self.pos):
            self.pos += 2 if self.peek(2) == "?<" else 3
            name = _GROUP_NAME.match(self.src, self.pos)
            if not name or not self.src.startswith(">", name.end()):
                raise self.error("bad group name")
            self.pos = name.end() + 1
            self.emit(f"(?P<{name.group()}>")
            return
        self.other_group()

    def other_group(self) -> None:
        """``(?:``; and, unless strict, Python's ``(?P=name)``, comments
        ``(?#...)`` (dropped) and inline flags ``(?i)``, ``(?i:``."""
        if self.src.startswith("?P=", self.pos):
            name = _GROUP_NAME.match(self.src, self.pos + 3)
            if not name or not self.src.startswith(")", name.end()):
                raise self.error("bad group reference")
            self.pos = name.end() + 1
            self.reasons.append("back-reference")
            self.emit(f"(?P={name.group()})")
        elif self.src.startswith("?#", self.pos):
            end = self.src.find(")", self.pos)
            if end < 0:
                raise self.error("unclosed comment group")
            self.pos = end + 1
        else:
            opener = _GROUP_OPENER.match(self.src, self.pos)
            if opener is None:
                raise self.error("unknown group")
            self.pos = opener.end()
            self.emit("(" + opener.group())

    def escape(self) -> None:
        if self.pos >= len(self.src):
            raise self.error("trailing backslash")
        ch = self.peek()
        if ch in "dDwWsSpP":
            item = self.class_escape(self.take()) if ch not in "pP" else self.property_escape()
            self.emit_set(item)
        elif self.strict and ch in "AZza":
            raise self.error(f"\\{ch} is not an ECMA-262 escape")
        elif ch in "bBA":
            self.emit("\\" + self.take())
        elif ch in "Zz":
            self.pos += 1
            self.emit("\\z", "\\Z")
        elif ch.isdigit() and ch != "0":
            digits = re.match(r"[0-9]+", self.src[self.pos:])
            assert digits is not None
            self.pos += len(digits.group())
            self.reasons.append("back-reference")
            self.emit("\\" + digits.group())
        elif ch == "k" and self.peek(2) == "k<":
            self.pos += 2
            name = _GROUP_NAME.match(self.src, self.pos)
            if not name or not self.src.startswith(">", name.end()):
                raise self.error("bad group reference")
            self.pos = name.end() + 1
            self.reasons.append("back-reference")
            self.emit(f"(?P={name.group()})")
        else:
            cp = self.code_point()
            self.emit(cp_re2(cp), cp_py(cp))

    def class_escape(self, ch: str) -> ClassSet:
        """\\d \\D \\w \\W \\s \\S as class bodies. RE2's \\d and \\w are ASCII, as
        ECMA's, and so are Python's under the ASCII flag; \\s is spelled out."""
        if ch in "dDwW":
            return ClassSet("\\" + ch, "\\" + ch)
        if ch == "S":
            return ClassSet("", "", not_space=True)
        return ClassSet(*class_bodies(WS))

    def emit_set(self, item: ClassSet) -> None:
        if item.not_space:
            self.emit(*(f"[^{body}]" for body in class_bodies(WS)))
        else:
            self.emit(f"[{item.re2}]", f"[{item.py}]")

    def property_escape(self) -> ClassSet:
        negate = self.take() == "P"
        if self.peek() != "{":
            raise self.error("\\p needs {name}")
        end = self.src.find("}", self.pos)
        if end < 0:
            raise self.error("unclosed \\p{")
        name = self.src[self.pos + 1:end]
        self.pos = end + 1
        if not re.fullmatch(r"[A-Za-z_]+(?:=[A-Za-z_]+)?", name):
            raise self.error(f"bad property name {name!r}")
        return property_set(name, negate)

    def code_point(self) -> int:
        """The character of an escape that stands for one character."""
        ch = self.take()
        if ch in _CONTROL:
            return _CONTROL[ch]
        if ch == "0" and not self.peek().isdigit():
            return 0
        if ch == "c" and self.peek().isascii() and self.peek().isalpha():
            return ord(self.take()) % 32
        if ch == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", self.peek(2)):
            return int(self.take(2), 16)
        if ch == "u":
            return self.unicode_escape()
        if ch.isascii() and ch.isalnum():
            raise self.error(f"unknown escape \\{ch}")
        return ord(ch)  # identity escape of punctuation (or any non-ASCII char)

    def unicode_escape(self) -> int:
        if self.peek() == "{":
            end = self.src.find("}", self.pos)
            digits = self.src[self.pos + 1:end] if end > 0 else ""
            if not re.fullmatch(r"[0-9A-Fa-f]{1,6}", digits) or int(digits, 16) > 0x10FFFF:
                raise self.error("bad \\u{...} escape")
            self.pos = end + 1
            return int(digits, 16)
        if not re.fullmatch(r"[0-9A-Fa-f]{4}", self.peek(4)):
            raise self.error("bad \\u escape")
        cp = int(self.take(4), 16)
        low = re.match(r"\\u([dD][c-fC-F][0-9A-Fa-f]{2})", self.src[self.pos:self.pos + 6])
        if 0xD800 <= cp <= 0xDBFF and low:  # a surrogate pair is one character
            self.pos += 6
            cp = 0x10000 + ((cp - 0xD800) << 10) + (int(low.group(1), 16) - 0xDC00)
        return cp

    # ------------------------------------------------------------ classes

    def class_atom(self) -> int | ClassSet:
        ch = self.take()
        if ch != "\\":
            return ord(ch)
        if self.pos >= len(self.src):
            raise self.error("trailing backslash")
        nxt = self.peek()
        if nxt in "dDwWsS":
            self.pos += 1
            return self.class_escape(nxt)
        if nxt in "pP":
            return self.property_escape()
        if nxt == "b":
            self.pos += 1
            return 0x08
        if nxt == "-":
            self.pos += 1
            return ord("-")
        return self.code_point()

    def char_class(self) -> None:
        negate = self.peek() == "^"
        self.pos += negate
        items: list[int | tuple[int, int] | ClassSet] = []
        while True:
            if self.pos >= len(self.src):
                raise self.error("unclosed character class")
            if self.peek() == "]":
                self.pos += 1
                break
            atom = self.class_atom()
            if self.peek() == "-" and self.pos + 1 < len(self.src) and self.src[self.pos + 1] != "]":
                self.pos += 1
                high = self.class_atom()
                if isinstance(atom, int) and isinstance(high, int):
                    if high < atom:
                        raise self.error("range out of order in character class")
                    items.append((atom, high))
                    continue
                items.extend([atom, ord("-"), high])  # Annex B: a class escape is not a range end
                continue
            items.append(atom)
        self.emit_class(items, negate)

    def emit_class(self, items: list[int | tuple[int, int] | ClassSet], negate: bool) -> None:
        plain: list[tuple[int, int]] = []
        sets: list[ClassSet] = []
        for item in items:
            if isinstance(item, ClassSet):
                sets.append(item)
            elif isinstance(item, tuple):
                plain.append(item)
            else:
                plain.append((item, item))
        if not plain and not sets:  # [] matches nothing, [^] any character
            everything = class_bodies([(0, 0x10FFFF)])
            self.emit(f"[{everything[0]}]", f"[{everything[1]}]") if negate else self.emit(
                f"[^{everything[0]}]", "(?!)")
            return
        spaces = [s for s in sets if s.not_space]
        others = [s for s in sets if not s.not_space]
        body = class_bodies(plain)
        re2 = body[0] + "".join(s.re2 for s in others)
        py = body[1] + "".join(s.py for s in others)
        head = "[^" if negate else "["
        if not spaces:
            self.emit(f"{head}{re2}]", f"{head}{py}]")
            return
        ws = class_bodies(WS)
        if not negate:  # [a\S] = [a] or not white space
            alts = [f"[^{ws[0]}]"] + ([f"[{re2}]"] if re2 else [])
            palts = [f"[^{ws[1]}]"] + ([f"[{py}]"] if py else [])
            self.emit("(?:" + "|".join(alts) + ")", "(?:" + "|".join(palts) + ")")
            return
        # [^a\S] = white space that is not a: only a look-ahead says it
        self.reasons.append("negated class with \\S")
        self.emit(f"[^{re2}]", (f"(?:(?![{py}])" if py else "(?:") + f"[{ws[1]}])")


def translate(pattern: str, strict: bool = False) -> Translation:
    """Rewrite an ECMA-262 pattern for RE2 and Python (EcmaSyntaxError if it
    is not one; see the module docstring for ``strict``)."""
    return _Scanner(pattern, strict).run()
