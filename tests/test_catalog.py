"""`kvdrill list` reads a cache keyed by each drill file's size and mtime."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trainer.drills import catalog, loader
from trainer.files.paths import data_dir


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "data"
    for kind in ("rubrics", "solutions"):
        shutil.copytree(data_dir(kind), root / kind)
    (root / "drills").mkdir()
    for drill in ("llama31-8b-h100", "llama2-70b-mi300x"):
        shutil.copy(data_dir("drills") / f"{drill}.yaml", root / "drills")
    monkeypatch.setenv("KVDRILL_DATA", str(root))
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path / "home"))
    return root


def test_the_first_listing_writes_the_cache(library: Path) -> None:
    listed = catalog.drill_list()
    cached = json.loads(catalog.cache_path().read_text())
    assert len(cached["entries"]) == len(listed) > 0


def test_a_warm_listing_does_not_parse_the_drills(library: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    first = catalog.drill_list()

    def refuse(path: Path) -> None:
        raise AssertionError(f"parsed {path}")

    monkeypatch.setattr("trainer.drills.loader.load_drill_file", refuse)
    assert catalog.drill_list() == first


def test_an_edited_drill_is_read_again(library: Path) -> None:
    catalog.drill_list()
    path = library / "drills" / "llama31-8b-h100.yaml"
    text = path.read_text()
    path.write_text(text.replace("target_minutes: 13", "target_minutes: 14", 1))
    listed = {d["id"]: d for d in catalog.drill_list()}
    assert listed["llama31-8b-h100"]["minutes"] == 14


def test_a_corrupt_cache_is_rebuilt(library: Path) -> None:
    catalog.cache_path().parent.mkdir(parents=True, exist_ok=True)
    catalog.cache_path().write_text("{not json")
    assert catalog.drill_list()


def test_a_drill_that_cannot_be_loaded_is_listed_as_such_and_never_usable(library: Path) -> None:
    (library / "drills" / "broken.yaml").write_text("id: broken\ntarget_minutes: four\n")
    listed = {d["id"]: d for d in catalog.drill_list()}
    assert listed["broken"]["title"].startswith("(cannot be loaded")
    assert "broken" not in catalog.usable_drill_ids()


def test_the_usable_drills_are_those_that_load_with_their_rubric(library: Path) -> None:
    assert catalog.usable_drill_ids() == ["llama2-70b-mi300x", "llama31-8b-h100"]


def test_an_edited_rubric_checks_its_drills_again(library: Path) -> None:
    catalog.usable_drill_ids()
    (library / "rubrics" / "kv-capacity.yaml").write_text("id: kv-capacity\n")
    loader._load_rubric_cached.cache_clear()  # a new process reads the file afresh
    assert catalog.usable_drill_ids() == []
