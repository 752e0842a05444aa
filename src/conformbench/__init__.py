"""conformbench: how well language models honour constraints written as code,
and what a grammar costs or buys.

The public API is what ``__all__`` lists (tested in tests/test_public_api.py);
everything else is internal and may change.

The names are imported on first use (PEP 562): importing any
``conformbench.<module>`` runs this file first, and an eager import of every
public name made each command's start (``conformbench score`` included) pay
for the runner, schema generator, engines and scoring alike. The four
registries named like their subpackages (``arms``, ``backends``, ``engines``,
``tasks``) too (issue #58: their records took a third of every command's
start): see ``_Package``.
"""

from __future__ import annotations

import importlib as _importlib
import sys as _sys
import types as _types
import typing as _typing

from conformbench._version import __version__

if _typing.TYPE_CHECKING:
    from conformbench.api import (
        CheckOptions,
        CheckResult,
        CostOptions,
        CostResult,
        ProbeOptions,
        ProbeResult,
        check,
        cost,
        probe,
        run,
        score,
    )
    from conformbench.arms.base import Arm, arms
    from conformbench.backends.base import Backend, backends
    from conformbench.backends.manifest import BackendManifest, BackendOption
    from conformbench.engines.base import Engine, engines
    from conformbench.errors import (
        BackendError,
        CanaryFailedError,
        ConformbenchError,
        GateNotEvaluableError,
        SchemaError,
        UnknownNameError,
        UnsupportedSchemaError,
        UsageError,
    )
    from conformbench.formats.base import (
        OutputFormat,
        ParsedOutput,
        SchemaFormat,
        output_formats,
        schema_formats,
    )
    from conformbench.jsontypes import JSONValue, Schema
    from conformbench.records.generation import (
        BackendConfig,
        Constraint,
        DecodingSettings,
        GenerationRequest,
        GenerationResult,
    )
    from conformbench.records.items import Condition, Item, ItemScore, TaskOptions
    from conformbench.records.prompt import Message, Prompt
    from conformbench.records.spec import RunSpec
    from conformbench.reports.publish import Published, publish
    from conformbench.reports.rescore import score_replays
    from conformbench.runner.run import RunSummary, execute
    from conformbench.runner.run_options import RunOptions
    from conformbench.runner.shipped import shipped_replay
    from conformbench.runner.spec import load_spec_file, parse_spec
    from conformbench.schemas import SchemaCase, load_dataset
    from conformbench.schemas.build import BuildOptions, BuildResult, build_dataset
    from conformbench.scoring.sections import Section, sections
    from conformbench.scoring.table import ScoredTable
    from conformbench.tasks.base import Task, tasks
    from conformbench.tasks.contract_task import ContractTask
    from conformbench.tasks.extract import answer_line, normalize_text
    from conformbench.tasks.grid import Axis, TaskParams
    from conformbench.validator import (
        SchemaValidator,
        Violation,
        check_schema,
        validator_for,
    )

#: the registries named like the subpackage defining each -> that module
_REGISTRIES: dict[str, str] = {
    "arms": "conformbench.arms.base",
    "backends": "conformbench.backends.base",
    "engines": "conformbench.engines.base",
    "tasks": "conformbench.tasks.base",
}

