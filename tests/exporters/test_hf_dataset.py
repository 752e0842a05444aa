"""``export_hf``: a built dataset in the Hub's layout, read back by the
real ``datasets.load_dataset`` offline (HF_HUB_OFFLINE=1, an absolute local
path, a private cache), row for row equal to the dataset and the validation
task's items, and byte-identical when exported again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conformbench.exporters.hf_dataset import CONFIGS, export_hf
from conformbench.records.items import TaskOptions
from conformbench.schemas.build import BuildOptions, build_dataset
from conformbench.schemas.case import load_dataset
from conformbench.tasks.base import tasks

datasets = pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ds")
    build_dataset(BuildOptions(out=out, n=24, seed=3))
    return out


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))


def _load(out: Path, config: str) -> list[dict[str, object]]:
    loaded = datasets.load_dataset(str(out.resolve()), config, split="test")
    return [dict(row) for row in loaded]


@pytest.mark.long
@pytest.mark.usefixtures("offline")
def test_load_dataset_reads_both_configs_offline(built: Path, tmp_path: Path) -> None:
    done = export_hf(built, tmp_path / "hub")
    cases = load_dataset(built)
    rows = _load(done.out, "schemas")
    assert [r["id"] for r in rows] == [c.id for c in cases]
    for row, case in zip(rows, cases):
        # a JSON string keeps the schema's key order, which is part of the contract
        assert json.dumps(json.loads(str(row["schema"]))) == json.dumps(case.schema)
        for fmt in ("json", "yaml", "xml", "python", "nl"):
            assert row[fmt] == case.renderings.get(fmt)
        assert json.loads(str(row["valid_instance"])) == case.valid_instance
        invalid = row["invalid_instances"]
        assert isinstance(invalid, list)
        assert [(i["keyword"], json.loads(i["instance"])) for i in invalid] == [
            (i.keyword, i.instance) for i in case.invalid_instances]
    items = tasks.get("validation")(TaskOptions(dataset=str(built))).items()
    validation = _load(done.out, "validation")
    assert done.validation_items == len(items) == len(validation) > 0
    assert [(r["id"], r["label"], json.loads(str(r["instance"]))) for r in validation] == [
        (i.id, i.target, i.input["instance"]) for i in items]
    assert {r["label"] for r in validation} == {"yes", "no"}
    assert sum(r["label"] == "yes" for r in validation) * 2 == len(validation)  # balanced


def test_the_card_declares_the_configs(built: Path, tmp_path: Path) -> None:
    done = export_hf(built, tmp_path / "hub")
    card = (done.out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n")
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["license"] == "mit" and "text-generation" in header["task_categories"]
    declared = {c["config_name"]: c["data_files"][0] for c in header["configs"]}
    assert declared == {name: {"split": "test", "path": path} for name, path in CONFIGS.items()}
    assert all((done.out / path).is_file() for path in CONFIGS.values())


def test_a_rebuild_is_byte_identical(built: Path, tmp_path: Path) -> None:
    first = export_hf(built, tmp_path / "a")
    second = export_hf(built, tmp_path / "b")
    for a, b in zip(first.files, second.files):
        assert a.read_bytes() == b.read_bytes(), a.name
