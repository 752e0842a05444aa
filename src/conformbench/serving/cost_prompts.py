"""The prompts and schemas ``engines cost`` sends: the BFCL v3 simple
contract's items (each its own schema, the prompt of its prompt_only and
constrained arms, so the grammar is the only difference between the arms),
or a user's JSONL of ``{"prompt", "schema"}``; and the per-request unique
schema of the cold-cache measurement."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from conformbench.errors import ConformbenchError, UsageError
from conformbench.files import jsonl_lines, read_text_file
from conformbench.jsontypes import Schema
from conformbench.records.items import Condition, TaskOptions
from conformbench.records.prompt import Prompt
from conformbench.tasks.bfcl.task import BfclSimpleTask
from conformbench.tasks.contract_prompts import user_prompt
from conformbench.validator.schema_validator import validator_for

__all__ = ["COLD_MARK", "CostPrompt", "bfcl_prompts", "file_prompts", "unique_schema"]

#: how a cold request's schema is made unique: this annotation at its root,
#: with a fresh random nonce (an annotation: what is valid does not change)
COLD_MARK = "$comment"


@dataclass(frozen=True)
class CostPrompt:
    id: str
    prompt: Prompt
    schema: Schema


def bfcl_prompts(n: int) -> list[CostPrompt]:
    """The first ``n`` BFCL v3 simple items: the prompt of their
    ``prompt_only[arguments]`` arm and their ``arguments`` schema."""
    task = BfclSimpleTask(TaskOptions(n=n))
    condition = Condition(arm="prompt_only", contract="arguments")
    return [CostPrompt(item.id, task.prompt(item, condition), task.schema(item, "arguments"))
            for item in task.items()]


def _row(line: str, where: str) -> tuple[str | None, str, Schema]:
    try:
        row = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{where} is not JSON: {exc}") from None
    if not isinstance(row, dict) or not isinstance(row.get("prompt"), str) or not isinstance(row.get("schema"), dict):
        raise UsageError(f'{where}: expected {{"prompt": TEXT, "schema": OBJECT}} (an optional "id")')
    ident = row.get("id")
    return (None if ident is None else str(ident)[:200]), row["prompt"], row["schema"]


def file_prompts(path: Path, n: int) -> list[CostPrompt]:
    """The first ``n`` rows of a JSONL file of ``{"prompt", "schema"}`` (and
    an optional ``id``); UsageError in one line for a bad row or schema."""
    out: list[CostPrompt] = []
    for number, line in enumerate(jsonl_lines(read_text_file(path, "prompts file")), start=1):
        if len(out) == n:
            break
        if not line.strip():
            continue
        where = f"{path} line {number}"
        ident, text, schema = _row(line, where)
        try:
            validator_for(schema)
        except ConformbenchError as exc:
            raise UsageError(f"{where}: the schema is not usable: {exc}") from None
        out.append(CostPrompt(ident or f"line-{number}", user_prompt(text), schema))
    if len(out) < n:
        raise UsageError(f"{path} holds {len(out)} prompts; -n {n} asks for more")
    return out


def unique_schema(schema: Schema) -> tuple[Schema, str]:
    """``schema`` with a fresh nonce in its root ``$comment`` (a cache keyed
    by the schema's text never hits it), and the nonce."""
    nonce = uuid.uuid4().hex
    return {**schema, COLD_MARK: f"conformbench engines cost, unique request {nonce}"}, nonce
