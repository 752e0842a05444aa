"""conformbench: how well language models honour constraints written as code,
and what a grammar costs or buys.

The public API is what ``__all__`` lists (tested in tests/test_public_api.py);
everything else is internal and may change.
"""

from __future__ import annotations

from conformbench._version import __version__
from conformbench.arms import Arm, arms
from conformbench.engines.base import Engine, engines
from conformbench.errors import (
    BackendError,
    CanaryFailedError,
    ConformbenchError,
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
from conformbench.models.base import (
    Backend,
    BackendConfig,
    Constraint,
    DecodingSettings,
    GenerationRequest,
    GenerationResult,
    Message,
    Prompt,
    backends,
)
from conformbench.reports.publish import Published, publish
from conformbench.runner.run import RunSummary, execute
from conformbench.runner.spec import RunSpec, load_spec_file, parse_spec
from conformbench.schemas import SchemaCase, load_dataset
from conformbench.schemas.build import BuildOptions, BuildResult, build_dataset
from conformbench.scoring.score import score_replays
from conformbench.tasks.base import Condition, Item, ItemScore, Task, TaskOptions, tasks
from conformbench.validation import SchemaValidator, Violation, check_schema, validator_for

__all__ = [
    "Arm",
    "Backend",
    "BackendConfig",
    "BackendError",
    "BuildOptions",
    "BuildResult",
    "CanaryFailedError",
    "Condition",
    "ConformbenchError",
    "Constraint",
    "DecodingSettings",
    "Engine",
    "GenerationRequest",
    "GenerationResult",
    "Item",
    "ItemScore",
    "Message",
    "OutputFormat",
    "ParsedOutput",
    "Prompt",
    "Published",
    "RunSpec",
    "RunSummary",
    "SchemaCase",
    "SchemaError",
    "SchemaFormat",
    "SchemaValidator",
    "Task",
    "TaskOptions",
    "UnknownNameError",
    "UnsupportedSchemaError",
    "UsageError",
    "Violation",
    "__version__",
    "arms",
    "backends",
    "build_dataset",
    "check_schema",
    "engines",
    "execute",
    "load_dataset",
    "load_spec_file",
    "output_formats",
    "parse_spec",
    "publish",
    "schema_formats",
    "score_replays",
    "tasks",
    "validator_for",
]
