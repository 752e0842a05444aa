"""How the Pydantic rendering measures up on the default dataset (602
generated schemas, seed 0): share of characters before the first class,
length against the JSON rendering, and agreement with the reference
validator on every oracle instance (valid and one-keyword invalid).

Run it to print the numbers: ``PYTHONPATH=src python tests/formats/python/pydantic_measure.py``.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from conformbench.formats.json.format import JsonSchemaFormat
from conformbench.formats.python.format import load_model, python_rendering
from conformbench.schemas.config import GeneratorConfig
from conformbench.schemas.generator import GeneratedSchema, generate

__all__ = ["Disagreement", "Measures", "default_schemas", "measure", "pre_class_share"]


@dataclass(frozen=True)
class Disagreement:
    schema_index: int
    #: "valid", or the keyword the invalid instance violates
    keyword: str
    schema_path: str
    #: JSON pointers the renderer reported as not stated exactly
    inexact: tuple[str, ...]

    @property
    def explained(self) -> bool:
        """An invalid instance whose keyword was reported, or a valid one
        in a schema with a reported keyword."""
        if self.keyword == "valid":
            return bool(self.inexact)
        return self.schema_path in self.inexact


@dataclass
class Measures:
    shares: list[float] = field(default_factory=list)
    python_chars: list[int] = field(default_factory=list)
    json_chars: list[int] = field(default_factory=list)
    instances: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)
    inexact: Counter[str] = field(default_factory=Counter)
    texts: list[str] = field(default_factory=list)

    @property
    def median_share(self) -> float:
        return statistics.median(self.shares)

    @property
    def length_ratio(self) -> float:
        """Mean Python length over mean JSON length."""
        return statistics.mean(self.python_chars) / statistics.mean(self.json_chars)

    @property
    def mean_of_ratios(self) -> float:
        return statistics.mean(p / j for p, j in zip(self.python_chars, self.json_chars, strict=True))

    @property
    def agreement(self) -> float:
        return 1 - len(self.disagreements) / self.instances


def pre_class_share(text: str) -> float:
    """Characters before the first line that starts a class, over all."""
    start = 0 if text.startswith("class ") else text.find("\nclass ") + 1
    return start / len(text)


def default_schemas() -> list[GeneratedSchema]:
    return list(generate(602, 0, GeneratorConfig()))


def _accepts(model: type[BaseModel], instance: Any) -> bool:
    try:
        model.model_validate_json(json.dumps(instance))
    except ValidationError:
        return False
    return True


def measure(schemas: list[GeneratedSchema]) -> Measures:
    out = Measures()
    as_json = JsonSchemaFormat()
    for index, made in enumerate(schemas):
        rendering = python_rendering(made.schema)
        text = rendering.text
        out.texts.append(text)
        out.shares.append(pre_class_share(text))
        out.python_chars.append(len(text))
        out.json_chars.append(len(as_json.render(made.schema)))
        out.inexact.update(item.keyword for item in rendering.inexact)
        inexact = tuple(item.schema_path for item in rendering.inexact)
        model = load_model(text)
        checks = [(made.valid_instance, True, "valid", "")]
        checks += [(i.instance, False, i.keyword, i.schema_path) for i in made.invalid_instances]
        for instance, valid, keyword, path in checks:
            out.instances += 1
            if _accepts(model, instance) != valid:
                out.disagreements.append(Disagreement(index, keyword, path, inexact))
    return out


if __name__ == "__main__":
    found = measure(default_schemas())
    print(f"median share before the first class: {found.median_share:.1%}")
    print(f"mean length / mean JSON length: {found.length_ratio:.3f} "
          f"(mean of per-schema ratios {found.mean_of_ratios:.3f})")
    print(f"agreement: {found.instances - len(found.disagreements)}/{found.instances} = {found.agreement:.2%}")
    print(f"disagreements explained by a reported keyword: "
          f"{sum(d.explained for d in found.disagreements)}/{len(found.disagreements)}")
    print("inexact keywords by kind:", dict(found.inexact.most_common()))
