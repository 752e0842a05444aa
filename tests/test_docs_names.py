"""The docs name only code that exists: every module and attribute, repository
path, link, anchor, command and flag that README.md, BENCHMARKS.md and
docs/**/*.md mention is looked up in the code as it is now (tests/docs_refs.py
and tests/docs_commands.py say what is read and how). A rename that leaves a
doc behind fails here, naming the doc, the line and what is missing.

What the docs name in other projects is listed below, each with whose it is;
nothing else is let through."""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_commands import every_cli_flag, every_script_flag, flags_in
from docs_markdown import ROOT, Ref, docs
from docs_refs import problem, references

#: (doc, reference) -> whose file it is: names of other projects' files
ELSEWHERE: dict[tuple[str, str], str] = {
    ("BENCHMARKS.md", "arms.py"): "validbutwrong's source, read to match its setup",
    ("BENCHMARKS.md", "cli.py"): "validbutwrong's source, read to match its setup",
    ("BENCHMARKS.md", "engines.py"): "validbutwrong's source, read to match its setup",
    ("docs/runtime.md", "docs/llguidance.md"): "llama.cpp's documentation",
    ("docs/runtime.md", "gpu_model_runner.py"): "vLLM's source",
    ("docs/tasks.md", "bfcl_eval/eval_checker/ast_eval/ast_checker.py"): "the BFCL repository's official checker",
}

#: (doc, reference) -> why a doc names on purpose what is gone, e.g. a line
#: saying "X was renamed to Y". None today: the docs say what is.
HISTORICAL: dict[tuple[str, str], str] = {}

#: flag -> the other tool that takes it (a span such as `--served-model-name`)
FOREIGN_FLAGS: dict[str, str] = {
    "--structured-outputs-config": "vllm serve",
    "--served-model-name": "vllm serve", "--data-parallel-size": "vllm serve", "--max-num-seqs": "vllm serve",
    "--n_threads": "python -m llama_cpp.server", "--n_threads_batch": "python -m llama_cpp.server",
    "--interrupt_requests": "python -m llama_cpp.server", "--model_alias": "python -m llama_cpp.server",
    "--ctx-size": "llama-server", "--jinja": "llama-server", "--chat-template-file": "llama-server",
    "--chat_format": "python -m llama_cpp.server", "--chat-template": "vllm serve", "--enable-auto-tool-choice": "vllm serve", "--tool-call-parser": "vllm serve",
    "--exclude-tools-when-tool-choice-none": "vllm serve",
    "-DLLAMA_LLGUIDANCE": "cmake (llama.cpp's build)",
    "--no-cache-dir": "pip", "--no-deps": "pip",
    "-X": "python -X importtime",
    "--log_samples": "lm_eval", "-T": "inspect eval", "--epochs": "inspect eval",
}


def _allowed(ref: Ref) -> bool:
    if (ref.doc, ref.text) in ELSEWHERE or (ref.doc, ref.text) in HISTORICAL:
        return True
    return ref.kind == "flag" and all(f in FOREIGN_FLAGS or f in every_cli_flag() | every_script_flag()
                                      for f in flags_in(ref.text.split()))


def _stale(doc: Path) -> list[str]:
    return [f"{ref}: {why}" for ref in references(doc) if (why := problem(ref)) is not None and not _allowed(ref)]


@pytest.mark.parametrize("doc", docs(), ids=lambda d: d.relative_to(ROOT).as_posix())
def test_the_doc_names_only_what_exists(doc: Path) -> None:
    stale = _stale(doc)
    assert not stale, "the docs name what the code no longer has (fix the doc; another project's name goes " \
                      "in ELSEWHERE or FOREIGN_FLAGS with whose it is):\n" + "\n".join(stale)


def test_every_allowance_is_still_needed() -> None:
    """An allow-list entry whose reference left the docs, or now resolves,
    goes: the lists hold only what the scan would otherwise refuse."""
    flagged = {(ref.doc, ref.text) for doc in docs() for ref in references(doc) if problem(ref) is not None}
    assert set(ELSEWHERE) | set(HISTORICAL) <= flagged
    said = {f for doc in docs() for ref in references(doc) if ref.kind in ("flag", "command")
            for f in flags_in(ref.text.split())}
    assert set(FOREIGN_FLAGS) <= said
    assert not set(FOREIGN_FLAGS) & (every_cli_flag() | every_script_flag())


def test_the_scan_reads_every_kind_of_reference() -> None:
    """A scan that finds nothing passes everything: each kind is found in the
    docs as they are, and one known reference of each is among them."""
    found = {(ref.kind, ref.text) for doc in docs() for ref in references(doc)}
    assert {kind for kind, _ in found} == {"name", "path", "package path", "file name", "name in file", "link",
                                           "anchor", "command", "flag", "test"}
    assert ("command", "conformbench engines cost --base-url http://127.0.0.1:8000/v1 --model m --concurrency 1,4 "
            "--out cost") in found
    assert ("name", "conformbench.grammar_compiler.lark_grammar") in found
    assert ("path", "tests/test_layers.py") in found


