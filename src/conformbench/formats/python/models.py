"""Object schemas as ``BaseModel`` classes, and the generated module's
layout (imports, classes children first, the root class last)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from conformbench.errors import SchemaError
from conformbench.formats.python.expr import TRUE, Expr, and_, declared_test, not_, or_
from conformbench.formats.python.source import (
    Imports,
    annotation_text,
    literal,
    needs_strict,
    regex_literal,
    string_literal,
)
from conformbench.formats.python.typed import ANY, Typed
from conformbench.validator.schema_validator import validator_for

if TYPE_CHECKING:
    from conformbench.formats.python.type_builder import Builder

__all__ = [
    "bare_annotation", "build_model", "class_key", "config_line", "docstring", "field_line", "quoted",
    "validator_lines",
]

_OBJECT_FRAGMENT_MESSAGES = {
    "not": "matches a schema it must not match",
    "if": "breaks an if/then/else condition",
    "anyOf": "matches none of the alternatives",
    "oneOf": "must match exactly one alternative",
    "allOf": "breaks one of the allOf conditions",
}


def class_key(path: tuple[str, ...]) -> str:
    return "/".join(path) if path else "#"


def build_model(
    b: Builder, schema: dict[str, Any], path: tuple[str, ...], hint: str,
    fragments: list[tuple[str, Any]], key: str | None = None,
) -> str:
    """Add a BaseModel class for the object schema; returns the class name."""
    key = key or class_key(path)
    if key in b.class_keys:
        return b.class_keys[key]
    name = b.names.root if key == "#" else b.names.class_name(hint, key)
    b.class_keys[key] = name
    b.current.append(name)
    b.patterns.append(False)
    try:
        body = ModelBody(b, schema, path)
        body.render(fragments)
    finally:
        b.current.pop()
        pattern = b.patterns.pop()
    strict = needs_strict("\n".join([*body.fields, body.extra_field or ""]))
    config = config_line(body.extra, pattern, strict)
    head = [line for line in (docstring(schema), config, body.extra_field) if line]
    sections = [head, body.fields, *body.validators, _model_validator(body.checks, name)]
    text = "\n\n".join("\n".join(section) for section in sections if section) or "    pass"
    b.classes.append(f"class {name}(BaseModel):\n{text}")
    return name


def config_line(extra: str | None, pattern: bool, strict: bool) -> str | None:
    items = ["strict=True"] if strict else []
    if extra:
        items.append(f'extra="{extra}"')
    if pattern:
        items.append('regex_engine="python-re"')
    return f"    model_config = ConfigDict({', '.join(items)})" if items else None


@dataclass
class ModelBody:
    """Fields, field validators and the model's own checks. The model checks
    run after validation (``mode="after"``: the fields keep JSON-mode
    parsing) on ``self.model_fields_set`` and the raw ``self.model_extra``."""

    b: Builder
    schema: dict[str, Any]
    path: tuple[str, ...]
    fields: list[str] = field(default_factory=list)
    validators: list[list[str]] = field(default_factory=list)
    checks: list[list[str]] = field(default_factory=list)
    #: whether a check reads the whole object as data (then ``data`` is defined first)
    uses_data: bool = False
    extra: str | None = None
    extra_field: str | None = None
    #: property name -> Python field name
    pynames: dict[str, str] = field(default_factory=dict)

    def render(self, fragments: list[tuple[str, Any]]) -> None:
        self._properties()
        self._extra()
        self._counts()
        self._dependencies()
        for keyword, fragment in fragments:
            self._condition(keyword, fragment)
        if self.uses_data:
            self.checks.insert(0, ['data = self.model_dump(mode="json", by_alias=True, exclude_unset=True)'])

    @property
    def closed(self) -> bool:
        """No property outside ``properties`` can be present."""
        return self.extra == "forbid"

    def absent(self, key: str) -> Expr:
        if key in self.pynames:
            return Expr(f"{string_literal(self.pynames[key])} not in self.model_fields_set")
        if self.closed:
            return Expr("True")
        self.extra = "allow"
        return Expr(f"{string_literal(key)} not in self.model_extra")

    def present(self, key: str) -> Expr:
        """Property ``key`` was given (declared ones by field name, others among the extras)."""
        if key in self.pynames:
            return Expr(f"{string_literal(self.pynames[key])} in self.model_fields_set")
        if self.closed:
            return Expr("False")
        self.extra = "allow"
        return Expr(f"{string_literal(key)} in self.model_extra")

    def _properties(self) -> None:
        taken: set[str] = set()
        required = list(dict.fromkeys(k for k in self.schema.get("required", []) if isinstance(k, str)))
        properties: dict[str, Any] = self.schema.get("properties") or {}
        banned = []
        for key, sub in properties.items():
            if sub is False:
                banned.append(key)
                continue
            typed = self.b.typed(sub, (*self.path, "properties", key), key)
            self._field(key, typed, key in required, sub, taken)
        for key in required:
            if key not in properties:
                self._field(key, ANY, True, True, taken)
        self._banned = banned

    def _field(self, key: str, typed: Typed, required: bool, sub: Any, taken: set[str]) -> None:
        name = self.b.names.field_name(key, taken)
        self.pynames[key] = name
        self.fields.append(field_line(name, key, typed, required, sub))
        if typed.rules:
            self.validators.append(validator_lines(name, typed))

    def _extra(self) -> None:
        patterns: dict[str, Any] = self.schema.get("patternProperties") or {}
        extra = self.schema.get("additionalProperties", self.schema.get("unevaluatedProperties", True))
        names = self.schema.get("propertyNames", True)
        if not patterns and names is True:
            if extra is False:
                self.extra = "forbid"
            elif extra is not True:
                typed = self.b.typed(extra, (*self.path, "additionalProperties"), self.b.current[-1] + "Value")
                if typed.rules:
                    self._name_loop(patterns, extra, names)
                else:
                    self.extra = "allow"
                    annotation = quoted(typed.annotation()) if typed.forward else typed.annotation()
                    self.extra_field = f"    __pydantic_extra__: dict[str, {annotation}] = Field(init=False)"
        else:
            self._name_loop(patterns, extra, names)
        for key in self._banned:
            self.checks.append(_raise_if(self.present(key), string_literal(f"{key!r} is not allowed")))

    def _name_loop(self, patterns: dict[str, Any], extra: Any, names: Any) -> None:
        """Properties outside ``properties`` checked one by one:
        patternProperties, additionalProperties beside them, propertyNames."""
        self._declared_names(patterns, names)
        lines = []
        for pattern, sub in patterns.items():
            test = self._test(sub, "value", None, ("patternProperties", pattern))
            if test is not None and test != TRUE:
                found = Expr(f"re.search({regex_literal(pattern)}, key)")
                lines += _raise_if(and_(found, not_(test)), "f\"{key!r} is not valid\"")
        if extra is not True:
            test = self._test(extra, "value", None, ("additionalProperties",))
            if test is not None:
                unmatched = not_(declared_test([], list(patterns), "key", Imports()))
                message = "f\"{key!r} is not allowed\"" if test == Expr("False") else "f\"{key!r} is not valid\""
                lines += _raise_if(and_(unmatched, not_(test)), message)
        if names is not True:
            test = self._test(names, "key", frozenset({"string"}), ("propertyNames",))
            if test is not None and test != TRUE:
                lines += _raise_if(not_(test), "f\"property name {key!r} is not allowed\"")
        if lines:
            self.extra = "allow"
            loop = "for key, value in self.model_extra.items():" if any("value" in line for line in lines) \
                else "for key in self.model_extra:"
            self.checks.append([loop, *("    " + line for line in lines)])

    def _declared_names(self, patterns: dict[str, Any], names: Any) -> None:
        """Declared properties that a pattern or propertyNames also judges."""
        import re

        from conformbench.validator.pattern_size import MAX_PATTERN_SIZE, expanded_size

        # an over-large pattern is refused where it is rendered: never compile it here
        sized = [p for p in patterns if expanded_size(p) <= MAX_PATTERN_SIZE]
        for key in self.pynames:
            if any(re.search(p, key) for p in sized):
                self.b.report(self.path, "patternProperties", f"property {key!r} is checked as its field only",
                              (next(p for p in sized if re.search(p, key)),))
        if names is True:
            return
        try:
            judge = validator_for(names)
        except SchemaError:  # a reference the standalone subschema cannot resolve
            self.b.report(self.path, "propertyNames", "not checked on the declared properties")
            return
        for key in self.pynames:
            if not judge.is_valid(key):
                message = string_literal(f"property name {key!r} is not allowed")
                self.checks.append(_raise_if(self.present(key), message))

    def _test(self, schema: Any, var: str, known: frozenset[str] | None, where: tuple[str, ...]) -> Expr | None:
        test = self.b.test(schema, var, known, path=(*self.path, *where))
        if test is None:
            self.b.report(self.path, where[0], "a condition the rendering cannot state is left out", where[1:])
        return test

    def _count(self) -> str:
        """How many properties were given (with extra="allow" the extras
        are in model_fields_set too)."""
        if not self.closed:
            self.extra = "allow"
        return "len(self.model_fields_set)"

    def _counts(self) -> None:
        low, high = self.schema.get("minProperties"), self.schema.get("maxProperties")
        low = low if isinstance(low, int) and low > 0 else None
        high = high if isinstance(high, int) else None
        if low is None and high is None:
            return
        count = self._count()
        if low is not None and high is not None:
            check = Expr(f"not {low} <= {count} <= {high}", 1)
            message = f'"needs {low} to {high} properties"'
        elif low is not None:
            check, message = Expr(f"{count} < {low}"), f'"needs at least {low} propert{"y" if low == 1 else "ies"}"'
        else:
            check, message = Expr(f"{count} > {high}"), f'"allows at most {high} propert{"y" if high == 1 else "ies"}"'
        self.checks.append(_raise_if(check, message))

    def _dependencies(self) -> None:
        rules = dict(self.schema.get("dependentRequired") or {})
        shapes = dict(self.schema.get("dependentSchemas") or {})
        for key, value in (self.schema.get("dependencies") or {}).items():
            (rules if isinstance(value, list) else shapes)[key] = value
        for key, needed in rules.items():
            if needed:
                missing = [self.absent(n) for n in needed]
                verb = "is" if len(needed) == 1 else "are"
                message = string_literal(f"{', '.join(map(repr, needed))} {verb} required when {key!r} is present")
                self.checks.append(_raise_if(and_(self.present(key), or_(*missing)), message))
        for key, sub in shapes.items():
            test = self._test(sub, "data", frozenset({"object"}), ("dependentSchemas", key))
            if test is not None and test != TRUE:
                self.uses_data = True
                self.checks.append(_raise_if(and_(self.present(key), not_(test)),
                                             string_literal(f"breaks the rule for {key!r}")))

    def _condition(self, keyword: str, fragment: Any) -> None:
        test = self.b.test(fragment, "data", frozenset({"object"}), path=self.path)
        if test is None:
            self.b.report(self.path, keyword, "a condition the rendering cannot state is left out")
        elif test != TRUE:
            self.uses_data = True
            if not self.closed:
                self.extra = "allow"
            message = string_literal(_OBJECT_FRAGMENT_MESSAGES.get(keyword, "is not valid"))
            self.checks.append(_raise_if(not_(test), message))


def quoted(annotation: str) -> str:
    """A forward-reference annotation as a string literal."""
    return f'"{annotation}"' if '"' not in annotation and "\\" not in annotation else repr(annotation)


def _raise_if(condition: Expr, message: str) -> list[str]:
    if condition == TRUE:
        return [f"raise ValueError({message})"]
    return [f"if {condition.text}:", f"    raise ValueError({message})"]


def field_line(name: str, key: str, typed: Typed, required: bool, sub: Any) -> str:
    """``name: T``, ``name: T = None`` or ``name: T = Field(...)``."""
    annotation = bare_annotation(typed)
    if typed.forward:
        annotation = quoted(annotation)
    kwargs = list(typed.args)
    if name != key:
        kwargs.append(f"alias={string_literal(key)}")
    description = annotation_text(sub) if isinstance(sub, dict) else None
    if description:
        kwargs.append(f"description={string_literal(description)}")
    default = None if required else _default(sub)
    if not kwargs:
        return f"    {name}: {annotation}" + ("" if default is None else f" = {default}")
    return f"    {name}: {annotation} = Field({', '.join(([] if default is None else [default]) + kwargs)})"


def bare_annotation(typed: Typed) -> str:
    """The annotation without its Field constraints when those go on the field."""
    if not typed.args:
        return typed.annotation()
    return typed.base + (" | None" if typed.nullable and typed.base != "Any" else "")


def _default(sub: Any) -> str:
    if isinstance(sub, dict) and "default" in sub:
        return literal(sub["default"])
    return "None"


def validator_lines(name: str, typed: Typed) -> list[str]:
    simple = typed.base if not typed.forward and len(typed.base) <= 30 and "Annotated" not in typed.base else "Any"
    hint = f"{simple} | None" if typed.nullable and simple != "Any" else simple
    lines = [f'    @field_validator("{name}")', "    @classmethod", f"    def check_{name}(cls, v: {hint}) -> {hint}:"]
    for rule in typed.value_rules():
        lines += ["        " + line for line in _raise_if(rule.bad("v", 0), string_literal(rule.message))]
    return [*lines, "        return v"]


def _model_validator(checks: list[list[str]], name: str) -> list[str]:
    if not checks:
        return []
    body = ["        " + line for check in checks for line in check]
    head = ['    @model_validator(mode="after")', f'    def check_object(self) -> "{name}":']
    return [*head, *body, "        return self"]


def docstring(schema: dict[str, Any]) -> str | None:
    text = annotation_text(schema)
    if text is None:
        return None
    text = text.strip()
    if '"""' in text or "\\" in text or text.endswith('"'):
        return "    " + string_literal(text)
    return f'    """{text}"""'
