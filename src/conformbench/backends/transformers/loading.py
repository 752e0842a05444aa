"""Options, checkpoint location and loading for the transformers backend.

``--model`` is a local checkpoint: a directory (``config.json`` and weights,
as ``save_pretrained`` writes them) or a GGUF file, which transformers loads
dequantised (it needs ``accelerate`` and ``gguf``). Nothing is fetched from a
hub: offline mode is set before transformers is imported, and a name that is
not a local path is refused in one line. Without ``--model`` the embedded
SmolLM2-135M-Instruct GGUF is used, so the backend runs with nothing
downloaded. Every failure is one UsageError line.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformbench.backends.chat_template import bounded_like
from conformbench.backends.locate import MODEL_ALIASES, check_gguf, embedded_model_path
from conformbench.backends.transformers.options import DEVICES, DTYPE_NAMES, DTYPES, check_device, check_dtype
from conformbench.errors import UsageError
from conformbench.files import MAX_SCHEMA_BYTES, file_sha256, read_text_file, regular_file
from conformbench.records.prompt import Prompt
from conformbench.registry import did_you_mean

__all__ = [
    "DEVICES",
    "DTYPES",
    "DTYPE_NAMES",
    "HF_EXTRA_HINT",
    "Checkpoint",
    "HfOptions",
    "bounded_chat_template",
    "check_device",
    "check_dtype",
    "checkpoint_digest",
    "load_checkpoint",
    "missing_extra",
    "parse_options",
    "refuse_remote_code",
    "resolve_checkpoint",
    "set_torch_threads",
]

HF_EXTRA_HINT = "pip install 'conformbench[hf]'"
#: the distributions the backend needs (import names)
_NEEDED = {"torch": "torch", "transformers": "transformers", "accelerate": "accelerate"}
_EXTRA_KEYS = {"dtype", "device", "chat_template"}


@dataclass(frozen=True)
class HfOptions:
    """The backend's own options (``BackendConfig.extra``)."""

    #: torch dtype name: "bfloat16", "float32" or "float16"
    dtype: str = "bfloat16"
    #: "auto" (cuda when available, else cpu), "cpu", "cuda" or "cuda:N"
    device: str = "auto"
    #: "auto" (the tokenizer's chat template) or "none" (raw prompt text)
    chat_template: str = "auto"


def missing_extra() -> str | None:
    """Why the backend cannot run here (a distribution of the extra is
    missing), or None."""
    absent = [dist for dist, module in _NEEDED.items() if importlib.util.find_spec(module) is None]
    if not absent:
        return None
    return f"the transformers backend needs {', '.join(absent)}: {HF_EXTRA_HINT}"


def parse_options(extra: dict[str, Any]) -> HfOptions:
    unknown = sorted(set(extra) - _EXTRA_KEYS)
    if unknown:
        hint = did_you_mean(unknown[0], sorted(_EXTRA_KEYS))
        raise UsageError(f"transformers backend: unknown option(s) {unknown}{hint}; known: {sorted(_EXTRA_KEYS)}")
    dtype = check_dtype(str(extra.get("dtype", "bf16")))
    device = check_device(str(extra.get("device", "auto")))
    template = str(extra.get("chat_template", "auto"))
    if template not in ("auto", "none"):
        raise UsageError(f"chat_template must be 'auto' or 'none', not {template!r}")
    return HfOptions(dtype=dtype, device=device, chat_template=template)


@dataclass(frozen=True)
class Checkpoint:
    """A local checkpoint: a directory, or a GGUF file (``gguf_file`` set)."""

    path: Path
    gguf_file: str | None = None

    @property
    def directory(self) -> Path:
        return self.path.parent if self.gguf_file else self.path