# --- the scanner itself, on a doc of one line ----------------------------------------

BAD = [
    ("`conformbench.arms.policies.turn_condition`", "name", "has no 'policies'"),
    ("`conformbench.runner.execute`", "name", "has no 'execute'"),
    ("`records.spec.NoSuchSpec`", "name", "has no 'NoSuchSpec'"),
    ("```python\nfrom conformbench.arms import exclude_if\n```", "name", "has no 'exclude_if'"),
    ("see `tests/test_arms_think.py`", "path", "no such file"),
    ("`src/conformbench/grammars.py`", "path", "no such file"),
    ("`conformbench/arms_builtin.py`", "path", "no such file"),
    ("`grammars/matcher.py`", "package path", "no such file"),
    ("`arms/policies.py`", "package path", "no such file"),
    ("`policies.py`", "file name", "no file of that name"),
    ("`OPTION_BOUNDS` in `records/base.py`", "name in file", "OPTION_BOUNDS does not occur"),
    ("[the guide](no-such-guide.md)", "link", "no such file"),
    ("# A heading\n\n[above](#no-such-heading)", "anchor", "no heading with the anchor"),
    ("```bash\nconformbench engines --concurrency 4\n```", "command", "conformbench engines takes no --concurrency"),
    ("```bash\nconformbench engines cost --out c --retries 2\n```", "command", "engines cost takes no --retries"),
    ("```sh\nOMP_NUM_THREADS=1 conformbench run \\\n  --task gsm8k --max-retries 3\n```", "command",
     "conformbench run takes no --max-retries"),
    ("`conformbench arms list`", "command", "has no command 'arms'"),
    ("```bash\npython benchmarks/batched.py --quick --nope\n```", "command", "takes no --nope"),
    ("```bash\npython benchmarks/no_such_bench.py\n```", "path,command", "no script"),
    ("`--max-retries` (default 3)", "flag", "takes --max-retries"),
    ("(`test_an_operation_is_bounded_before_it_allocates`)", "test", "no test of that name"),
    ("tests/test_readme.py::test_readme_is_long", "test", "tests/test_readme.py defines no test_readme_is_long"),
]

GOOD = [
    "`conformbench.arms.base.Arm` and `conformbench.tasks.create` and `conformbench.grammar_compiler`",
    "```python\nfrom conformbench.arms import policy\nimport conformbench\nconformbench.run(tasks=['gsm8k'])\n```",
    "`records.spec.ReplaySpec`, `registry.get(name)`, `report.json`",
    "the groups `conformbench.report_sections` and `conformbench.engines`",
    '`"format": "conformbench.replay"`, `conformbench.report/1`, `conformbench/gsm8k_arms`',
    "`tests/test_layers.py`, `examples/specs/*.toml`, `docs/evidence/vllm-probe/BACKEND/engines.json`",
    "`engines/grammars/matcher.py`'s `GRAMMARS`, `backends/openai/`, `validation.py`",
    "```bash\nconformbench engines cost --concurrency 1,4 -n 8 --out DIR  # nested\n"
    "conformbench --version && conformbench run -h | head\n```",
    "`conformbench dataset build --out DIR [-n 602] [--seed 0]`, `conformbench <command>`",
    "```bash\nPYTHONPATH=src python benchmarks/batched.py --quick --k 8\n```",
    "`--dialect guided_json`, `--concurrency`",
    "## The mask's toll\n\n[above](#the-masks-toll)",
    "`test_readme_stays_short`, tests/test_readme.py::test_readme_stays_short, `test_recipe_runs[An arm]`",
]


def _scan(tmp_path: Path, text: str) -> list[tuple[Ref, str]]:
    doc = tmp_path / "doc.md"
    doc.write_text(text + "\n", encoding="utf-8")
    return [(ref, why) for ref in references(doc) if (why := problem(ref)) is not None]


@pytest.mark.parametrize(("text", "kind", "why"), BAD, ids=[b[0][:40] for b in BAD])
def test_the_scan_refuses_a_stale_reference(tmp_path: Path, text: str, kind: str, why: str) -> None:
    found = _scan(tmp_path, text)
    assert [ref.kind for ref, _ in found] == kind.split(","), found
    assert why in found[-1][1]


@pytest.mark.parametrize("text", GOOD, ids=[g[:40] for g in GOOD])
def test_the_scan_passes_what_exists(tmp_path: Path, text: str) -> None:
    assert _scan(tmp_path, text) == []
