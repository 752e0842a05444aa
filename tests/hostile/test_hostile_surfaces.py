"""Hostile inputs on the surfaces of the last round (issue #40): one way to
read a file, nothing runs from a model folder, nothing is written out of
``--out``, JSONL split on ``\\n`` only, bounded patterns and templates,
bounded options. Every refusal is one line, exit 2, no traceback; each test
was run with its protection removed and failed (noted where it is not
obvious)."""

from __future__ import annotations

import ast
import json
import os
import resource
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from conformbench.errors import UsageError
from conformbench.files import MAX_INFLATED_BYTES, check_zip_file, jsonl_lines, read_bytes_file
from conformbench.records.replay_file import read_replay

SRC = Path(__file__).resolve().parents[2] / "src" / "conformbench"
_BOMB = MAX_INFLATED_BYTES + (16 << 20)


def _cli(*args: str, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "conformbench.cli.main", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd, env=env)


def _one_line(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 2, (done.returncode, done.stderr[-800:])
    assert done.stderr.startswith("conformbench: error: ") and done.stderr.count("\n") == 1, done.stderr
    for needle in needles:
        assert needle.lower() in done.stderr.lower(), done.stderr
    return done.stderr


def _replay(tmp: Path) -> Path:
    """A small real replay: outputs imported for two gsm8k items."""
    source = tmp / "o.jsonl"
    source.write_text('{"item_id": "gsm8k_test_0", "text": "18"}\n{"item_id": "gsm8k_test_1", "text": "3"}\n',
                      encoding="utf-8")
    done = _cli("import", "outputs", str(source), "--task", "gsm8k", "--out", str(tmp / "imp"))
    assert done.returncode == 0, done.stderr
    return tmp / "imp" / "replay.jsonl"


# -- 1. no code from a model folder --------------------------------------------------------------


def _remote_code_folder(tmp: Path, model_type: str) -> tuple[Path, Path]:
    folder, marker = tmp / "model", tmp / "ran.txt"
    folder.mkdir()
    code = f"open({str(marker)!r}, 'w').write('executed')\nfrom transformers import PretrainedConfig\n" \
           "class EvilConfig(PretrainedConfig):\n    model_type = 'evil'\n"
    (folder / "evil.py").write_text(code, encoding="utf-8")
    (folder / "config.json").write_text(json.dumps({
        "model_type": model_type, "architectures": ["EvilForCausalLM"],
        "auto_map": {"AutoConfig": "evil.EvilConfig", "AutoModelForCausalLM": "evil.EvilForCausalLM"}}))
    (folder / "tokenizer_config.json").write_text("{}")
    return folder, marker


@pytest.mark.long
@pytest.mark.parametrize("model_type", ["evil", "llama"])
def test_a_model_folder_naming_its_own_code_is_refused_and_nothing_runs(tmp_path: Path, model_type: str) -> None:
    """Without the refusal the folder reaches transformers (whose prompt, on
    a terminal, runs evil.py on "y"); the message would not say why."""
    pytest.importorskip("transformers")
    folder, marker = _remote_code_folder(tmp_path, model_type)
    done = _cli("run", "--quiet", "--backend", "transformers", "--model", str(folder), "--task", "gsm8k", "--n", "1",
                "--arm", "unconstrained", "--out", str(tmp_path / "out"), "--quiet", timeout=300)
    _one_line(done, "auto_map", "never runs code from a model folder")
    assert not marker.exists()


def test_an_unknown_model_type_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from conformbench.backends.transformers.loading import refuse_remote_code

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "not-built-in"}')
    with pytest.raises(UsageError, match="not built into this transformers"):
        refuse_remote_code(folder)


def test_every_from_pretrained_passes_trust_remote_code_false() -> None:
    calls = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "from_pretrained":
                given = {k.arg: k.value for k in node.keywords}
                value = given.get("trust_remote_code")
                calls.append((path.name, node.lineno))
                assert isinstance(value, ast.Constant) and value.value is False, f"{path}:{node.lineno}"
    assert len(calls) >= 2  # the tokenizer and the model


