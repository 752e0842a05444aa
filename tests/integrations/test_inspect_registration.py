"""Inspect finds our tasks under the names users type (``inspect eval
conformbench/gsm8k_arms``) through the package's ``inspect_ai`` entry point.
Fast, no server: Inspect prefixes a task with its package only when it sees
the package installed (site-packages, or editable per its direct_url.json),
so anything that shadows the install's metadata (an egg-info on sys.path
ahead of it) drops the prefix and ``conformbench/...`` resolves to nothing."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")
registry = pytest.importorskip("inspect_ai._util.registry")  # pinned <0.4 in [inspect]

from conformbench.integrations.inspect_tasks import __all__ as TASKS  # noqa: E402


@pytest.mark.parametrize("name", TASKS)
def test_each_task_resolves_under_the_package_prefix(name: str) -> None:
    found = registry.registry_lookup("task", f"conformbench/{name}")
    assert found is not None, (
        f"Inspect does not know conformbench/{name}: is conformbench installed (pip install -e .) "
        "and no other conformbench metadata (an egg-info on sys.path) ahead of the install's?")
    assert registry.registry_info(found).name == f"conformbench/{name}"
