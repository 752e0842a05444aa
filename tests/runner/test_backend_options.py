"""A backend's option and capability are one declaration in the backend's
own module: a fake backend declaring an option, an operational option and
beam search finds them in ``run -h``, ``list backends``, a spec file's
``extra`` table (checked there), the replay header's spec (the operational
one left out of what a resume compares) and the API's keywords, and
``--beams`` runs on it, with no edit in the runner or the CLI. Run in a fresh interpreter: the fake backend's
registration must not leak into other tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r'''
import contextlib, io, json, sys
from pathlib import Path

import conformbench
from conformbench import BackendManifest, BackendOption, UsageError, backends
from conformbench.api import run_options
from conformbench.cli.main import main
from conformbench.runner.ledger import GenerationKey
from conformbench.runner.defaults import build_spec


@backends.register("fake-opt")
class FakeBackend:
    manifest = BackendManifest(constraint_side="server", beams=True, options=(
        BackendOption("warmth", float, metavar="W", minimum=0.0, maximum=2.0,
                      help="How warm the fake answers are."),
        BackendOption("mood_log", str, metavar="FILE", operational=True, help="Where the fake logs its mood."),))


out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    main(["run", "-h"])
help_text = out.getvalue()
assert "--warmth" in help_text and "How warm the fake answers are." in help_text, help_text
assert "fake-opt backend" in help_text, help_text

# list backends: what it declares
out = io.StringIO()
with contextlib.redirect_stdout(out):
    assert main(["list", "backends", "--json"]) == 0
about = {row["name"]: row["about"] for row in json.loads(out.getvalue())["backends"]}
assert "options: --warmth, --mood-log; can: beams" in about["fake-opt"], about

# the API: keywords, landing in the model's extra table; --beams passes the capability check
spec = build_spec(None, run_options({"tasks": "gsm8k", "backend": "fake-opt", "warmth": 1.5, "mood_log": "m.txt",
                                     "beams": 2, "out": sys.argv[1]}))
assert spec.models[0].extra == {"warmth": 1.5, "mood_log": "m.txt"}, spec.models[0].extra
assert spec.decoding.beams == 2
header = spec.replay_dict()
assert header["models"][0]["extra"] == {"warmth": 1.5, "mood_log": "m.txt"}, header
assert GenerationKey.of(spec.replay_spec()).spec.models[0].extra == {"warmth": 1.5}  # a resume ignores the operational one
for bad, words in ((9, "--warmth must be between 0 and 2"), ("hot", "--warmth must be a number")):
    try:
        conformbench.run(tasks=["gsm8k"], backend="fake-opt", warmth=bad, out=sys.argv[1], quiet=True)
    except UsageError as exc:
        assert str(exc).startswith(words), exc
    else:
        raise AssertionError("a bad value ran")

# another backend refuses it, naming the one that takes it
try:
    build_spec(None, run_options({"tasks": "gsm8k", "warmth": 1.0}))
except UsageError as exc:
    assert str(exc) == "--warmth applies to the fake-opt backend (--backend fake-opt), not 'llamacpp'", exc
else:
    raise AssertionError("llamacpp took --warmth")

# a spec file's extra table: checked by the same declaration before anything loads
spec_file = Path(sys.argv[1]) / "s.toml"
spec_file.write_text('[[models]]\nlabel = "f"\nbackend = "fake-opt"\nextra = { warmth = 3.0 }\n'
                     '[[tasks]]\nname = "gsm8k"\nn = 1\n', encoding="utf-8")
try:
    build_spec(spec_file, run_options({}))
except UsageError as exc:
    assert str(exc) == "extra.warmth must be between 0 and 2, not 3.0", exc
else:
    raise AssertionError("the spec's bad value passed")

# the command line: one error line, exit 2
err = io.StringIO()
with contextlib.redirect_stderr(err):
    code = main(["run", "--task", "gsm8k", "--backend", "fake-opt", "--warmth", "5", "--out", sys.argv[1]])
assert code == 2 and "--warmth" in err.getvalue(), (code, err.getvalue())
print("ok")
'''


@pytest.mark.long
def test_a_fake_backends_option_reaches_the_cli_the_spec_and_the_api(tmp_path: Path) -> None:
    script = tmp_path / "fake_backend.py"
    script.write_text(SCRIPT, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True,
                          timeout=300, check=False, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr

