"""The options of a run, declared once: ``RunOptions`` is what
``conformbench run``'s flags, ``conformbench.run``'s keywords and the
overrides of a spec file's tables all are. Each field says, in its
metadata (``Flag``), the flag and help text the command line shows and the
spec table and key it sets, so an option is added here and nowhere else:
the CLI builds its parameters from these fields, ``build_spec`` applies them
by their ``table``, and the API checks keywords against them.

Options of one backend (``--batched``, ``--dtype``...) are not here: each
backend declares its own (``backends/backend_options.py``), and they reach the spec
through ``RunOptions.backend_options``; nor are a task's own options (its
``options_model``, ``tasks/task_options.py``), which reach its ``params``
through ``RunOptions.task_options``; nor the axes a task chooses by a key
of its spec table (the ConCodeEval tasks' ``--schema-format``,
``--output-format``, ``--shots``: each ``Axis`` declares its flag), which
reach every chosen task's table through ``RunOptions.axes``."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

__all__ = ["Flag", "RunKeywords", "RunOptions", "flags"]

#: where an option goes in the spec: every chosen task's table, its
#: ``params`` table, every model's table, ``[decoding]``, the top level;
#: "" for the options build_spec reads itself (task choice, model choice, switches)
Table = Literal["task", "params", "model", "decoding", "run", ""]

GRID, MODEL, DECODING, OUTPUT = "Run grid", "Model", "Decoding", "Output"


@dataclass(frozen=True)
class Flag:
    """How an option reads on the command line and where it lands in the
    spec. ``help`` may name registries as ``{tasks}``, ``{arms}``,
    ``{engines}``, ``{schema_formats}``, ``{output_formats}``,
    ``{backends}``, ``{matchers}``, ``{normalizers}`` (filled in by the CLI
    with what is registered now). Its bounds are not here: the spec field
    it sets declares them (pydantic's ``ge``/``le``, or a ``Range`` in its
    type), and the CLI reads them from there (``records.spec.spec_bounds``)."""

    flag: str
    help: str
    panel: str
    metavar: str | None = None
    table: Table = ""
    #: the key in that table (default: the field's name)
    key: str = ""
    short: str = ""
    #: a repeatable flag: False when a value may hold a comma (a URL), so
    #: only repeating the flag gives several
    commas: bool = True


def _flag(flag: str, help: str, panel: str, metavar: str | None = None, **kw: Any) -> dict[str, Flag]:
    return {"flag": Flag(flag, help, panel, metavar, **kw)}


@dataclass(frozen=True)
class RunOptions:
    """A run's options. Task options apply to every task of the spec; model
    options replace its models with one; unset (None/empty) options change
    nothing."""

    tasks: tuple[str, ...] = field(default_factory=tuple, metadata=_flag(
        "--task", "Task to run: {tasks} (repeatable).", GRID, "NAME"))
    n: int | None = field(default=None, metadata=_flag(
        "--n", "Items per task; for generation and validation, schemas: validation asks about 2 samples per "
        "schema (its valid one and an invalid one), so -n 3 gives N=6.", GRID, "N", table="task", short="-n"))
    seed: int | None = field(default=None, metadata=_flag(
        "--seed", "Item sampling seed of every task.", GRID, "INT", table="task"))
    arms: tuple[str, ...] = field(default_factory=tuple, metadata=_flag(
        "--arm", "Arm: {arms}; a contract in brackets, e.g. constrained\\[answer] (repeatable).", GRID, "ARM",
        table="task"))
    engines: tuple[str, ...] = field(default_factory=tuple, metadata=_flag(
        "--engine", "Constraint engine of the constrained arms: {engines} (repeatable; default: what the "
        "backend supports, {server} for HTTP backends).", GRID, "NAME", table="task"))
    shots_from: Path | None = field(default=None, metadata=_flag(
        "--shots-from", "A zero-shot run's replay: pick few-shot examples like its errors.", GRID, "FILE",
        table="task"))
    prompt_style: str | None = field(default=None, metadata=_flag(
        "--prompt-style", "Prompt texts of gsm8k/bfcl-simple: conformbench or validbutwrong.", GRID, "NAME",
        table="params"))
    dataset: Path | None = field(default=None, metadata=_flag(
        "--dataset", "The tasks' data: custom, a JSONL of {{\"question\", \"answer\"}} lines; "
        "generation/validation, a dataset built by 'conformbench dataset build' (its dir).", GRID, "PATH",
        table="task"))
    schema: Path | None = field(default=None, metadata=_flag(
        "--schema", "custom: the answer contract from a schema file, JSON, YAML or XML as its name says (read "
        "as data, stored in the replay; the arms' contract 'answer' is this schema).", GRID, "FILE"))
    answer_field: str | None = field(default=None, metadata=_flag(
        "--answer-field", "custom with --schema: the property that holds the answer (default: 'answer', else "
        "the one required string or number property).", GRID, "NAME", table="params"))
    match: str | None = field(default=None, metadata=_flag(
        "--match", "How custom checks an answer: {matchers} (default exact); a scoring choice: a rerun with "
        "another reuses the generations, and 'score --match' rescores.", GRID, "NAME", table="params"))
    normalize: str | None = field(default=None, metadata=_flag(
        "--normalize", "custom's answer normaliser: {normalizers} (default casefold).", GRID, "NAME",
        table="params"))
    tolerance: float | None = field(default=None, metadata=_flag(
        "--tolerance", "custom with --match number: the largest difference still right (default 0).", GRID,
        "X", table="params"))
    backend: str | None = field(default=None, metadata=_flag(
        "--backend", "Backend: {backends} (default llamacpp).", MODEL, "NAME"))
    model: str | None = field(default=None, metadata=_flag(
        "--model", "GGUF path or alias (llamacpp; default: the embedded SmolLM2), a checkpoint directory or "
        "GGUF (transformers), or the served model's name (openai).", MODEL, "MODEL"))
    label: str | None = field(default=None, metadata=_flag(
        "--label", "Model label in reports (default: the model's file or folder name; smollm2-135m, or "
        "smollm2-135m-transformers, without --model).", MODEL, "TEXT"))
    base_url: tuple[str, ...] = field(default_factory=tuple, metadata=_flag(
        "--base-url", "Server URL ending in /v1, e.g. http://127.0.0.1:8000/v1 (HTTP backends); repeat it for a "
        "pool of servers of one model: each request goes to one with a free slot.", MODEL, "URL", commas=False))
    threads: int | None = field(default=None, metadata=_flag(
        "--threads", "CPU threads: llama.cpp's, or torch's (intra- and inter-op) with the transformers backend "
        "(default: llama-cpp-python's: half the cores for generating, 1 on a 2-core machine, and every core for "
        "reading prompts; torch's own with transformers; the replay records both; N sets both; on a busy machine "
        "give your fair share).", MODEL, "N",
        table="model"))
    concurrency: int | None = field(default=None, metadata=_flag(
        "--concurrency", "Requests in flight on each server (HTTP backends; default 4).", MODEL, "N", table="model"))
    timeout_s: float | None = field(default=None, metadata=_flag(
        "--timeout", "Seconds per request before it is retried (HTTP backends; default 120).", MODEL,
        "SECONDS", table="model"))
    #: each backend's own options (option name -> value; ``backends/backend_options.py``)
    backend_options: tuple[tuple[str, Any], ...] = ()
    #: each task's own options (option name -> value; ``tasks/task_options.py``)
    task_options: tuple[tuple[str, Any], ...] = ()
    #: the values of each axis a task chooses by a key of its spec table
    #: (that key -> values: ``("schema_formats", ("json", "yaml"))``), set in
    #: every chosen task's table; the axis declares its flag (``tasks.grid.Axis``)
    axes: tuple[tuple[str, tuple[str | int, ...]], ...] = ()
    max_tokens: int | None = field(default=None, metadata=_flag(
        "--max-tokens", "Token budget of every turn (default: each task's own: 1024 for the ConCodeEval "
        "tasks, as in the paper; 384 per turn for the arms tasks, as in validbutwrong).", DECODING, "N",
        table="decoding"))
    free_tokens: int | None = field(default=None, metadata=_flag(
        "--free-tokens", "Token budget of the free-text turn (unconstrained, and the first turn of "
        "reason_then_constrain).", DECODING, "N", table="task"))
    json_tokens: int | None = field(default=None, metadata=_flag(
        "--json-tokens", "Token budget of the answer turn (prompt_only and constrained).", DECODING, "N",
        table="task"))
    packaging_tokens: int | None = field(default=None, metadata=_flag(
        "--packaging-tokens", "Token budget of reason_then_constrain's packaging turn.", DECODING, "N",
        table="task"))
    think_tokens: int | None = field(default=None, metadata=_flag(
        "--think-tokens", "Token budget of think_then_constrain's thinking (default: the free turn's); at it "
        "the decoder writes the stop string itself and the answer follows in the same call (counted as cut).",
        DECODING, "N", table="task"))
    think_stop: str | None = field(default=None, metadata=_flag(
        "--think-stop", "The string that ends think_then_constrain's thinking (default </think>).", DECODING,
        "TEXT", table="task"))
    loop_stop: bool | None = field(default=None, metadata=_flag(
        "--loop-stop/--no-loop-stop", "End a degenerate loop early, recorded as finish reason 'loop' "
        "(default on).", DECODING, table="decoding"))
    temperature: float | None = field(default=None, metadata=_flag(
        "--temperature", "Sampling temperature (default 0: greedy).", DECODING, "T", table="decoding"))
    decode_seed: int | None = field(default=None, metadata=_flag(
        "--decode-seed", "Sampling seed.", DECODING, "INT", table="decoding",
                                   key="seed"))
    samples: int | None = field(default=None, metadata=_flag(
        "--samples", "Generations per item and condition (default 1); K > 1 needs --temperature > 0 and "
        "reports pass@k, all@k and per-item agreement.", DECODING, "K", table="decoding"))
    max_rounds: int | None = field(default=None, metadata=_flag(
        "--max-rounds", "Answers a multi-round arm (repair, resample, fallback) gives at most per item, the "
        "first included (default 3); stored in the replay.", DECODING, "N", table="decoding"))
    beams: int | None = field(default=None, metadata=_flag(
        "--beams", "Beam width (default 1: greedy); N > 1 is beam search scored as Hugging Face "
        "generate(num_beams=N) (llamacpp and transformers backends; not with engine gbnf).", DECODING, "N", table="decoding"))
    attention: bool | None = field(default=None, metadata=_flag(
        "--attention", "Record where the answer position attends in the schema (begin/middle/end per "
        "layer; ConCodeEval tasks, llamacpp and transformers backends).", DECODING, table="decoding"))
    mask_trace: bool | None = field(default=None, metadata=_flag(
        "--mask-trace", "Keep the mask's toll per step in the replay (the allowed share of the model's "
        "probability and whether its top token was allowed); each constrained generation's summary is "
        "always kept (llamacpp and transformers backends, mask engines).", DECODING, table="decoding"))
    no_canary: bool = field(default=False, metadata=_flag(
        "--no-canary", "Skip the constraint canary (not recommended).", DECODING))
    out: Path | None = field(default=None, metadata=_flag(
        "--out", "Output directory (default: conformbench-out).", OUTPUT, "DIR",
                            table="run"))
    format_assertion: bool | None = field(default=None, metadata=_flag(
        "--format-assertion/--no-format-assertion", "{format_assertion} Stored in the replay (run spec "
        "key format_assertion).", OUTPUT, table="run"))
    json_summary: bool = field(default=False, metadata=_flag(
        "--json", "Print a machine-readable summary on stdout.", OUTPUT))
    quiet: bool = field(default=False, metadata=_flag(
        "--quiet", "No progress bar or terminal output but errors.", OUTPUT))


def flags() -> Iterator[tuple[dataclasses.Field[Any], Flag]]:
    """Every option that has a flag, with its flag, in declaration order."""
    for f in dataclasses.fields(RunOptions):
        flag = f.metadata.get("flag")
        if isinstance(flag, Flag):
            yield f, flag


_Names = str | Sequence[str]
_Path = str | os.PathLike[str]


class RunKeywords(TypedDict, total=False):
    """``RunOptions``' fields as ``conformbench.run`` takes them as keywords
    (a name or a path may stand for a list of one), so a type checker sees
    the API's signature. The static mirror of the dataclass above, which
    stays the one source: a test fails when the two differ by one name.
    The shipped tasks' axis keywords (``RunOptions.axes``) are here too, so
    that a type checker takes them; a plugin's, like its options, are
    further keywords."""

    tasks: _Names
    n: int | None
    seed: int | None
    arms: _Names
    engines: _Names
    shots_from: _Path | None
    prompt_style: str | None
    dataset: _Path | None
    schema: _Path | None
    answer_field: str | None
    match: str | None
    normalize: str | None
    tolerance: float | None
    backend: str | None
    model: str | None
    label: str | None
    base_url: _Names
    threads: int | None
    concurrency: int | None
    timeout_s: float | None
    max_tokens: int | None
    free_tokens: int | None
    json_tokens: int | None
    packaging_tokens: int | None
    think_tokens: int | None
    think_stop: str | None
    loop_stop: bool | None
    temperature: float | None
    decode_seed: int | None
    samples: int | None
    max_rounds: int | None
    beams: int | None
    attention: bool | None
    mask_trace: bool | None
    no_canary: bool
    out: _Path | None
    format_assertion: bool | None
    json_summary: bool
    quiet: bool
    #: the ConCodeEval tasks' axes (declared on them: ``tasks.grid.Axis``)
    schema_formats: _Names
    output_formats: _Names
    shots: int | Sequence[int]