# -- 2. special and huge files, wherever a user names one -----------------------------------------


@pytest.fixture()
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "named.pipe"
    os.mkfifo(path)
    return path


@pytest.mark.long
def test_a_fifo_is_refused_not_waited_on_everywhere(tmp_path: Path, fifo: Path) -> None:
    replay = _replay(tmp_path)
    _one_line(_cli("score", str(fifo), timeout=30), "is a FIFO, not a regular file")
    _one_line(_cli("score", str(replay), "--against", str(fifo), "--out", str(tmp_path / "r"), timeout=30),
              "is a FIFO")
    _one_line(_cli("run", "--quiet", "--spec", str(fifo), "--out", str(tmp_path / "o"), timeout=30), "is a FIFO")
    _one_line(_cli("run", "--quiet", "--model", str(fifo), "--task", "gsm8k", "--n", "1", "--out", str(tmp_path / "o"),
                   timeout=30), "model file", "is a FIFO")
    _one_line(_cli("import", "outputs", str(fifo), "--task", "gsm8k", "--out", str(tmp_path / "i"), timeout=30),
              "is a FIFO")
    _one_line(_cli("import", "inspect", str(fifo), "--out", str(tmp_path / "i"), timeout=30), "is a FIFO")
    _one_line(_cli("import", "lm-eval", str(fifo), "--out", str(tmp_path / "i"), timeout=30), "FIFO")


@pytest.mark.long
def test_a_fifo_among_a_checkpoints_files_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    os.mkfifo(folder / "model.safetensors")
    done = _cli("run", "--quiet", "--backend", "transformers", "--model", str(folder), "--task", "gsm8k", "--n", "1",
                "--out", str(tmp_path / "o"), timeout=60)
    _one_line(done, "model.safetensors is a FIFO")


@pytest.mark.long
def test_a_link_to_dev_zero_is_refused_not_read(tmp_path: Path) -> None:
    zero = tmp_path / "replay.jsonl"
    zero.symlink_to("/dev/zero")
    _one_line(_cli("score", str(zero), "--out", str(tmp_path / "r"), timeout=30), "is a device")
    _one_line(_cli("run", "--quiet", "--model", str(zero), "--task", "gsm8k", "--n", "1", "--out", str(tmp_path / "o"),
                   timeout=30), "is a device")


def _zip_bomb(path: Path, inflated: int) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive, \
            archive.open("header.json", "w", force_zip64=True) as member:
        block = b"\0" * (1 << 20)
        for _ in range(inflated >> 20):
            member.write(block)


def _gzip_bomb(path: Path, inflated: int) -> None:
    engine = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * (1 << 20)
    with path.open("wb") as fh:
        for _ in range(inflated >> 20):
            fh.write(engine.compress(block))
        fh.write(engine.flush())


@pytest.mark.long
def test_an_inspect_log_that_inflates_past_the_limit_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.eval"
    _zip_bomb(bomb, _BOMB)
    assert bomb.stat().st_size < 2 << 20
    with pytest.raises(UsageError, match="inflate to more than 256 MiB"):
        check_zip_file(bomb, "Inspect log")
    pytest.importorskip("inspect_ai.log")
    _one_line(_cli("import", "inspect", str(bomb), "--out", str(tmp_path / "o"), timeout=120), "inflate")


