"""Checking a run's options is light, as the registry promises: the
backends' options and capabilities are read from their manifests
(backends/manifest.py), not by importing every backend, and the API's
runner, scoring and reports are imported only when a run or a scoring
starts. Measured in a fresh interpreter (1,332 modules at issue #50's
filing, aiohttp and jinja2 among them; 266 after)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

HEAVY = ("aiohttp", "jinja2", "torch", "llama_cpp", "numpy", "transformers")


def _loaded_after(code: str) -> dict[str, object]:
    report = f"print(json.dumps({{'count': len(sys.modules), 'heavy': [m for m in {HEAVY!r} if m in sys.modules]}}))"
    probe = "\n".join(["import json, sys", textwrap.dedent(code), report])
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return found


def test_checking_run_options_loads_no_backend_and_few_modules() -> None:
    found = _loaded_after("from conformbench.api import run_options; run_options({'n': 2, 'batched': 2})")
    assert found["heavy"] == [], found
    assert isinstance(found["count"], int) and found["count"] <= 400, found


def test_every_backends_manifest_reads_without_its_heavy_modules() -> None:
    found = _loaded_after(textwrap.dedent("""
        from conformbench.backends.base import backends, manifest_of
        from conformbench.backends.backend_options import declared_options
        assert {"batched", "dialect", "dtype"} <= set(declared_options())
        assert all(manifest_of(name) is not None for name in backends.names())
        assert manifest_of("llamacpp").beams and manifest_of("openai").constraint_side == "server"
    """))
    assert found["heavy"] == [], found


def test_the_light_manifest_is_the_one_on_the_class() -> None:
    from conformbench.backends.base import backends, manifest_of

    for name in backends.manifests:
        assert backends.get(name).manifest is manifest_of(name), name
