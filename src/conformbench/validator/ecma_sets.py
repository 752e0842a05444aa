"""The character sets of ECMA-262 patterns spelled for RE2 and for Python's
``regex`` module (for ``ecma``, which rewrites whole patterns): code points,
class bodies, ECMA's white space and line terminators, and ``\\p{...}``
property names."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LINE_END", "WS", "ClassSet", "class_bodies", "cp_py", "cp_re2", "property_set"]

#: ECMA's ``\\s``: Unicode white space and line terminators
WS = [(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
      (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)]
#: what ECMA's ``.`` does not match
LINE_END = [(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]

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


def cp_re2(cp: int) -> str:
    """One code point in RE2 syntax."""
    ch = chr(cp)
    return ch if ch.isascii() and ch.isalnum() else f"\\x{{{cp:X}}}"


def cp_py(cp: int) -> str:
    """One code point in Python ``regex`` syntax."""
    ch = chr(cp)
    if ch.isascii() and ch.isalnum():
        return ch
    return f"\\x{cp:02x}" if cp < 0x100 else (f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}")


def class_bodies(spans: list[tuple[int, int]]) -> tuple[str, str]:
    """Class bodies (no brackets) for both targets."""
    re2 = "".join(cp_re2(a) if a == b else f"{cp_re2(a)}-{cp_re2(b)}" for a, b in spans)
    py = "".join(cp_py(a) if a == b else f"{cp_py(a)}-{cp_py(b)}" for a, b in spans)
    return re2, py


@dataclass
class ClassSet:
    """A class item that is itself a set (\\d, \\p{L}, ...): bodies for both targets."""

    re2: str
    py: str
    #: \\S (its ECMA set has no RE2 escape to stand inside a class)
    not_space: bool = False


def property_set(name: str, negate: bool) -> ClassSet:
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
        return ClassSet(*class_bodies([(0x80, 0x10FFFF)] if negate else [(0, 0x7F)]))
    elif not value:
        re2_name = _CATEGORIES.get(name, name)
    letter = "P" if negate else "p"
    return ClassSet(f"\\{letter}{{{re2_name}}}", f"\\{letter}{{{name}}}")
