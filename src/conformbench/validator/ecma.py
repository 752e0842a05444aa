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


_WS = [(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
       (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)]
_DIGIT = [(0x30, 0x39)]
_WORD = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
_LINE_END = [(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]
_CONTROL = {"t": 0x09, "n": 0x0A, "v": 0x0B, "f": 0x0C, "r": 0x0D, "a": 0x07}
_QUANTIFIER = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}")
_GROUP_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
#: (?: and inline flags (?i) (?i: (?-i:
_GROUP_OPENER = re.compile(r"\?(?::|[A-Za-z]*(?:-[A-Za-z]+)?[:)])")

#: ECMA long General_Category names -> the short names RE2 knows
_CATEGORIES = {
    "Letter": "L", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Titlecase_Letter": "Lt",
    "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Combining_Mark": "M",
    "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N",
    "Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No",
    "Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd",
    "Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
    "Final_Punctuation": "Pf", "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm",
    "Currency_Symbol": "Sc", "Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z",
    "Space_Separator": "Zs", "Line_Separator": "Zl", "Paragraph_Separator": "Zp", "Other": "C",
    "Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Surrogate": "Cs", "Private_Use": "Co",
}
_SHORT_CATEGORIES = frozenset(_CATEGORIES.values()) | {"Lu", "Ll", "Lt", "Lm", "Lo", "Cs"}


def _cp_re2(cp: int) -> str:
    ch = chr(cp)
    return ch if ch.isascii() and ch.isalnum() else f"\\x{{{cp:X}}}"


def _cp_py(cp: int) -> str:
    ch = chr(cp)
    if ch.isascii() and ch.isalnum():
        return ch
    return f"\\x{cp:02x}" if cp < 0x100 else (f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}")


def _ranges(ranges: list[tuple[int, int]]) -> tuple[str, str]:
    """Class bodies (no brackets) for both targets."""
    re2 = "".join(_cp_re2(a) if a == b else f"{_cp_re2(a)}-{_cp_re2(b)}" for a, b in ranges)
    py = "".join(_cp_py(a) if a == b else f"{_cp_py(a)}-{_cp_py(b)}" for a, b in ranges)
    return re2, py


@dataclass
class _Set:
    """A class item that is itself a set (\\d, \\p{L}, ...): bodies for both targets."""

    re2: str
    py: str
    #: \\S (its ECMA set has no RE2 escape to stand inside a class)
    not_space: bool = False


def _property(name: str, negate: bool) -> _Set:
    """``\\p{...}``: General_Category and Script names map to RE2's; anything
    else (binary properties, Script_Extensions) leaves RE2 unable to compile
    it, which the caller reports."""
    key, _, value = name.partition("=")
    re2_name = name
    if value and key in ("General_Category", "gc"):
        re2_name = _CATEGORIES.get(value, value)
    elif value and key in ("Script", "sc"):
        re2_name = value
    elif name == "ASCII":
        return _Set(*_ranges([(0x80, 0x10FFFF)] if negate else [(0, 0x7F)]))
    elif not value:
        re2_name = _CATEGORIES.get(name, name)
    letter = "P" if negate else "p"
    return _Set(f"\\{letter}{{{re2_name}}}", f"\\{letter}{{{name}}}")


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
            self.emit(*(f"[^{body}]" for body in _ranges(_LINE_END)))
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
            self.emit(_cp_re2(ord(ch)), _cp_py(ord(ch)))

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
            self.emit(_cp_re2(cp), _cp_py(cp))

    def class_escape(self, ch: str) -> _Set:
        """\\d \\D \\w \\W \\s \\S as class bodies. RE2's \\d and \\w are ASCII, as
        ECMA's, and so are Python's under the ASCII flag; \\s is spelled out."""
        if ch in "dDwW":
            return _Set("\\" + ch, "\\" + ch)
        if ch == "S":
            return _Set("", "", not_space=True)
        return _Set(*_ranges(_WS))

    def emit_set(self, item: _Set) -> None:
        if item.not_space:
            self.emit(*(f"[^{body}]" for body in _ranges(_WS)))
        else:
            self.emit(f"[{item.re2}]", f"[{item.py}]")

    def property_escape(self) -> _Set:
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
        return _property(name, negate)

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

    def class_atom(self) -> int | _Set:
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
        items: list[int | tuple[int, int] | _Set] = []
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

    def emit_class(self, items: list[int | tuple[int, int] | _Set], negate: bool) -> None:
        plain: list[tuple[int, int]] = []
        sets: list[_Set] = []
        for item in items:
            if isinstance(item, _Set):
                sets.append(item)
            elif isinstance(item, tuple):
                plain.append(item)
            else:
                plain.append((item, item))
        if not plain and not sets:  # [] matches nothing, [^] any character
            everything = _ranges([(0, 0x10FFFF)])
            self.emit(f"[{everything[0]}]", f"[{everything[1]}]") if negate else self.emit(
                f"[^{everything[0]}]", "(?!)")
            return
        spaces = [s for s in sets if s.not_space]
        others = [s for s in sets if not s.not_space]
        body = _ranges(plain)
        re2 = body[0] + "".join(s.re2 for s in others)
        py = body[1] + "".join(s.py for s in others)
        head = "[^" if negate else "["
        if not spaces:
            self.emit(f"{head}{re2}]", f"{head}{py}]")
            return
        ws = _ranges(_WS)
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