def resolve_checkpoint(spec: str | None) -> Checkpoint:
    """The checkpoint ``--model`` names: None or an alias (the embedded GGUF),
    a GGUF file or a checkpoint directory. A hub id is refused."""
    if spec is None:
        path = embedded_model_path()
        return Checkpoint(path, path.name)
    if spec in MODEL_ALIASES:
        path = MODEL_ALIASES[spec]()
        return Checkpoint(path, path.name)
    path = Path(spec).expanduser()
    if path.is_dir():
        if not (path / "config.json").exists():
            raise UsageError(f"{path} is not a transformers checkpoint directory (no config.json in it)")
        for entry in sorted(path.iterdir()):  # a FIFO among the weights would block their read
            if not entry.is_dir():
                regular_file(entry, f"checkpoint file {entry}")
        return Checkpoint(path)
    if path.exists() or spec.endswith(".gguf"):
        checked = check_gguf(path)
        return Checkpoint(checked, checked.name)
    hint = did_you_mean(spec, sorted(MODEL_ALIASES))
    raise UsageError(f"model {spec!r} is not a local checkpoint directory, GGUF file or alias{hint}: the "
                     "transformers backend fetches nothing from a hub (download it first, e.g. "
                     f"`hf download {spec} --local-dir DIR`, and pass --model DIR)")


def checkpoint_digest(checkpoint: Checkpoint) -> str:
    """sha256 of the GGUF file, or of a directory's files: each file's
    relative path and sha256, in sorted order (hidden files left out)."""
    if checkpoint.gguf_file:
        return file_sha256(checkpoint.path)
    digest = hashlib.sha256()
    for file in sorted(p for p in checkpoint.path.rglob("*") if p.is_file()):
        rel = file.relative_to(checkpoint.path)
        if any(part.startswith(".") for part in rel.parts):
            continue
        digest.update(f"{rel.as_posix()}\0{file_sha256(file)}\n".encode())
    return digest.hexdigest()


