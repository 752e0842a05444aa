"""The suite itself, as a user sees it: skip reasons say why and what to
install, and a session that loaded llama.cpp ends without
``ResourceWarning: unclosed file``."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
_REASON = re.compile(r"""(?:(?<!\w)reason=|pytest\.skip\()\s*(["'])(.+?)\1""")


def test_skip_reasons_are_meaningful_to_a_user() -> None:
    reasons = {m.group(2) for path in TESTS.rglob("*.py") for m in _REASON.finditer(path.read_text("utf-8"))}
    assert len(reasons) > 5
    for reason in reasons:
        assert "beside the repository" not in reason and len(reason.split()) >= 3, reason


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama_cpp is not importable")
def test_imports_llama_cpp() -> None:
    import llama_cpp._utils

    assert not llama_cpp._utils.outnull_file.closed


@pytest.mark.long
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama_cpp is not importable")
def test_a_session_that_loaded_llama_cpp_ends_without_resource_warnings() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"{__file__}::test_imports_llama_cpp"],
        capture_output=True, text=True, timeout=300, cwd=TESTS.parent, check=False)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "ResourceWarning" not in done.stdout + done.stderr
