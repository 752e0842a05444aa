"""JSON Schema -> Lark grammar of our YAML answers (block style).

The layout is the one ``formats.yaml.format`` dumps: two spaces per
mapping level, ``key: scalar`` on one line, a nested mapping or sequence
on the following lines, sequence items ``- `` at their key's own column
(PyYAML's way) or two columns in, ``{}``/``[]`` for empty containers.
Indentation is known from the schema's nesting, so each level is written
into the grammar as literal text. A value the schema leaves open (``{}``)
may also be written in flow style (``[1, "a"]``), which needs no
indentation and so nests without limit.

Scalar spellings are in ``yaml_scalars``; what the grammar does not state
is listed by ``read.unenforced_keywords``.
"""

from __future__ import annotations

from conformbench.engines.grammars.lark_writer import LarkBuilder, seq
from conformbench.engines.grammars.numbers import number_terminal
from conformbench.engines.grammars.objects import array_body, object_body
from conformbench.engines.grammars.read import const_shape, read_shape
from conformbench.engines.grammars.shapes import NumberRule, Shape, StringRule
from conformbench.engines.grammars.strings import lit, literal_regex
from conformbench.engines.grammars.yaml_scalars import (
    BOOLEAN,
    NULL,
    key_literals,
    key_terminal,
    quoted_terminal,
    string_terminal,
    value_literals,
)
from conformbench.errors import UnsupportedSchemaError
from conformbench.jsontypes import Schema

__all__ = ["yaml_grammar"]

#: deepest column at which an open value ({}) is still written in block style
_GENERIC_BLOCK_COLUMN = 6


def _indent(column: int) -> str:
    return lit("\n" + " " * column)


