"""The prompts and schemas ``engines cost`` sends: the BFCL v3 simple
contract's items (each its own schema, the prompt of its prompt_only and
constrained arms, so the grammar is the only difference between the arms),
a user's JSONL of ``{"prompt", "schema"}``, or a real JSON Schema corpus
(a folder of ``*.json`` or a JSONL of schemas, JSONSchemaBench's layout, read
as ``dataset build --schemas`` reads it: each schema asked for with the
prompt of the prompt_only and constrained arms, the unusable ones left out
with why); and the per-request unique schema of the cold-cache measurement."""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conformbench.errors import ConformbenchError, UsageError
from conformbench.files import MAX_SCHEMA_BYTES, regular_file
from conformbench.jsontypes import Schema
from conformbench.records.items import Condition, TaskOptions
from conformbench.records.prompt import Prompt
from conformbench.schemas.case import ExcludedSchema
from conformbench.schemas.external import SchemaTooDeepError, loads_schema, read_external
from conformbench.tasks.bfcl.task import BfclSimpleTask
from conformbench.tasks.contract_prompts import json_contract_request, user_prompt
from conformbench.validator.schema_validator import validator_for

__all__ = ["COLD_MARK", "PROMPT_SCHEMA_CHARS", "CostPrompt", "bfcl_prompts", "corpus_prompts", "file_prompts",
           "unique_schema"]

#: the largest schema (its JSON text, references bundled in) a corpus prompt shows
PROMPT_SCHEMA_CHARS = 64_000

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
        row = loads_schema(line)
    except SchemaTooDeepError as exc:
        raise UsageError(f"{where} is {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{where} is not JSON: {exc}") from None
    if not isinstance(row, dict) or not isinstance(row.get("prompt"), str) or not isinstance(row.get("schema"), dict):
        raise UsageError(f'{where}: expected {{"prompt": TEXT, "schema": OBJECT}} (an optional "id")')
    ident = row.get("id")
    return (None if ident is None else str(ident)[:200]), row["prompt"], row["schema"]


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The numbered lines of ``path``, read one at a time: a line over
    ``MAX_SCHEMA_BYTES`` (the limit a corpus's schema file has) is refused unread."""
    regular_file(path, f"prompts file {path}")
    try:
        with path.open("rb") as fh:
            for number in itertools.count(1):
                raw = fh.readline(MAX_SCHEMA_BYTES + 1)
                if not raw:
                    return
                if len(raw) > MAX_SCHEMA_BYTES:
                    raise UsageError(f"{path} line {number} is over {MAX_SCHEMA_BYTES >> 20} MiB, the limit of a "
                                     "schema (as --schemas reads them)")
                try:
                    yield number, raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise UsageError(f"{path} line {number} is not UTF-8 text") from None
    except OSError as exc:
        raise UsageError(f"cannot read prompts file {path}: {exc.strerror or exc}") from None


def file_prompts(path: Path, n: int) -> list[CostPrompt]:
    """The first ``n`` rows of a JSONL file of ``{"prompt", "schema"}`` (and
    an optional ``id``), read a line at a time; each schema within the
    limits a corpus's are (``MAX_SCHEMA_BYTES``, ``PROMPT_SCHEMA_CHARS``,
    usable); UsageError in one line for a bad row or schema."""
    out: list[CostPrompt] = []
    for number, line in _lines(path):
        if len(out) == n:
            break
        if not line.strip():
            continue
        where = f"{path} line {number}"
        ident, text, schema = _row(line, where)
        why = _unusable(schema)
        if why is not None:
            raise UsageError(f"{where}: the schema is refused: {why}")
        out.append(CostPrompt(ident or f"line-{number}", user_prompt(text), schema))
    if len(out) < n:
        raise UsageError(f"{path} holds {len(out)} prompts; -n {n} asks for more")
    return out


def _unusable(schema: object) -> str | None:
    """Why a corpus schema is left out, or None."""
    from conformbench.audits.engine_check.sources import oversized_pattern

    if not isinstance(schema, dict):
        return f"not a schema object: a JSON {type(schema).__name__} (nothing for a grammar to constrain)"
    if len(text := json.dumps(schema, ensure_ascii=False)) > PROMPT_SCHEMA_CHARS:
        return f"{len(text)} characters of schema, over the {PROMPT_SCHEMA_CHARS} a prompt shows"
    try:
        validator_for(schema)
    except ConformbenchError as exc:
        return f"not usable: {exc}"
    return oversized_pattern(schema)


def corpus_prompts(path: Path, n: int) -> tuple[list[CostPrompt], tuple[ExcludedSchema, ...]]:
    """The first ``n`` usable schemas of a corpus (a folder of *.json or a
    JSONL of schemas), each asked for with ``json_contract_request``, and
    those left out before them, each with why; UsageError in one line for a
    path that holds no corpus or too few usable schemas."""
    prompts: list[CostPrompt] = []
    excluded: list[ExcludedSchema] = []
    for entry in read_external(path) if n > 0 else ():  # read as reached: nothing past -n is parsed
        if isinstance(entry, ExcludedSchema):
            excluded.append(entry)
        elif (why := _unusable(entry.schema)) is not None:
            excluded.append(ExcludedSchema(id=entry.id[:200], source=entry.source, reason=why))
        else:
            prompts.append(CostPrompt(entry.id[:200], user_prompt(json_contract_request(entry.schema)), entry.schema))
            if len(prompts) == n:
                break
    if len(prompts) < n:
        first = f"; the first left out: {excluded[0].source}: {excluded[0].reason}" if excluded else ""
        raise UsageError(f"{path} holds {len(prompts)} usable schemas ({len(excluded)} left out{first}); "
                         f"-n {n} asks for more")
    return prompts, tuple(excluded)


def unique_schema(schema: Schema) -> tuple[Schema, str]:
    """``schema`` with a fresh nonce in its root ``$comment`` (a cache keyed
    by the schema's text never hits it), and the nonce."""
    nonce = uuid.uuid4().hex
    return {**schema, COLD_MARK: f"conformbench engines cost, unique request {nonce}"}, nonce