@pytest.mark.long
def test_a_gzip_file_that_inflates_past_the_limit_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "outputs.jsonl.gz"
    _gzip_bomb(bomb, _BOMB)
    with pytest.raises(UsageError, match="inflates to more than 256 MiB"):
        read_bytes_file(bomb, "outputs file", MAX_INFLATED_BYTES)
    _one_line(_cli("import", "outputs", str(bomb), "--task", "gsm8k", "--out", str(tmp_path / "o"), timeout=120),
              "inflates to more than")
    small = tmp_path / "small.jsonl.gz"
    small.write_bytes(zlib.compress(b'{"item_id": "gsm8k_test_0", "text": "18"}\n', wbits=16 + zlib.MAX_WBITS))
    done = _cli("import", "outputs", str(small), "--task", "gsm8k", "--out", str(tmp_path / "ok"))
    assert done.returncode == 0, done.stderr


# -- 3. writes stay in --out and are whole ---------------------------------------------------------


@pytest.mark.long
def test_export_inspect_replaces_a_link_in_out_never_writes_through_it(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai.log")
    replay = _replay(tmp_path)
    out, victim = tmp_path / "logs", tmp_path / "victim.txt"
    victim.write_text("precious")
    first = _cli("export", "inspect", str(replay), "--out", str(out))
    assert first.returncode == 0, first.stderr
    (log,) = out.iterdir()
    log.unlink()
    log.symlink_to(victim)
    again = _cli("export", "inspect", str(replay), "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert victim.read_text() == "precious"
    assert not log.is_symlink() and zipfile.is_zipfile(log)
    assert sorted(p.name for p in out.iterdir()) == [log.name]  # no temporary file left


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ds")
    done = _cli("dataset", "build", "--n", "3", "--out", str(out), timeout=300)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.long
def test_export_hf_never_follows_a_link_out_of_out(tmp_path: Path, dataset: Path) -> None:
    pytest.importorskip("pyarrow")
    out, outside = tmp_path / "hf", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (out / "schemas").symlink_to(outside)
    _one_line(_cli("dataset", "export", str(dataset), "--to", "hf", "--out", str(out)), "link out of")
    assert list(outside.iterdir()) == []


_FSIZE_CHILD = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), int(sys.argv[3])))
from conformbench.cli.main import main
sys.exit(main(["dataset", "export", sys.argv[1], "--to", "hf", "--out", sys.argv[2]]))
"""


@pytest.mark.long
def test_export_hf_is_whole_or_nothing_when_the_disk_fills(tmp_path: Path, dataset: Path) -> None:
    """Without the temporary files, the parquet files were left written and
    the card missing (or a parquet file cut at the limit)."""
    pytest.importorskip("pyarrow")
    import signal

    whole = tmp_path / "whole"
    assert _cli("dataset", "export", str(dataset), "--to", "hf", "--out", str(whole)).returncode == 0
    sizes = sorted(p.stat().st_size for p in whole.rglob("*") if p.is_file())
    limit = sizes[-1] - 1  # every file fits but the largest
    out = tmp_path / "cut"
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        done = subprocess.run([sys.executable, "-c", _FSIZE_CHILD, str(dataset), str(out), str(limit)],
                              capture_output=True, text=True, timeout=300)
    finally:
        signal.signal(signal.SIGXFSZ, previous)
    _one_line(done, "cannot write")
    assert [p for p in out.rglob("*") if p.is_file()] == []


# -- 4. JSONL is split on \n only, by every reader -------------------------------------------------

_SEPARATORS = "\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e"


def test_jsonl_lines_keeps_the_separators_json_allows_in_strings() -> None:
    line = json.dumps({"text": f"a{_SEPARATORS}b"}, ensure_ascii=False)
    assert jsonl_lines(f"{line}\n{line}\n") == [line, line]
    assert jsonl_lines(f"{line}\r\n{line}") == [line + "\r", line]


@pytest.mark.long
def test_every_jsonl_reader_keeps_separators_inside_strings(tmp_path: Path) -> None:
    from conformbench.importers.lm_eval import _read as read_lm_eval
    from conformbench.importers.outputs import read_outputs
    from conformbench.schemas.case import load_dataset
    from conformbench.schemas.external import read_external
    from conformbench.tasks.custom import load_questions

    odd = f"x{_SEPARATORS}y"

    def write(name: str, *rows: object) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        return path

    outputs = read_outputs(write("o.jsonl", {"item_id": "a", "text": odd}))
    assert outputs[0].text == odd
    questions = load_questions(write("q.jsonl", {"question": odd, "answer": "1"}))
    assert questions[0].input["question"] == odd
    schemas = list(read_external(write("s.jsonl", {"description": odd, "type": "string"})))
    assert getattr(schemas[0], "schema", {}).get("description") == odd
    samples = read_lm_eval(write("samples_t_2024.jsonl", {"doc_id": 0, "doc": {"json_schema": "{}"},
                                                          "resps": [[odd]]}))
    assert samples[0].resps[0][0] == odd
    replay = _replay(tmp_path)
    lines = replay.read_text(encoding="utf-8").split("\n")
    record = json.loads(lines[-2])
    record["text"] = odd
    lines[-2] = json.dumps(record, ensure_ascii=False)
    replay.write_text("\n".join(lines), encoding="utf-8")
    # the one replay reader (scoring's and the replay backend's)
    assert any(g.text == odd for g in read_replay(replay).generations)
    built = _cli("dataset", "build", "--n", "2", "--out", str(tmp_path / "ds"))
    assert built.returncode == 0, built.stderr
    data = tmp_path / "ds" / "dataset.jsonl"
    rows = data.read_text(encoding="utf-8").split("\n")
    case = json.loads(rows[0])
    case["schema"]["description"] = odd
    rows[0] = json.dumps(case, ensure_ascii=False)
    data.write_text("\n".join(rows), encoding="utf-8")
    assert load_dataset(data)[0].schema["description"] == odd  # type: ignore[index]


def test_no_jsonl_reader_splits_with_splitlines() -> None:
    """``str.splitlines`` is left only where the text is not JSONL."""
    allowed = {"formats/fences.py", "formats/yaml/safe.py", "formats/source_map.py", "formats/positions.py",
               "cli/main.py", "api/audits.py", "scoring/sections.py", "scoring/concodeeval/figures.py",
               "backends/transformers/processor.py", "records/markdown_escape.py", "schemas/words.py",
               "serving/launch.py"}  # a server's log, not JSONL
    found = {str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if ".splitlines(" in p.read_text(encoding="utf-8")}
    assert found <= allowed, found - allowed


# -- 5. bounded patterns and templates -------------------------------------------------------------


def test_a_maskbench_pattern_past_the_bound_is_excluded_before_any_engine(tmp_path: Path) -> None:
    from conformbench.audits.engine_check import read_schemas_source

    folder = tmp_path / "maskbench"
    folder.mkdir()
    case = {"schema": {"type": "string", "pattern": "((a{999}){999}){999}"}, "meta": {},
            "tests": [{"description": "d", "data": "a", "valid": False}]}
    (folder / "bomb.json").write_text(json.dumps(case))
    (folder / "ok.json").write_text(json.dumps({"schema": {"type": "string"}, "meta": {},
                                                "tests": [{"data": "a", "valid": True}]}))
    source = read_schemas_source(folder)
    assert [s.id for s in source.schemas] == ["ok"]
    (excluded,) = source.excluded
    assert excluded.id == "bomb" and "unroll" in excluded.reason


_TEMPLATE_BOMBS = {
    "repeat": "{{ 'x' * 2000000000 }}",
    "percent-width": "{{ '%0999999999d' % 1 }}",
    "ljust": "{{ 'x'.ljust(2000000000) }}",
    "format-width": "{{ '{:>999999999}'.format(1) }}",
    "concat-doubling": "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
                       "{% endfor %}{{ ns.s|length }}",
    "output": "{% for i in range(100000) %}{{ 'y' * 1000 }}{% endfor %}",
    "power": "{{ 10 ** 10000000 }}",
    "format-filter": "{{ '%0999999999d'|format(1) }}",
    "center-filter": "{{ 'x'|center(2000000000) }}",
    "replace-filter": "{% set s = 'x' * 1000000 %}{{ s|replace('x', 'yyyyyyyyyy') }}",
    # #49 defect 4: these six allocated about 1.4 GiB before their check ran
    "star-width": "{{ '%*d' % (1500000000, 1) }}",
    "nested-format-width": "{{ '{:>{}}'.format(1, 1500000000) }}",
    "nested-format-width-text": "{{ '{:>{}}'.format(1, '1500000000') }}",
    "str-replace": "{% set s = 'x' * 4000000 %}{{ s.replace('x', 'yyyyyyyyyy') }}",
    "str-join": "{% set s = 'x' * 4000000 %}{{ s.join(['a', 'b', 'c'] * 100) }}",
    "join-filter": "{% set s = 'x' * 4000000 %}{{ (['a'] * 1000)|join(s) }}",
    "indent-string-width": "{% set s = 'x' * 4000000 %}{{ ('a\\n' * 1000)|indent(s) }}",
    "repeat-1.5g": "{{ 'x' * 1500000000 }}",
}


@pytest.mark.parametrize("template", list(_TEMPLATE_BOMBS.values()), ids=list(_TEMPLATE_BOMBS))
def test_a_chat_template_cannot_allocate_gigabytes(template: str) -> None:
    from conformbench.backends.chat_template import TemplateTooCostly, bounded_template

    start = time.monotonic()
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(TemplateTooCostly):
        bounded_template(template).render(messages=[])
    assert time.monotonic() - start < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - usage < 100_000  # KiB: under 100 MB more


def test_a_chat_template_cannot_run_for_hours() -> None:
    from conformbench.backends.chat_template import BoundedSandbox, TemplateTooCostly

    env = BoundedSandbox(max_seconds=0.5)
    loops = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}done"
    start = time.monotonic()
    with pytest.raises(TemplateTooCostly, match="ran past 0.5 s"):
        env.from_string(loops).render()
    assert time.monotonic() - start < 3


def test_the_bounded_sandbox_renders_a_real_template_as_jinja_does(smollm_path: Path) -> None:
    """The embedded model's own template, rendered by llama-cpp-python's
    formatter and by the bounded one: the same prompt, byte for byte."""
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    from conformbench.backends.chat_template import bounded_llama_formatter

    llm = Llama(str(smollm_path), vocab_only=True, verbose=False)
    template = llm.metadata["tokenizer.chat_template"]
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say <b>|hi|</b>\n"}]
    plain = Jinja2ChatFormatter(template=template, eos_token="</s>", bos_token="<s>", add_generation_prompt=True)
    expected = plain(messages=messages).prompt
    assert bounded_llama_formatter(template, "</s>", "<s>")(messages=messages).prompt == expected


@pytest.mark.parametrize("template", [_TEMPLATE_BOMBS["repeat"], "{{ '%099999999999d' % 1 }}"])
def test_a_constant_bomb_is_refused_when_rendered_not_folded_when_compiled(template: str) -> None:
    """jinja2 folds constant expressions while compiling: a formatter made
    on the template (llama-cpp-python's, transformers') would already
    allocate gigabytes, before the bounded environment took over."""
    from conformbench.backends.chat_template import TemplateTooCostly, bounded_llama_formatter

    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    formatter = bounded_llama_formatter(template, "</s>", "<s>")
    with pytest.raises(TemplateTooCostly):
        formatter(messages=[{"role": "user", "content": "hi"}])
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - usage < 200_000
    pytest.importorskip("transformers")
    from conformbench.backends.transformers.loading import bounded_chat_template

    with pytest.raises(TemplateTooCostly):
        bounded_chat_template(template).render(messages=[], add_generation_prompt=True)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - usage < 200_000


@pytest.mark.long
def test_the_transformers_template_renders_as_apply_chat_template(smollm_path: Path) -> None:
    """The transformers backend renders in a bounded copy of transformers'
    own environment: the same text as ``apply_chat_template``."""
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from conformbench.backends.transformers.loading import bounded_chat_template

    tokenizer = AutoTokenizer.from_pretrained(str(smollm_path.parent), gguf_file=smollm_path.name,
                                              local_files_only=True, trust_remote_code=False)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say <b>|hi|</b>\n"}]
    expected = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    bounded = bounded_chat_template(tokenizer.get_chat_template())
    assert bounded.render(messages=messages, tools=None, documents=None, add_generation_prompt=True,
                          **tokenizer.special_tokens_map) == expected


def test_the_llamacpp_backend_renders_through_the_bounded_sandbox() -> None:
    source = (SRC / "backends" / "llamacpp" / "backend.py").read_text(encoding="utf-8")
    assert "return bounded_llama_formatter(template" in source and "Jinja2ChatFormatter(" not in source


# -- 8. the transformers backend: cut files, bounded options ---------------------------------------


@pytest.mark.long
def test_a_truncated_gguf_is_one_line_for_the_transformers_backend(tmp_path: Path, smollm_path: Path) -> None:
    pytest.importorskip("transformers")
    cut = tmp_path / "cut.gguf"
    with smollm_path.open("rb") as fh:
        cut.write_bytes(fh.read(smollm_path.stat().st_size // 2))
    done = _cli("run", "--quiet", "--backend", "transformers", "--model", str(cut), "--task", "gsm8k", "--n", "1",
                "--out", str(tmp_path / "o"), "--quiet", timeout=300)
    _one_line(done, "transformers cannot load", "cut.gguf")


@pytest.mark.long
def test_truncated_weights_are_one_line_for_the_transformers_backend(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from transformers import LlamaConfig, LlamaForCausalLM

    folder = tmp_path / "tiny"
    config = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
    LlamaForCausalLM(config).save_pretrained(folder)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    done = _cli("run", "--quiet", "--backend", "transformers", "--model", str(folder), "--task", "gsm8k", "--n", "1",
                "--out", str(tmp_path / "o"), "--quiet", timeout=300)
    _one_line(done, "cannot load", "tiny")


@pytest.mark.long
@pytest.mark.parametrize(("flag", "value", "needle"), [
    ("--threads", "100000", "threads must be between 1 and 512"),
    ("--concurrency", "100000", "concurrency must be between 1 and 256"),
    ("--timeout", "1e9", "timeout_s must be between"),
    ("--batched", "100000", "--batched must be between 0 and 256"),
])
def test_numeric_options_are_bounded_with_the_range_in_the_message(tmp_path: Path, flag: str, value: str,
                                                                   needle: str) -> None:
    """--threads 100000 made llama.cpp crash with a segmentation fault."""
    backend = ["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"] \
        if flag in ("--concurrency", "--timeout") else []
    done = _cli("run", "--quiet", "--task", "gsm8k", "--n", "1", *backend, flag, value, "--out", str(tmp_path / "o"),
                timeout=60)
    _one_line(done, needle)
    assert not (tmp_path / "o" / "replay.jsonl").exists()


@pytest.mark.long
def test_a_spec_and_the_python_api_meet_the_same_bounds(tmp_path: Path) -> None:
    from conformbench.records.generation import BackendConfig

    spec = tmp_path / "spec.toml"
    spec.write_text("[[models]]\nlabel = 'm'\nthreads = 4096\n[[tasks]]\nname = 'gsm8k'\n")
    _one_line(_cli("run", "--quiet", "--spec", str(spec), "--out", str(tmp_path / "o")), "threads must be between 1 and 512")
    with pytest.raises(UsageError, match="n_ctx must be between 256 and"):
        BackendConfig(n_ctx=1 << 30)
