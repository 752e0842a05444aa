"""``conformbench run``: generate live into OUT/replay.jsonl (resumable),
then score it into reports, with CI gates. With no arguments it runs the
default suite on the embedded model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from conformbench.cli.score import FailIf, report_outcome
from conformbench.reports.publish import publish
from conformbench.runner.defaults import SpecOverrides, build_spec
from conformbench.runner.run import execute
from conformbench.scoring.gate import parse_gate

__all__ = ["register"]

def _split(values: list[str]) -> tuple[str, ...]:
    """Repeated options and comma-separated lists alike."""
    return tuple(p.strip() for v in values for p in v.split(",") if p.strip())


def _opt(name: str, help_text: str) -> Any:
    return typer.Option(name, help=help_text)


def run(
    spec: Annotated[Path | None, _opt("--spec", "Run spec TOML file (default: the default run).")] = None,
    task: Annotated[list[str], _opt("--task", "Tasks to run (repeatable or comma-separated).")] = [],
    n: Annotated[int | None, typer.Option("--n", min=1, help="Items per task.")] = None,
    seed: Annotated[int | None, _opt("--seed", "Item sampling seed of every task.")] = None,
    arm: Annotated[list[str], _opt("--arm", "Arms, e.g. constrained\\[answer] (repeatable).")] = [],
    engine: Annotated[list[str], _opt("--engine", "Constraint engines (repeatable).")] = [],
    schema_format: Annotated[list[str], _opt("--schema-format", "Schema formats (ConCodeEval tasks).")] = [],
    output_format: Annotated[list[str], _opt("--output-format", "Output formats (ConCodeEval tasks).")] = [],
    shots: Annotated[list[int], _opt("--shots", "Few-shot counts (repeatable).")] = [],
    prompt_style: Annotated[str | None, _opt(
        "--prompt-style", "Prompt texts of gsm8k/bfcl-simple: conformbench or validbutwrong.")] = None,
    shots_from: Annotated[Path | None, _opt(
        "--shots-from", "A zero-shot run's replay: pick few-shot examples like its errors.")] = None,
    backend: Annotated[str | None, _opt("--backend", "Backend: llamacpp or openai.")] = None,
    model: Annotated[str | None, _opt("--model", "GGUF path or model name (default: embedded SmolLM2).")] = None,
    label: Annotated[str | None, _opt("--label", "Model label in reports.")] = None,
    base_url: Annotated[str | None, _opt("--base-url", "Server URL (openai backend).")] = None,
    threads: Annotated[int | None, typer.Option("--threads", min=1, help="llama.cpp threads.")] = None,
    max_tokens: Annotated[int | None, typer.Option(
        "--max-tokens", min=1, help="Token budget of every turn (default: each task's own: 1024 for "
        "the ConCodeEval tasks, as in the paper; 384 per turn for the arms tasks, as in validbutwrong).")] = None,
    free_tokens: Annotated[int | None, typer.Option(
        "--free-tokens", min=1, help="Token budget of the free-text turn (unconstrained, and the first "
        "turn of reason_then_constrain).")] = None,
    json_tokens: Annotated[int | None, typer.Option(
        "--json-tokens", min=1, help="Token budget of the answer turn (prompt_only and constrained).")] = None,
    packaging_tokens: Annotated[int | None, typer.Option(
        "--packaging-tokens", min=1, help="Token budget of reason_then_constrain's packaging turn.")] = None,
    loop_stop: Annotated[bool | None, typer.Option(
        "--loop-stop/--no-loop-stop", help="End a degenerate loop early, recorded as finish reason "
        "'loop' (default on).", show_default=False)] = None,
    temperature: Annotated[float | None, typer.Option("--temperature", min=0.0)] = None,
    decode_seed: Annotated[int | None, _opt("--decode-seed", "Sampling seed.")] = None,
    out: Annotated[Path | None, _opt("--out", "Output directory (default: conformbench-out).")] = None,
    no_canary: Annotated[bool, _opt("--no-canary", "Skip the constraint canary (not recommended).")] = False,
    force: Annotated[bool, _opt("--force", "Move a different run's replay aside and start over.")] = False,
    fail_if: FailIf = [],
    json_summary: Annotated[bool, _opt("--json", "Print a machine-readable summary on stdout.")] = False,
    quiet: Annotated[bool, _opt("--quiet", "No progress bar or terminal output but errors.")] = False,
) -> None:
    """Run models x tasks x arms x engines x formats x shots live, appending
    every generation to OUT/replay.jsonl (a rerun resumes), then write the
    reports. The constraint canary runs first; a failure exits 2."""
    overrides = SpecOverrides(
        tasks=_split(task), n=n, seed=seed, arms=_split(arm), engines=_split(engine),
        schema_formats=_split(schema_format), output_formats=_split(output_format),
        shots=tuple(shots), shots_from=shots_from, prompt_style=prompt_style, backend=backend,
        model=model, label=label, base_url=base_url, threads=threads, max_tokens=max_tokens,
        free_tokens=free_tokens, json_tokens=json_tokens, packaging_tokens=packaging_tokens,
        loop_stop=loop_stop, temperature=temperature,
        decode_seed=decode_seed, out=out, no_canary=no_canary, quiet=quiet,
        json_summary=json_summary,
    )
    gates = [parse_gate(text) for text in fail_if]  # bad syntax fails before the model loads
    run_spec = build_spec(spec, overrides)
    summary = execute(run_spec, force=force)
    done = publish([summary.replay], run_spec.out, gates)
    extra = {"replay": str(summary.replay), "generations": summary.total,
             "generated_now": summary.generated, "resumed": summary.skipped,
             "excluded": summary.excluded, "seconds": round(summary.seconds, 2)}
    report_outcome(done, run_spec.quiet, run_spec.json_summary, extra)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
