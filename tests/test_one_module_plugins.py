"""Issue #50's done-when: a plugin is one new module and one registration
line, and nothing else. Each plugin below is written to its own module in a
fresh folder, registered by one entry point (how a package of plugins is
installed: docs/extending.md), and run in a fresh interpreter; each shows
up in ``conformbench run -h``, the spec, the API's keywords, ``conformbench
list`` and the replay of a tiny run, with no edit to conformbench:

- a backend with a new option (``--style``) and a capability (beams),
- an engine (llguidance in its strict mode),
- a task with its own option (``--shout``) and its own axis (``--tone``).

The arm of the issue (``repair`` with other wording) is the arms' own test's:
it adds its module to ``PLUGINS`` and its line to ``ENTRY_POINTS``
(group ``conformbench.arms``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: module name -> its whole text: one module per plugin
PLUGINS: dict[str, str] = {
    "instant_backend": '''\
"""An instant backend: answers at once, in the style its option asks for."""

from conformbench import BackendConfig, BackendManifest, BackendOption, GenerationRequest, GenerationResult, backends


@backends.register("instant")
class InstantBackend:
    manifest = BackendManifest(
        constraint_side="server", distributions=(), beams=True,
        options=(BackendOption("style", str, choices=("terse", "chatty"), help="How the instant model answers."),),
    )

    def __init__(self, config: BackendConfig) -> None:
        self.style = config.extra.get("style", "terse")

    def generate(self, request: GenerationRequest) -> GenerationResult:
        asked = request.prompt.messages[-1].content
        words = "Let me see. " if self.style == "chatty" else ""
        text = '{"answer": "Paris"}' if "JSON" in asked else f"{words}Answer: Paris"
        return GenerationResult(text=text, finish_reason="stop", completion_tokens=len(text.split()),
                                beams=request.settings.beams)

    def generate_many(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        return [self.generate(r) for r in requests]

    def metadata(self) -> dict[str, object]:
        return {"style": self.style}

    def close(self) -> None:
        pass
''',
    "strict_engine": '''\
"""llguidance in its strict mode."""

from conformbench import engines


@engines.register("llguidance-strict")
class StrictLlguidance(engines.get("llguidance")):  # type: ignore[misc]
    lenient = False
''',
    "tones_task": '''\
"""Capitals, asked in a tone of voice (the task's own axis)."""

from typing import Literal

from pydantic import Field

from conformbench import Axis, Condition, ContractTask, Item, JSONValue, TaskParams, answer_line, tasks


class TonesOptions(TaskParams):
    tone: list[Literal["plain", "pirate"]] = Field(["plain"], description="Tones to ask in (a grid axis).")
    shout: bool = Field(False, description="Ask in capitals.")


@tasks.register("tones")
class Tones(ContractTask):
    options_model = TonesOptions
    axes = (Axis("tone", "tone", "the tone of voice of the question"),)
    schemas = {"answer": {"type": "object", "properties": {"answer": {"type": "string"}},
                          "required": ["answer"], "additionalProperties": False}}

    def load_items(self) -> list[Item]:
        return [Item(id=f"c{i}", input={"country": c}, target="Paris") for i, c in enumerate(["France", "Gaul"])]

    def free_prompt(self, item: Item) -> str:
        return f"What is the capital of {item.input['country']}? End with 'Answer: <city>'."

    def posed(self, text: str, condition: Condition) -> str:
        text = f"Arr! {text}" if condition.axis("tone") == "pirate" else text
        return text.upper() if getattr(self.task_params, "shout", False) else text

    def extract_free(self, item: Item, text: str) -> JSONValue:
        return answer_line(text)

    def is_correct(self, item: Item, answer: JSONValue) -> bool:
        return answer == item.target
''',
}

#: the one registration line of each plugin, by entry-point group
ENTRY_POINTS: dict[str, dict[str, str]] = {
    "conformbench.backends": {"instant": "instant_backend"},
    "conformbench.engines": {"llguidance-strict": "strict_engine"},
    "conformbench.tasks": {"tones": "tones_task"},
    # "conformbench.arms": the arms' test adds its repair-with-other-wording here
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the plugins as an installed distribution would."""
    root = tmp_path_factory.mktemp("plugins")
    for name, text in PLUGINS.items():
        (root / f"{name}.py").write_text(text, encoding="utf-8")
    dist = root / "cbplugins-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cbplugins\nVersion: 0.1\n", encoding="utf-8")
    lines = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in names.items())
             for group, names in ENTRY_POINTS.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    return root


def _python(site: Path, code: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)]), "COLUMNS": "250",
           "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          check=False, env=env, cwd=cwd or site)


def _cli(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return _python(site, f"import sys; from conformbench.cli.main import main; sys.argv = ['conformbench', *{list(args)!r}]; main()",
                   cwd)


def _commands(site: Path, *commands: list[str]) -> list[str]:
    """What each command printed on stdout, all run in one interpreter (each
    start of the command line costs seconds on a busy machine)."""
    code = "\n".join(["import sys", "from conformbench.cli.main import main",
                      *(f"print('\\n@@@', main({c!r}), flush=True)" for c in commands)])
    done = _python(site, code)
    assert done.returncode == 0, done.stderr
    parts = done.stdout.split("\n@@@ ")
    assert [p.split("\n", 1)[0] for p in parts[1:]] == ["0"] * len(commands), done.stdout + done.stderr
    return [p.split("\n", 1)[1] if i else p for i, p in enumerate(parts[:-1])]


@pytest.mark.long
def test_run_help_and_list_show_each_plugin(site: Path) -> None:
    helped, tasks, backends, engines = _commands(
        site, ["run", "-h"], ["list", "tasks", "--json"], ["list", "backends", "--json"], ["list", "engines", "--json"])
    text = " ".join(helped.split())
    assert "instant backend" in text and "--style" in text and "How the instant model answers." in text
    assert "tones task" in text and "--tone" in text and "Tones to ask in (a grid axis)." in text
    assert "--shout" in text and "Ask in capitals." in text
    assert "llguidance-strict" in text and "instant" in text.split("--backend", 1)[1][:300]
    (row,) = [r for rows in json.loads(tasks).values() for r in rows if r["name"] == "tones"]
    assert "options: --tone, --shout" in row["about"] and "axes: tone" in row["about"]
    (row,) = [r for rows in json.loads(backends).values() for r in rows if r["name"] == "instant"]
    assert "--style" in row["about"] and "beams" in row["about"]
    assert "llguidance-strict" in [e["engine"] for e in json.loads(engines)["engines"]]


def test_the_spec_and_the_api_keywords_take_each_plugin(site: Path) -> None:
    done = _python(site, """
import json
from conformbench import UsageError
from conformbench.api import run_options
from conformbench.runner.defaults import build_spec
options = run_options({"tasks": ["tones"], "tone": ["pirate"], "shout": True, "backend": "instant",
                       "style": "chatty", "beams": 2})
spec = build_spec(None, options)
# a grammar engine is for a backend that applies one itself (the default, llama.cpp's)
engine = build_spec(None, run_options({"tasks": ["tones"], "engines": ["llguidance-strict"]}))
said = []
for bad in ({"tonee": ["plain"]}, {"tasks": ["gsm8k"], "tone": ["plain"]}, {"style": "loud", "backend": "instant"}):
    try:
        build_spec(None, run_options(bad))
    except UsageError as exc:
        said.append(str(exc))
print(json.dumps({"task": spec.tasks[0].model_dump(mode="json"), "engines": engine.tasks[0].engines, "model": spec.models[0].model_dump(mode="json"),
                  "beams": spec.decoding.beams, "said": said}))
""")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["task"]["params"] == {"tone": ["pirate"], "shout": True}
    assert found["engines"] == ["llguidance-strict"]
    assert found["model"]["backend"] == "instant" and found["model"]["extra"] == {"style": "chatty"}
    assert found["beams"] == 2
    unknown, elsewhere, bad_style = found["said"]
    assert "unknown run option 'tonee' (did you mean 'tone'?)" in unknown
    assert "applies to task tones (--task tones), not to gsm8k" in elsewhere
    assert "loud" in bad_style and "chatty" in bad_style


def _replay(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "replay.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.long
def test_a_tiny_run_records_each_plugin_in_its_replay(site: Path, tmp_path: Path) -> None:
    done = _cli(site, "run", "--backend", "instant", "--style", "chatty", "--task", "tones", "--tone", "plain",
                "--tone", "pirate", "--shout", "--arm", "unconstrained", "--arm", "prompt_only[answer]", "-n", "2",
                "--beams", "2", "--out", "cli", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    header, *records = _replay(tmp_path / "cli")
    (task,) = header["spec"]["tasks"]
    assert task["name"] == "tones" and task["params"] == {"tone": ["plain", "pirate"], "shout": True}
    assert header["spec"]["models"][0]["extra"] == {"style": "chatty"} and header["spec"]["decoding"]["beams"] == 2
    assert {r["backend"] for r in records if r["kind"] == "model"} == {"instant"}
    generations = [r for r in records if r["kind"] == "generation"]
    by_tone = {tone: [g for g in generations if g["condition"]["axes"] == [["tone", tone]]] for tone in ("plain", "pirate")}
    assert [len(v) for v in by_tone.values()] == [4, 4]  # 2 items x 2 arms in each tone
    assert all(g["prompt"]["messages"][0]["content"].startswith("ARR! ") for g in by_tone["pirate"])
    assert not any("ARR!" in g["prompt"]["messages"][0]["content"] for g in by_tone["plain"])
    assert all(g["beams"] == 2 for g in generations)  # the capability was used, not refused
    assert {g["text"] for g in generations if g["condition"]["arm"] == "unconstrained"} == {"Let me see. Answer: Paris"}
    # the API's keywords make the same run
    api = _python(site, """
import conformbench
conformbench.run(tasks=["tones"], tone=["plain", "pirate"], shout=True, backend="instant", style="chatty",
                 arms=["unconstrained", "prompt_only[answer]"], n=2, beams=2, out="api", quiet=True)
""", cwd=tmp_path)
    assert api.returncode == 0, api.stderr
    assert _replay(tmp_path / "api")[0]["spec"] == header["spec"]
    # and the replay rescores alone into the same report, its axis in each condition's key
    again = _cli(site, "score", "cli/replay.jsonl", "--out", "again", "--quiet", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    report = (tmp_path / "again" / "report.json").read_text(encoding="utf-8")
    assert report == (tmp_path / "cli" / "report.json").read_text(encoding="utf-8")
    assert "tone=pirate/prompt_only[answer]" in report