#: public name -> the module defining it
_EXPORTS: dict[str, str] = {
    "Arm": "conformbench.arms.base",
    "Backend": "conformbench.backends.base",
    "Engine": "conformbench.engines.base",
    "Condition": "conformbench.records.items",
    "Item": "conformbench.records.items",
    "ItemScore": "conformbench.records.items",
    "TaskOptions": "conformbench.records.items",
    "Task": "conformbench.tasks.base",
    "BackendError": "conformbench.errors",
    "CanaryFailedError": "conformbench.errors",
    "ConformbenchError": "conformbench.errors",
    "GateNotEvaluableError": "conformbench.errors",
    "SchemaError": "conformbench.errors",
    "UnknownNameError": "conformbench.errors",
    "UnsupportedSchemaError": "conformbench.errors",
    "UsageError": "conformbench.errors",
    "OutputFormat": "conformbench.formats.base",
    "ParsedOutput": "conformbench.formats.base",
    "SchemaFormat": "conformbench.formats.base",
    "output_formats": "conformbench.formats.base",
    "schema_formats": "conformbench.formats.base",
    "run": "conformbench.api",
    "score": "conformbench.api",
    "probe": "conformbench.api",
    "check": "conformbench.api",
    "cost": "conformbench.api",
    "ProbeOptions": "conformbench.api",
    "ProbeResult": "conformbench.api",
    "CheckOptions": "conformbench.api",
    "CheckResult": "conformbench.api",
    "CostOptions": "conformbench.api",
    "CostResult": "conformbench.api",
    "BackendManifest": "conformbench.backends.manifest",
    "BackendOption": "conformbench.backends.manifest",
    "BackendConfig": "conformbench.records.generation",
    "Constraint": "conformbench.records.generation",
    "DecodingSettings": "conformbench.records.generation",
    "GenerationRequest": "conformbench.records.generation",
    "GenerationResult": "conformbench.records.generation",
    "ContractTask": "conformbench.tasks.contract_task",
    "JSONValue": "conformbench.jsontypes",
    "Schema": "conformbench.jsontypes",
    "answer_line": "conformbench.tasks.extract",
    "Axis": "conformbench.tasks.grid",
    "TaskParams": "conformbench.tasks.grid",
    "normalize_text": "conformbench.tasks.extract",
    "Message": "conformbench.records.prompt",
    "Prompt": "conformbench.records.prompt",
    "Published": "conformbench.reports.publish",
    "publish": "conformbench.reports.publish",
    "RunOptions": "conformbench.runner.run_options",
    "RunSummary": "conformbench.runner.run",
    "shipped_replay": "conformbench.runner.shipped",
    "execute": "conformbench.runner.run",
    "RunSpec": "conformbench.records.spec",
    "load_spec_file": "conformbench.runner.spec",
    "parse_spec": "conformbench.runner.spec",
    "SchemaCase": "conformbench.schemas",
    "load_dataset": "conformbench.schemas",
    "BuildOptions": "conformbench.schemas.build",
    "BuildResult": "conformbench.schemas.build",
    "build_dataset": "conformbench.schemas.build",
    "score_replays": "conformbench.reports.rescore",
    "ScoredTable": "conformbench.scoring.table",
    "Section": "conformbench.scoring.sections",
    "sections": "conformbench.scoring.sections",
    "SchemaValidator": "conformbench.validator",
    "Violation": "conformbench.validator",
    "check_schema": "conformbench.validator",
    "validator_for": "conformbench.validator",
}

if not _typing.TYPE_CHECKING:  # mypy reads the imports above; a typo stays an error

    def __getattr__(name: str) -> object:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'conformbench' has no attribute {name!r}")
        value = getattr(_importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))

    def _registry(name: str) -> property:
        def get(package: _types.ModuleType) -> object:
            value = getattr(_importlib.import_module(_REGISTRIES[name]), name)
            package.__dict__[name] = value  # listed by vars(); the property still answers first
            return value

        return property(get)

    class _Package(_types.ModuleType):
        """This package, whose registries ``arms``, ``backends``, ``engines``
        and ``tasks`` are imported on first use although each is named like
        the subpackage defining it: importing a subpackage sets the package's
        attribute of its name to the module, which is ignored here, so the
        name stays the registry's (as the eager import that bound it after
        the subpackage's did)."""

        def __setattr__(self, name: str, value: object) -> None:
            if name in _REGISTRIES and isinstance(value, _types.ModuleType):
                return
            super().__setattr__(name, value)

    for _name in _REGISTRIES:
        setattr(_Package, _name, _registry(_name))
    _sys.modules[__name__].__class__ = _Package


__all__ = [
    "Arm",
    "Axis",
    "Backend",
    "BackendConfig",
    "BackendError",
    "BackendManifest",
    "BackendOption",
    "BuildOptions",
    "BuildResult",
    "CanaryFailedError",
    "CheckOptions",
    "CheckResult",
    "Condition",
    "ConformbenchError",
    "Constraint",
    "ContractTask",
    "CostOptions",
    "CostResult",
    "DecodingSettings",
    "Engine",
    "GateNotEvaluableError",
    "GenerationRequest",
    "GenerationResult",
    "Item",
    "ItemScore",
    "JSONValue",
    "Message",
    "OutputFormat",
    "ParsedOutput",
    "ProbeOptions",
    "ProbeResult",
    "Prompt",
    "Published",
    "RunOptions",
    "RunSpec",
    "RunSummary",
    "Schema",
    "SchemaCase",
    "SchemaError",
    "SchemaFormat",
    "SchemaValidator",
    "ScoredTable",
    "Section",
    "Task",
    "TaskOptions",
    "TaskParams",
    "UnknownNameError",
    "UnsupportedSchemaError",
    "UsageError",
    "Violation",
    "__version__",
    "answer_line",
    "arms",
    "backends",
    "build_dataset",
    "check",
    "check_schema",
    "cost",
    "engines",
    "execute",
    "load_dataset",
    "load_spec_file",
    "normalize_text",
    "output_formats",
    "parse_spec",
    "probe",
    "publish",
    "run",
    "schema_formats",
    "score",
    "score_replays",
    "sections",
    "shipped_replay",
    "tasks",
    "validator_for",
]