class _YamlCompiler:
    def __init__(self) -> None:
        self.b = LarkBuilder("y")
        self._consts: dict[tuple[int, int], Shape] = {}

    def const(self, shape: Shape, index: int) -> Shape:
        """The structure of the shape's ``index``-th (container) choice, made once."""
        key = (id(shape), index)
        if key not in self._consts:
            assert shape.choices is not None
            self._consts[key] = const_shape(shape.choices[index], shape.guide)
        return self._consts[key]

    # ------------------------------------------------------------ scalars

    def scalar(self, shape: Shape) -> str | None:
        """One terminal for every scalar value of the shape (None: none)."""
        bodies: list[str] = []
        if shape.choices is not None:
            for value in shape.choices:
                if not isinstance(value, (dict, list)):
                    bodies += [lit(s) for s in value_literals(value)]
        else:
            kinds = shape.kinds
            if "null" in kinds:
                bodies += [lit(s) for s in NULL]
            if "boolean" in kinds:
                bodies += [lit(s) for s in BOOLEAN]
            if kinds & {"integer", "number"}:
                bodies.append(number_terminal(shape.number, shape.integer))
            if "string" in kinds:
                bodies.append(string_terminal(shape.string))
        return self.b.terminal(" | ".join(bodies)) if bodies else None

    def flow(self) -> str:
        """Any JSON value in flow style (open values only)."""
        quoted = quoted_terminal(StringRule())
        scalar = self.b.terminal(" | ".join([
            *(lit(s) for s in (*NULL, *BOOLEAN)), number_terminal(NumberRule(), False), quoted]))
        key = self.b.terminal(quoted)

        def alternatives() -> list[str | None]:
            name = self.b.reserved("flow")
            pair = f'{key} ": " {name}'
            return [scalar, '"[]"', '"{}"', f'"[" {name} (", " {name})* "]"', f'"{{" {pair} (", " {pair})* "}}"']

        name = self.b.rule("flow", alternatives)
        assert name is not None
        return name

    # ---------------------------------------------------------- containers

    def containers(self, shape: Shape, column: int) -> list[tuple[str, str | None]]:
        """(kind, rule) of the non-empty block containers the shape allows
        at ``column`` (the column of their first character)."""
        out: list[tuple[str, str | None]] = []
        if shape.choices is not None:
            for i, value in enumerate(shape.choices):
                if isinstance(value, (dict, list)) and value:
                    out += self.containers(self.const(shape, i), column)
            return out
        if shape.anything and column > _GENERIC_BLOCK_COLUMN:
            return out
        if "object" in shape.kinds:
            out.append(("object", self.mapping(shape, column)))
        if "array" in shape.kinds:
            out.append(("array", self.sequence(shape, column)))
        return out

    def empties(self, shape: Shape) -> list[str]:
        """``{}`` / ``[]`` where the shape allows an empty container."""
        out = []
        if shape.choices is not None:
            out += [lit("{}") for v in shape.choices if isinstance(v, dict) and not v]
            out += [lit("[]") for v in shape.choices if isinstance(v, list) and not v]
            return out
        obj, arr = shape.obj, shape.array
        if "object" in shape.kinds and obj.min_props == 0 and not any(m.required for m in obj.members):
            out.append(lit("{}"))
        if "array" in shape.kinds and arr.min_items == 0:
            out.append(lit("[]"))
        return out

    def mapping(self, shape: Shape, column: int) -> str | None:
        """A block mapping whose first key is at ``column`` (already placed)."""
        rule = shape.obj
        declared = [literal_regex(m.name) for m in rule.members]

        def member(i: int, first: bool) -> str | None:
            m = rule.members[i]
            spellings = " | ".join(lit(s + ":") for s in key_literals(m.name))
            if not spellings:
                raise UnsupportedSchemaError("grammar", f"key {m.name!r} has no YAML spelling on one line")
            return seq("" if first else _indent(column), self.b.terminal(spellings),
                       self.after_key(m.shape, column))

        def extra(first: bool) -> str | None:
            alts = []
            for cls in rule.extras:
                key = self.b.terminal(key_terminal(cls.pattern, (*cls.excluded, *declared)))
                alts.append(seq("" if first else _indent(column), key, self.after_key(cls.shape, column)))
            return self.b.rule((shape, column, "extra", first), lambda: alts)

        return object_body(self.b, (shape, column, "map"), rule, member, extra, need_one=True)

    def sequence(self, shape: Shape, column: int) -> str | None:
        """A block sequence whose first ``- `` is at ``column`` (already placed)."""

        def element(item: Shape, first: bool) -> str | None:
            return seq("" if first else _indent(column), lit("- "), self.item(item, column + 2))

        return array_body(self.b, (shape, column, "seq"), shape.array, element)

    # -------------------------------------------------------------- values

    def after_key(self, shape: Shape, column: int) -> str | None:
        """What follows ``key:`` in a mapping whose keys are at ``column``."""

        def alternatives() -> list[str | None]:
            alts = [seq(lit(" "), self.scalar(shape))]
            alts += [seq(lit(" "), e) for e in self.empties(shape)]
            if shape.anything:
                alts.append(seq(lit(" "), self.flow()))
            for _kind, body in self.containers(shape, column + 2):
                alts.append(seq(_indent(column + 2), body))
            for kind, body in self.containers(shape, column):
                if kind == "array":
                    alts.append(seq(_indent(column), body))
            return alts

        return self.b.rule((shape, column, "after_key"), alternatives)

    def item(self, shape: Shape, column: int) -> str | None:
        """A value placed at ``column`` on its line (after ``- `` or at the root)."""

        def alternatives() -> list[str | None]:
            alts = [self.scalar(shape), *self.empties(shape)]
            if shape.anything:
                alts.append(self.flow())
            alts += [body for _, body in self.containers(shape, column)]
            return alts

        return self.b.rule((shape, column, "item"), alternatives)

    def document(self, shape: Shape) -> str:
        root = self.item(shape, 0)
        if root is None:
            raise UnsupportedSchemaError("grammar", "no YAML document satisfies the schema's shape")
        return f'"---\\n"? {root} ("\\n" | "\\n...\\n" | "\\n...")?'


def yaml_grammar(schema: Schema | bool) -> str:
    """The llguidance Lark grammar of YAML answers to ``schema``;
    UnsupportedSchemaError when the schema admits no answer."""
    compiler = _YamlCompiler()
    start = compiler.document(read_shape(schema).shape)
    return compiler.b.text(start)

