"""Where a character of a JSON answer falls: the JSON pointer of the
innermost member or element it belongs to, read by a forgiving scan that
also takes an unfinished or malformed text (an answer cut at its budget).
The mask's toll says with it where the grammar first refused the model's
own top token (``records.mask_toll``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AFTER", "json_pointer_at"]

#: the place of a position past the end of a complete answer
AFTER = "(after the answer)"


@dataclass
class _Frame:
    array: bool
    #: the member's key (objects) or the element's index (arrays)
    key: str | int | None
    #: past the key's colon (objects; always for arrays)
    in_value: bool


def _escape(part: str | int) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def _pointer(stack: list[_Frame]) -> str:
    parts: list[str] = []
    for frame in stack:
        if frame.key is None or not frame.in_value:
            break
        parts.append("/" + _escape(frame.key))
    return "".join(parts)


def _string_end(text: str, start: int) -> int:
    """The index after the closing quote of the string opening at ``start``
    (the text's length when it never closes)."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    return len(text)


def _step(text: str, i: int, stack: list[_Frame]) -> int:
    """Apply the character at ``i`` to ``stack``; the next index."""
    ch = text[i]
    top = stack[-1] if stack else None
    if ch in "{[":
        stack.append(_Frame(ch == "[", 0 if ch == "[" else None, ch == "["))
    elif ch in "}]" and stack:
        stack.pop()
    elif ch == ":" and top is not None and not top.array:
        top.in_value = True
    elif ch == "," and top is not None:
        if top.array:
            top.key = int(top.key or 0) + 1
        else:
            top.key, top.in_value = None, False
    return i + 1


def _at(text: str, i: int, stack: list[_Frame]) -> str:
    """The place of the (non-string) character at ``i``: a comma or a closing
    bracket is its container's, a colon its member's, anything else the
    value being written."""
    ch = text[i]
    if ch in ",}]" and stack:
        return _pointer(stack[:-1])
    if ch == ":" and stack and not stack[-1].array:
        stack[-1].in_value = True
    return _pointer(stack)


def json_pointer_at(text: str, pos: int) -> str:
    """The JSON pointer (RFC 6901; ``""``: the root) of the member or element
    the character at ``pos`` belongs to: a key's characters and its colon
    belong to its member, a comma or a closing bracket to the container;
    ``AFTER`` past the end of a complete answer."""
    stack: list[_Frame] = []
    i, started = 0, False
    while i < len(text) and i <= pos:
        if text[i] == '"':
            end = _string_end(text, i)
            top = stack[-1] if stack else None
            if top is not None and not top.array and not top.in_value:
                top.key = text[i + 1 : max(i + 1, end - 1)]
                top.in_value = pos < end  # inside the key: its member
            if pos < end:
                return _pointer(stack)
            started, i = True, end
            continue
        if i == pos:
            return _at(text, i, stack)
        started = started or not text[i].isspace()
        i = _step(text, i, stack)
    if started and not stack:
        return AFTER
    return _pointer(stack)