@contextmanager
def _quiet_offline() -> Iterator[None]:
    """Offline mode for good, and no progress bars while loading. The GGUF
    dequantising bar is a tqdm of transformers' GGUF module that no setting
    turns off (tqdm reads its environment once, when first imported): that
    module's ``tqdm`` is swapped for a disabled one while loading, where the
    module has one (a later transformers without it just shows its bar)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import transformers

    logs: Any = transformers.utils.logging  # untyped
    logs.set_verbosity_error()
    logs.disable_progress_bar()
    try:
        gguf_utils: Any = importlib.import_module("transformers.modeling_gguf_pytorch_utils")
    except ImportError:
        gguf_utils = None
    bar = getattr(gguf_utils, "tqdm", None)
    if bar is not None:
        gguf_utils.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        if bar is not None:
            gguf_utils.tqdm = bar


def _json_table(path: Path) -> dict[str, Any]:
    """A checkpoint's JSON config file as a dict ({} when absent), read
    through the one file reader."""
    if not path.exists() and not path.is_symlink():
        return {}
    try:
        value = json.loads(read_text_file(path, "checkpoint file", MAX_SCHEMA_BYTES))
    except (ValueError, RecursionError):
        raise UsageError(f"{path} is not JSON") from None
    if not isinstance(value, dict):
        raise UsageError(f"{path} does not hold a JSON object")
    return value


def refuse_remote_code(directory: Path) -> None:
    """UsageError when loading the checkpoint in ``directory`` would need
    code from the folder: a config or tokenizer config with ``auto_map``
    (classes in the folder's Python files), or a model type transformers
    does not build in. conformbench never executes a model folder's code."""
    from transformers import CONFIG_MAPPING

    config = _json_table(directory / "config.json")
    for name in ("config.json", "tokenizer_config.json"):
        table = config if name == "config.json" else _json_table(directory / name)
        if "auto_map" in table:
            raise UsageError(f"{directory / name} names Python code in the folder (auto_map): conformbench never "
                             "runs code from a model folder; use a checkpoint of a model type transformers builds in")
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or model_type not in CONFIG_MAPPING:
        raise UsageError(f"{directory / 'config.json'}: model type {model_type!r} is not built into this "
                         "transformers, and conformbench never runs code from a model folder")


def bounded_chat_template(source: str) -> Any:
    """The checkpoint's chat template compiled as transformers compiles it
    (its filters, globals, extensions), in the bounded sandbox
    (``backends.chat_template``): a template is data from the folder."""
    from transformers.utils.chat_template_utils import _compile_jinja_template

    # their environment, from an empty template: compiling ``source`` there
    # would fold its constant expressions ('x' * 10**9) unbounded
    return bounded_like(source, _compile_jinja_template(""))


def render_chat(bounded: Any, tokenizer: Any, prompt: Prompt) -> str:
    """``prompt`` through a checkpoint's compiled chat template (what
    ``apply_chat_template(tokenize=False, add_generation_prompt=True)``
    renders) plus its ``assistant_prefix``."""
    messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
    try:
        rendered = bounded.render(messages=messages, tools=None, documents=None, add_generation_prompt=True,
                                  **tokenizer.special_tokens_map)
    except Exception as exc:  # noqa: BLE001 - template errors come from jinja2 and raise_exception
        raise UsageError(f"the model's chat template rejected the prompt: {exc}") from None
    return str(rendered) + prompt.assistant_prefix


def pick_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError(f"device {device!r}: this torch build sees no CUDA device (use device 'cpu')")
    return device


def set_torch_threads(torch: Any, threads: int | None) -> None:
    """``--threads`` for torch: intra-op threads (matrix products) and, once
    per process before any parallel work, inter-op threads. Without it torch
    takes every core, which on a busy machine is slower than a fair share
    (threads waiting on each other's cores)."""
    if not threads:
        return
    torch.set_num_threads(threads)
    if torch.get_num_interop_threads() != threads:
        try:
            torch.set_num_interop_threads(threads)
        except RuntimeError:  # set already, or parallel work started: it can be set once only
            pass


def load_tokenizer(checkpoint: Checkpoint) -> tuple[Any, int]:
    """(tokenizer, the width of the model's logits as its config declares
    it), read without the weights (``engines check``)."""
    missing = missing_extra()
    if missing is not None:
        raise UsageError(missing)
    with _quiet_offline():
        from transformers import AutoConfig, AutoTokenizer

        where = str(checkpoint.directory)
        kwargs: dict[str, Any] = {"gguf_file": checkpoint.gguf_file} if checkpoint.gguf_file else {}
        if not checkpoint.gguf_file:
            refuse_remote_code(checkpoint.path)
        try:
            tokenizer = AutoTokenizer.from_pretrained(where, local_files_only=True, trust_remote_code=False,
                                                      **kwargs)
            config = AutoConfig.from_pretrained(where, local_files_only=True, trust_remote_code=False, **kwargs)
        except Exception as exc:  # noqa: BLE001 - a foreign checkpoint: any failure is the user's file
            first = " ".join(str(exc).split())[:300]
            raise UsageError(f"transformers cannot read the tokenizer of {checkpoint.path} "
                             f"({type(exc).__name__}): {first}") from None
    width = getattr(config, "vocab_size", None)
    if not isinstance(width, int) or width < 1:
        raise UsageError(f"the config of {checkpoint.path} declares no vocab_size")
    return tokenizer, max(width, len(tokenizer))


def load_checkpoint(checkpoint: Checkpoint, options: HfOptions, threads: int | None) -> tuple[Any, Any, str]:
    """(model in eval mode on its device, tokenizer, device)."""
    missing = missing_extra()
    if missing is not None:
        raise UsageError(missing)
    with _quiet_offline():
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        set_torch_threads(torch, threads)
        device = pick_device(options.device)
        where = str(checkpoint.directory)
        kwargs: dict[str, Any] = {"gguf_file": checkpoint.gguf_file} if checkpoint.gguf_file else {}
        if not checkpoint.gguf_file:
            refuse_remote_code(checkpoint.path)
        tokenizer: Any
        model: Any
        try:
            # trust_remote_code=False: transformers' default (None) asks on the
            # terminal and, on "y", runs the Python file a config's auto_map names
            tokenizer = AutoTokenizer.from_pretrained(where, local_files_only=True, trust_remote_code=False,
                                                      **kwargs)
            model = AutoModelForCausalLM.from_pretrained(
                where, local_files_only=True, trust_remote_code=False, dtype=getattr(torch, options.dtype),
                **kwargs)
        except Exception as exc:  # noqa: BLE001 - a foreign checkpoint (truncated weights, a cut GGUF
            # read by numpy, a safetensors header that lies): any failure is the user's file
            first = " ".join(str(exc).split())[:300]
            raise UsageError(f"transformers cannot load {checkpoint.path} ({type(exc).__name__}): {first}") from None
    model.to(device)
    model.train(False)  # inference mode (dropout off), as from_pretrained leaves it
    return model, tokenizer, device
