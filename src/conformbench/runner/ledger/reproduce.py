"""What ``conformbench reproduce`` reruns. A replay is data: its header's
spec says what was generated (tasks, arms, decoding, the model's name),
never where a request goes, which secret is sent or which local file is
read. So the server, the credential's environment variable, a model file
and a dataset or shots file come from the command line (``--base-url``,
``--api-key-env``, ``--model``, ``--dataset``, ``--shots-from``); what the
replay named instead is shown beside what is used. A replay naming a
server or a model file without the flag that replaces it is refused in one
line, as is a dataset or shots path outside the package's shipped data."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from conformbench.backends.base import manifest_of
from conformbench.backends.locate import MODEL_ALIASES
from conformbench.errors import UsageError
from conformbench.records.markdown_escape import plain_text
from conformbench.records.spec import ModelSpec, RunSpec, TaskSpec
from conformbench.runner.ledger.content import dataset_digest

__all__ = ["ReproduceChoices", "cut_to", "reproduction_spec", "shipped_data_path"]

#: what the replay names that reproduce takes from the command line instead
_PATH_KEYS = (("dataset", "--dataset PATH"), ("shots_from", "--shots-from FILE"))


@dataclass(frozen=True)
class ReproduceChoices:
    """What the user names on the command line (None: not given)."""

    base_url: str | None = None
    api_key_env: str | None = None
    model: str | None = None
    dataset: Path | None = None
    shots_from: Path | None = None


def _shown(value: object) -> str:
    return plain_text(repr(value))


def _data_root() -> Path:
    return Path(str(resources.files("conformbench") / "data")).resolve()


def shipped_data_path(named: str) -> Path | None:
    """The file of this installation's shipped data that a replay's path
    ``named`` means (``src/conformbench/data/replays/x.jsonl``, or the same
    under another checkout or site-packages: the part after the last
    ``conformbench/data``), or None when it names anything else. Resolved
    and checked to stay inside the data folder (no ``..``, no link out)."""
    parts = Path(named).parts
    cut = [i for i in range(len(parts) - 1) if parts[i:i + 2] == ("conformbench", "data")]
    if not cut or cut[-1] + 2 >= len(parts):
        return None
    root = _data_root()
    found = root.joinpath(*parts[cut[-1] + 2:]).resolve()
    return found if found.is_relative_to(root) else None


def _serves(model: ModelSpec) -> bool:
    """Whether the model's requests go to a server."""
    try:
        return model.base_url is not None or manifest_of(model.backend).constraint_side == "server"
    except UsageError:
        return model.base_url is not None


def _model(model: ModelSpec, choices: ReproduceChoices, notes: list[str]) -> ModelSpec:
    """``model`` with the server, key variable and model file the user named."""
    label, update = _shown(model.label), dict[str, Any]()
    extra = dict(model.extra)
    named_key = extra.pop("api_key_env", None)
    if named_key is not None:
        notes.append(f"model {label}: the replay's api_key_env {_shown(named_key)} is not used"
                     + (f"; --api-key-env {choices.api_key_env} is" if choices.api_key_env else ""))
    if choices.api_key_env is not None:
        extra["api_key_env"] = choices.api_key_env
    update["extra"] = extra
    if _serves(model):
        if choices.base_url is None:
            raise UsageError(f"the replay's model {label} was served at {_shown(model.base_url)}: a replay does "
                             "not choose the server a request (and its key) goes to; give --base-url URL to "
                             "rerun it against a server you name")
        notes.append(f"model {label}: server --base-url (the replay's: {_shown(model.base_url)})")
        update["base_url"] = choices.base_url
    elif model.model is not None and model.model not in MODEL_ALIASES:
        if choices.model is None:
            raise UsageError(f"the replay's model {label} was loaded from {_shown(model.model)}: a replay does "
                             "not choose which local file is read; give --model PATH to rerun it with a "
                             "model file you name")
        notes.append(f"model {label}: --model {choices.model} (the replay's: {_shown(model.model)})")
        update["model"] = choices.model
    return model.model_copy(update=update)


def _task(task: TaskSpec, choices: ReproduceChoices, notes: list[str]) -> TaskSpec:
    """``task`` with its dataset and shots file: the user's, else a shipped one."""
    update: dict[str, Any] = {}
    for key, flag in _PATH_KEYS:
        named, given = getattr(task, key), getattr(choices, key)
        if named is None:
            continue
        if given is not None:
            notes.append(f"task {_shown(task.name)}: {flag.split()[0]} {given} (the replay's: {_shown(named)})")
            update[key] = str(given)
            continue
        shipped = shipped_data_path(named)
        if shipped is None:
            raise UsageError(f"the replay's task {_shown(task.name)} reads {key} {_shown(named)}, outside "
                             f"conformbench's shipped data: a replay does not choose which local file is "
                             f"read (and sent as prompts); give {flag} to rerun it with a file you name")
        update[key] = str(shipped)
    dataset = update.get("dataset")
    if dataset is not None and task.dataset_sha256 and dataset_digest(dataset) != task.dataset_sha256:
        notes.append(f"task {_shown(task.name)}: the dataset's content is not the replay's "
                     f"(sha256 {task.dataset_sha256[:12]}… there): expect other items")
    return task.model_copy(update=update)


def _unused(spec: RunSpec, choices: ReproduceChoices) -> None:
    """A flag the replay has no use for is refused, not ignored."""
    checks = (("--base-url", choices.base_url, any(_serves(m) for m in spec.models)),
              ("--api-key-env", choices.api_key_env, any(_serves(m) for m in spec.models)),
              ("--model", choices.model, any(not _serves(m) and m.model is not None
                                             and m.model not in MODEL_ALIASES for m in spec.models)),
              ("--dataset", choices.dataset, any(t.dataset is not None for t in spec.tasks)),
              ("--shots-from", choices.shots_from, any(t.shots_from is not None for t in spec.tasks)))
    for flag, given, used in checks:
        if given is not None and not used:
            raise UsageError(f"{flag}: the replay names nothing it would replace")


def reproduction_spec(spec: RunSpec, choices: ReproduceChoices) -> tuple[RunSpec, list[str]]:
    """The replay's ``spec`` to rerun, with what the user named in place of
    what the replay named, and a line per replacement (shown before the run)."""
    _unused(spec, choices)
    notes: list[str] = []
    models = [_model(m, choices, notes) for m in spec.models]
    tasks = [_task(t, choices, notes) for t in spec.tasks]
    return spec.model_copy(update={"models": models, "tasks": tasks}), notes


def cut_to(spec: RunSpec, n: int | None) -> RunSpec:
    """``spec`` with its tasks cut to the first ``n`` items each (None: as it is)."""
    if n is None:
        return spec
    return spec.model_copy(update={"tasks": [t.model_copy(update={"n": n if t.n is None else min(n, t.n)})
                                             for t in spec.tasks]})
