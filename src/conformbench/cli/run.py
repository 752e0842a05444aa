"""``conformbench run``: generate live into OUT/replay.jsonl (resumable),
then score it into reports, with CI gates. With no arguments it runs the
default suite on the embedded model."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from conformbench import api
from conformbench.arms import arms
from conformbench.backends.base import backends
from conformbench.backends.openai.backend import AUTO_DIALECT, ENDPOINTS
from conformbench.backends.openai.dialects import dialect_names
from conformbench.backends.transformers.loading import DEVICES, DTYPE_NAMES
from conformbench.cli.common import check_choice, join_names, names_of, split_values
from conformbench.cli.score import DETECT_HELP, FAIL_IF_HELP, FORMAT_ASSERTION_HELP, VERBOSE_HELP, report_outcome
from conformbench.engines.base import engines
from conformbench.formats.base import output_formats, schema_formats
from conformbench.records.spec import SERVER_ENGINE, RunSpec
from conformbench.runner.defaults import SpecOverrides, build_spec
from conformbench.runner.progress import stderr_console
from conformbench.runner.run import RunSummary, execute
from conformbench.runner.shards import Shard
from conformbench.scoring.gate import parse_gate
from conformbench.scoring.gate_plan import check_gates_for_spec
from conformbench.tasks.base import tasks
from conformbench.tasks.matchers import MATCHERS, NORMALIZERS

__all__ = ["register"]

_GRID = "Run grid"
_MODEL = "Model"
_HTTP = "HTTP backends (openai)"
_LLAMACPP = "llamacpp backend"
_HF = "transformers backend"
_DECODING = "Decoding"
_OUTPUT = "Output"


def _opt(name: str, metavar: str | None, help_text: str, panel: str, *short: str, **kw: Any) -> Any:
    return typer.Option(name, *short, metavar=metavar, help=help_text, rich_help_panel=panel, **kw)


def _flag(name: str, help_text: str, panel: str) -> Any:
    return typer.Option(name, help=help_text, rich_help_panel=panel)


def run(
    spec: Annotated[Path | None, _opt("--spec", "FILE", "Run spec TOML file (default: the default run).", _GRID)] = None,
    task: Annotated[list[str], _opt(
        "--task", "NAME", f"Task to run: {names_of(tasks)} (repeatable).", _GRID)] = [],
    n: Annotated[int | None, _opt(
        "--n", "N", "Items per task; for generation and validation, schemas: validation asks about 2 samples "
        "per schema (its valid one and an invalid one), so -n 3 gives N=6.", _GRID, "-n", min=1)] = None,
    seed: Annotated[int | None, _opt("--seed", "INT", "Item sampling seed of every task.", _GRID)] = None,
    arm: Annotated[list[str], _opt(
        "--arm", "ARM", f"Arm: {names_of(arms)}; a contract in brackets, e.g. constrained\\[answer] "
        "(repeatable).", _GRID)] = [],
    engine: Annotated[list[str], _opt(
        "--engine", "NAME", f"Constraint engine of the constrained arms: {names_of(engines, [SERVER_ENGINE])} "
        f"(repeatable; default: what the backend supports, {SERVER_ENGINE} for HTTP backends).", _GRID)] = [],
    schema_format: Annotated[list[str], _opt(
        "--schema-format", "NAME", f"Schema format of the ConCodeEval tasks: {names_of(schema_formats)} "
        "(repeatable).", _GRID)] = [],
    output_format: Annotated[list[str], _opt(
        "--output-format", "NAME", f"Output format of the ConCodeEval tasks: {names_of(output_formats)} "
        "(repeatable).", _GRID)] = [],
    shots: Annotated[list[int], _opt("--shots", "K", "Few-shot count (repeatable).", _GRID)] = [],
    shots_from: Annotated[Path | None, _opt(
        "--shots-from", "FILE", "A zero-shot run's replay: pick few-shot examples like its errors.", _GRID)] = None,
    prompt_style: Annotated[str | None, _opt(
        "--prompt-style", "NAME", "Prompt texts of gsm8k/bfcl-simple: conformbench or validbutwrong.",
        _GRID)] = None,
    dataset: Annotated[Path | None, _opt(
        "--dataset", "PATH", "The tasks' data: custom, a JSONL of {\"question\", \"answer\"} lines; "
        "generation/validation, a dataset built by 'conformbench dataset build' (its dir).", _GRID)] = None,
    match: Annotated[str | None, _opt(
        "--match", "NAME", f"How custom checks an answer: {join_names(MATCHERS)} (default exact).", _GRID)] = None,
    normalize: Annotated[str | None, _opt(
        "--normalize", "NAME", f"custom's answer normaliser: {join_names(NORMALIZERS)} (default casefold).",
        _GRID)] = None,
    tolerance: Annotated[float | None, _opt(
        "--tolerance", "X", "custom with --match number: the largest difference still right (default 0).",
        _GRID, min=0.0)] = None,
    backend: Annotated[str | None, _opt(
        "--backend", "NAME", f"Backend: {names_of(backends)} (default llamacpp).", _MODEL)] = None,
    model: Annotated[str | None, _opt(
        "--model", "MODEL", "GGUF path or alias (llamacpp; default: the embedded SmolLM2), a checkpoint "
        "directory or GGUF (transformers), or the served model's name (openai).", _MODEL)] = None,
    label: Annotated[str | None, _opt(
        "--label", "TEXT", "Model label in reports (default: the model's file or folder name; "
        "smollm2-135m, or smollm2-135m-transformers, without --model).", _MODEL)] = None,
    threads: Annotated[int | None, _opt(
        "--threads", "N", "CPU threads: llama.cpp's, or torch's (intra- and inter-op) with the transformers "
        "backend (default: the library's own, every core; on a busy machine give your fair share).",
        _MODEL, min=1)] = None,
    batched: Annotated[int | None, _opt(
        "--batched", "S", "Sequences decoded together (llamacpp continuous batching; 0: off, the default). "
        "An item's samples then share one prefill; other outputs can differ from one-at-a-time decoding "
        "by llama.cpp's batched arithmetic (docs/runtime.md).", _LLAMACPP, min=0)] = None,
    dtype: Annotated[str | None, _opt(
        "--dtype", "NAME", f"Weights' dtype: {join_names(DTYPE_NAMES)} (default bf16).", _HF)] = None,
    device: Annotated[str | None, _opt(
        "--device", "NAME", f"Device: {join_names([*DEVICES, 'cuda:N'])}; auto (the default) is cuda when "
        "torch sees a GPU, else cpu.", _HF)] = None,
    base_url: Annotated[str | None, _opt(
        "--base-url", "URL", "Server URL ending in /v1, e.g. http://127.0.0.1:8000/v1.", _HTTP)] = None,
    dialect: Annotated[str | None, _opt(
        "--dialect", "NAME", f"Structured-output dialect: {join_names([AUTO_DIALECT, *dialect_names()])}; "
        f"{AUTO_DIALECT} (the default) finds it with the canary's request.", _HTTP)] = None,
    endpoint: Annotated[str | None, _opt(
        "--endpoint", "NAME", f"API endpoint: {join_names(ENDPOINTS)} (default chat).", _HTTP)] = None,
    concurrency: Annotated[int | None, _opt(
        "--concurrency", "N", "Requests in flight (default 4).", _HTTP, min=1)] = None,
    timeout: Annotated[float | None, _opt(
        "--timeout", "SECONDS", "Seconds per request before it is retried (default 120).", _HTTP)] = None,
    api_key_env: Annotated[str | None, _opt(
        "--api-key-env", "VAR", "Environment variable holding the API key (default OPENAI_API_KEY, sent "
        "only if set).", _HTTP)] = None,
    max_tokens: Annotated[int | None, _opt(
        "--max-tokens", "N", "Token budget of every turn (default: each task's own: 1024 for the "
        "ConCodeEval tasks, as in the paper; 384 per turn for the arms tasks, as in validbutwrong).",
        _DECODING, min=1)] = None,
    free_tokens: Annotated[int | None, _opt(
        "--free-tokens", "N", "Token budget of the free-text turn (unconstrained, and the first turn of "
        "reason_then_constrain).", _DECODING, min=1)] = None,
    json_tokens: Annotated[int | None, _opt(
        "--json-tokens", "N", "Token budget of the answer turn (prompt_only and constrained).",
        _DECODING, min=1)] = None,
    packaging_tokens: Annotated[int | None, _opt(
        "--packaging-tokens", "N", "Token budget of reason_then_constrain's packaging turn.",
        _DECODING, min=1)] = None,
    loop_stop: Annotated[bool | None, typer.Option(
        "--loop-stop/--no-loop-stop", help="End a degenerate loop early, recorded as finish reason "
        "'loop' (default on).", show_default=False, rich_help_panel=_DECODING)] = None,
    temperature: Annotated[float | None, _opt(
        "--temperature", "T", "Sampling temperature (default 0: greedy).", _DECODING, min=0.0)] = None,
    decode_seed: Annotated[int | None, _opt("--decode-seed", "INT", "Sampling seed.", _DECODING)] = None,
    samples: Annotated[int | None, _opt(
        "--samples", "K", "Generations per item and condition (default 1); K > 1 needs --temperature > 0 "
        "and reports pass@k, all@k and per-item agreement.", _DECODING, min=1, max=100)] = None,
    max_rounds: Annotated[int | None, _opt(
        "--max-rounds", "N", "Answers a multi-round arm (repair, resample, fallback) gives at most per item, "
        "the first included (default 3); stored in the replay.", _DECODING, min=1, max=20)] = None,
    beams: Annotated[int | None, _opt(
        "--beams", "N", "Beam width (default 1: greedy); N > 1 is beam search scored as Hugging Face "
        "generate(num_beams=N) (llamacpp backend; not with engine gbnf).", _DECODING, min=1, max=16)] = None,
    attention: Annotated[bool, _flag(
        "--attention", "Record where the answer position attends in the schema (begin/middle/end per "
        "layer; ConCodeEval tasks, llamacpp and transformers backends).", _DECODING)] = False,
    no_canary: Annotated[bool, _flag("--no-canary", "Skip the constraint canary (not recommended).", _DECODING)] = False,
    out: Annotated[Path | None, _opt("--out", "DIR", "Output directory (default: conformbench-out).", _OUTPUT)] = None,
    force: Annotated[bool, _flag("--force", "Move a different run's replay aside and start over.", _OUTPUT)] = False,
    shard: Annotated[str | None, _opt(
        "--shard", "K/N", "Generate only part K of N of the items, into OUT/replay.shard-K-of-N.jsonl, so N "
        "processes or machines share one run; the run without --shard then merges the parts and writes "
        "the reports.", _OUTPUT)] = None,
    fail_if: Annotated[list[str], _opt("--fail-if", "EXPR", FAIL_IF_HELP, _OUTPUT)] = [],
    detect: Annotated[float | None, _opt("--detect", "PTS", DETECT_HELP, _OUTPUT)] = None,
    format_assertion: Annotated[bool | None, typer.Option(
        "--format-assertion/--no-format-assertion", show_default=False, rich_help_panel=_OUTPUT,
        help=FORMAT_ASSERTION_HELP + " Stored in the replay (run spec key format_assertion).")] = None,
    json_summary: Annotated[bool, _flag("--json", "Print a machine-readable summary on stdout.", _OUTPUT)] = False,
    quiet: Annotated[bool, _flag("--quiet", "No progress bar or terminal output but errors.", _OUTPUT)] = False,
    verbose: Annotated[bool, _opt("--verbose", None, VERBOSE_HELP, _OUTPUT, "-v")] = False,
) -> None:
    """Run models x tasks x arms x engines x formats x shots live, appending
    every generation to OUT/replay.jsonl (a rerun resumes), then write the
    reports. The constraint canary runs first; a failure exits 2."""
    check_choice("--dialect", dialect, [AUTO_DIALECT, *dialect_names()])
    check_choice("--endpoint", endpoint, ENDPOINTS)
    check_choice("--match", match, MATCHERS)
    check_choice("--normalize", normalize, NORMALIZERS)
    overrides = SpecOverrides(
        tasks=split_values(task), n=n, seed=seed, arms=split_values(arm), engines=split_values(engine),
        schema_formats=split_values(schema_format), output_formats=split_values(output_format),
        shots=tuple(shots), shots_from=shots_from, prompt_style=prompt_style, dataset=dataset,
        match=match, normalize=normalize, tolerance=tolerance, backend=backend,
        model=model, label=label, base_url=base_url, threads=threads, dialect=dialect,
        endpoint=endpoint, concurrency=concurrency, timeout_s=timeout, api_key_env=api_key_env,
        dtype=dtype, device=device, batched=batched,
        max_tokens=max_tokens, free_tokens=free_tokens, json_tokens=json_tokens,
        packaging_tokens=packaging_tokens, loop_stop=loop_stop, temperature=temperature,
        decode_seed=decode_seed, samples=samples, max_rounds=max_rounds, beams=beams, attention=attention or None, out=out, no_canary=no_canary, quiet=quiet,
        json_summary=json_summary, format_assertion=format_assertion,
    )
    if shard is None:
        done = api.run(spec, fail_if=fail_if, force=force, detect=detect, **dataclasses.asdict(overrides))
        assert done.generation is not None and done.spec is not None
        try:
            report_outcome(done, done.spec.quiet, done.spec.json_summary, _summary_fields(done.generation), verbose)
        finally:  # last, and its exit 2 over a gate's 1: no answer at all is no measurement
            _say_failures(done.generation, done.spec.quiet)
        return
    gates = [parse_gate(text) for text in fail_if]  # bad syntax fails before the model loads
    part = Shard.parse(shard)
    run_spec = build_spec(spec, overrides)
    check_gates_for_spec(gates, run_spec)
    summary = execute(run_spec, force=force, shard=part)
    _report_part(summary, part, run_spec)
    _say_failures(summary, run_spec.quiet)


def _say_failures(summary: RunSummary, quiet: bool) -> None:
    """Failed generations, said on the terminal; exit 2 when none succeeded."""
    line, none_succeeded = summary.failure_line()
    if line is not None and (none_succeeded or not quiet):
        typer.echo(f"conformbench: {'error' if none_succeeded else 'warning'}: {line}", err=True)
    if none_succeeded:
        raise typer.Exit(2)


def _summary_fields(summary: RunSummary) -> dict[str, Any]:
    return {"replay": str(summary.replay), "generations": summary.total,
            "generated_now": summary.generated, "resumed": summary.skipped,
            "excluded": summary.excluded, "failed": summary.failed, "seconds": round(summary.seconds, 2)}


def _report_part(summary: RunSummary, part: Shard, spec: RunSpec) -> None:
    """A part writes no reports (they need every part): it says what it did
    and what to run next."""
    if spec.json_summary:
        typer.echo(json.dumps({**_summary_fields(summary), "shard": str(part)}))
    if not spec.quiet:
        stderr_console(False).print(
            f"part {part}: {summary.skipped + summary.generated} of {summary.total} generations in "
            f"{summary.replay}; when every part is done, run again without --shard to merge them "
            "and write the reports")


def register(app: typer.Typer) -> None:
    app.command("run")(run)
