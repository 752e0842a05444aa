"""The plugin registry: did-you-mean on unknown names, one module imported
per lookup, double registration refused, and a plugin module that fails to
import reported as itself on every lookup (never as an "unknown name"), with
optional-dependency engines still registered.

Plugins here are real modules of a throwaway package written to tmp_path and
imported through the ordinary import system."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformbench.errors import UnknownNameError
from conformbench.registry import Registry, did_you_mean, distribution_version, module_installed

_PLUGIN = """
from {registry_module} import REGISTRY

@REGISTRY.register({name!r})
class Plugin:
    pass
"""

_BROKEN = """
from {registry_module} import REGISTRY

@REGISTRY.register("half")
class Half:
    '''registered before the import below fails'''

import conformbench_no_such_dependency_xyz
"""


class _Package:
    """A package ``pkg`` of plugin modules and a module ``reg`` holding a
    registry whose table maps each name to a module of ``pkg``."""

    def __init__(self, root: Path) -> None:
        self.pkg = "cbtestplugins_" + uuid.uuid4().hex[:8]
        self.reg = self.pkg + "_registry"
        self.root = root
        self.dir = root / self.pkg
        self.dir.mkdir()
        (self.dir / "__init__.py").write_text("", encoding="utf-8")
        self.table: dict[str, str] = {}

    def plugin(self, module: str, name: str) -> None:
        self.write(module, _PLUGIN.format(registry_module=self.reg, name=name))
        self.table[name] = f"{self.pkg}.{module}"

    def write(self, module: str, source: str) -> None:
        (self.dir / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")

    def registry(self) -> Registry[type]:
        (self.root / f"{self.reg}.py").write_text(
            f"from conformbench.registry import Registry\nREGISTRY = Registry('widget', {self.table!r})\n",
            encoding="utf-8",
        )
        module = __import__(self.reg)
        registry: Registry[type] = module.REGISTRY
        return registry


@pytest.fixture()
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Package]:
    monkeypatch.syspath_prepend(str(tmp_path))
    # a module file rewritten within the same second must not be read from a stale .pyc
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pkg = _Package(tmp_path)
    yield pkg
    for name in [n for n in sys.modules if n.startswith(pkg.pkg)]:
        del sys.modules[name]


def test_unknown_name_suggests_the_closest(package: _Package) -> None:
    package.plugin("alpha", "llguidance")
    package.plugin("beta", "outlines")
    registry = package.registry()
    assert registry.names() == ["llguidance", "outlines"]
    with pytest.raises(UnknownNameError, match=r"unknown widget 'llguidanse' \(did you mean 'llguidance'\?\); "
                                               r"known: llguidance, outlines"):
        registry.get("llguidanse")
    with pytest.raises(UnknownNameError) as far:
        registry.get("zzzz")
    assert "did you mean" not in str(far.value)
    assert did_you_mean("outline", ["outlines", "gbnf"]) == " (did you mean 'outlines'?)"
    assert did_you_mean("q", ["outlines"]) == ""


def test_a_lookup_imports_only_the_named_module(package: _Package) -> None:
    package.plugin("alpha", "a")
    package.plugin("beta", "b")
    registry = package.registry()
    assert registry.names() == ["a", "b"] and "a" in registry
    assert f"{package.pkg}.alpha" not in sys.modules  # listing and membership import nothing
    assert registry.get("a").__name__ == "Plugin"
    assert f"{package.pkg}.alpha" in sys.modules
    assert f"{package.pkg}.beta" not in sys.modules


def test_create_returns_an_instance(package: _Package) -> None:
    package.plugin("alpha", "a")
    registry = package.registry()
    made = registry.create("a")
    assert isinstance(made, registry.get("a"))


def test_double_registration_is_refused() -> None:
    registry: Registry[object] = Registry("widget")

    class One:
        pass

    class Two:
        pass

    registry.register("x")(One)
    registry.register("x")(One)  # the same object again: harmless
    with pytest.raises(ValueError, match="widget 'x' is registered twice"):
        registry.register("x")(Two)


def test_a_plugin_that_fails_to_import_is_reported_on_every_lookup(package: _Package) -> None:
    package.plugin("good", "json")
    package.write("broken", _BROKEN.format(registry_module=package.reg))
    package.table["half"] = f"{package.pkg}.broken"
    registry = package.registry()
    assert registry.get("json").__name__ == "Plugin"  # another module's failure is not this one's
    for _ in range(2):  # the second lookup must not say "unknown widget 'half'"
        with pytest.raises(ImportError) as caught:
            registry.get("half")
        message = str(caught.value)
        assert f"cannot load widget plugin {package.pkg}.broken" in message
        assert "conformbench_no_such_dependency_xyz" in message
        assert not isinstance(caught.value, UnknownNameError)

    # once the module is fixed, the same registry loads it, although the
    # broken module's first half already registered "half" once
    package.write("broken", _BROKEN.format(registry_module=package.reg).replace(
        "import conformbench_no_such_dependency_xyz", ""))
    assert registry.get("half").__name__ == "Half"


def test_optional_engines_register_without_their_dependencies() -> None:
    """With xgrammar, outlines and llguidance unimportable, every engine still
    registers, and the missing ones say so when asked (not at import)."""
    code = textwrap.dedent("""
        import sys
        for name in ("xgrammar", "outlines", "llguidance", "torch"):
            sys.modules[name] = None  # import fails, find_spec raises
        from conformbench.engines.base import engines
        names = engines.names()
        assert {"gbnf", "llguidance", "outlines", "xgrammar"} <= set(names), names
        for name in ("xgrammar", "outlines", "llguidance"):
            assert name not in sys.modules or sys.modules[name] is None, name
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_xgrammar_reports_unavailability_at_use_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformbench.engines.base import engines

    engine = engines.get("xgrammar")()
    monkeypatch.setattr(type(engine), "module", "conformbench_no_such_dependency_xyz")
    missing = engine.availability()
    assert missing is not None and "xgrammar is not installed" in missing
    assert "pip install" in missing


def test_entry_points_are_read_once_for_every_group() -> None:
    """Each registry's group is selected from one read of every installed
    distribution's entry points (`run -h` read them six times, 10 ms each)."""
    from importlib.metadata import entry_points

    from conformbench.registry import _all_entry_points, installed_entry_points

    for group in ("conformbench.tasks", "pytest11", "console_scripts"):
        assert list(installed_entry_points(group)) == list(entry_points(group=group))
    before = _all_entry_points.cache_info().misses
    installed_entry_points("conformbench.engines")
    installed_entry_points("conformbench.arms")
    assert _all_entry_points.cache_info().misses == before <= 1


def test_a_folder_named_like_a_package_is_not_an_installed_package(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Under pytest, ``tests/backends/vllm`` made ``vllm`` importable and the
    engines' status said vLLM was installed where it was not."""
    (tmp_path / "cb_lookalike").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    assert importlib.util.find_spec("cb_lookalike") is not None
    assert not module_installed("cb_lookalike", ("cb-lookalike",))
    assert module_installed("jsonschema", ("jsonschema",))
    assert distribution_version(("no-such-dist", "jsonschema")) == importlib.metadata.version("jsonschema")
