"""What makes show, solution and review start quickly, and what keeps that honest: a drill or
rubric file validated once is made into objects from its kept data (no YAML, no pydantic); a
worked solution rendered once is kept; anything changed (the file, a template, the code) or
damaged in the cache is validated or rendered afresh."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from probes import imported_after

from trainer.drills import loader
from trainer.drills.reference import AnswerKey
from trainer.drills.render import render_solution
from trainer.drills.solutions import worked_solution
from trainer.errors import DrillFileError
from trainer.files.paths import data_dir

DRILL = "llama2-70b-mi300x"
HEAVY = ("pydantic", "yaml", "jinja2", "sympy")


def _imports_after(args: list[str], home: Path) -> list[str]:
    return imported_after(args, home, HEAVY) or ["NONE"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A store with one piped attempt of the 8B drill, so `review 1` has something to read."""
    folder = tmp_path / "home"
    subprocess.run([sys.executable, "-c", "from trainer.app.cli import main; main()",
                    "practice", "llama31-8b-h100"], input="32\n8\n128\n", text=True,
                   capture_output=True, timeout=120, check=True,
                   env=dict(os.environ, KVDRILL_HOME=str(folder)))
    return folder


@pytest.mark.parametrize("args", [["show", DRILL], ["solution", DRILL], ["review", "1"]])
def test_a_second_run_imports_no_yaml_pydantic_or_jinja(args: list[str], home: Path) -> None:
    _imports_after(args, home)  # the first run keeps what it validated and rendered
    assert _imports_after(args, home) == ["NONE"]


def test_the_first_run_validates_with_pydantic(home: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh-home"
    assert "pydantic" in _imports_after(["show", DRILL], fresh)


def _kept_drill_entry(home: Path) -> tuple[Path, dict[str, Any]]:
    """The cache entry that keeps DRILL's validated data, and that entry as read."""
    for entry in sorted((home / "parsed").glob("*.json")):
        kept = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(kept["data"], dict) and kept["data"].get("id") == DRILL:
            return entry, kept
    raise AssertionError("no kept validation of the drill")


def test_a_damaged_kept_validation_is_validated_again(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    path = data_dir("drills") / f"{DRILL}.yaml"
    first = loader.validate(path, loader.Drill)
    entry, kept = _kept_drill_entry(tmp_path)
    kept["data"]["title"] = "tampered"  # the digest beside it no longer matches
    entry.write_text(json.dumps(kept), encoding="utf-8")
    assert loader.validate(path, loader.Drill) == first


def test_kept_data_that_no_longer_fits_the_model_is_validated_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from trainer.files import parsed_cache

    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    path = data_dir("drills") / f"{DRILL}.yaml"
    first = loader.validate(path, loader.Drill)
    entry, kept = _kept_drill_entry(tmp_path)
    del kept["data"]["steps"]
    kept["digest"] = parsed_cache._digest(kept["data"])  # damaged, yet self-consistent
    entry.write_text(json.dumps(kept), encoding="utf-8")
    assert loader.validate(path, loader.Drill) == first


def test_an_edited_drill_file_is_validated_afresh(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path / "home"))
    copy = tmp_path / f"{DRILL}.yaml"
    shutil.copy(data_dir("drills") / f"{DRILL}.yaml", copy)
    loader.validate(copy, loader.Drill)
    text = copy.read_text(encoding="utf-8")
    copy.write_text(text.replace("target_minutes:", "target_minutes: -3\nx_unknown:", 1),
                    encoding="utf-8")
    with pytest.raises(DrillFileError):
        loader.validate(copy, loader.Drill)


def test_a_kept_solution_is_the_rendered_one(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    drill, _ = loader.find_drill(DRILL)
    key = AnswerKey(drill)
    assert worked_solution(key) == render_solution(key)
    assert worked_solution(key) == render_solution(key)  # now from the cache


def test_an_edited_template_is_rendered_again(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    for kind in ("drills", "rubrics", "solutions"):
        shutil.copytree(data_dir(kind), data / kind)
    monkeypatch.setenv("KVDRILL_DATA", str(data))
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path / "home"))
    drill, _ = loader.find_drill(DRILL)
    key = AnswerKey(drill)
    before = worked_solution(key)
    template = data / "solutions" / drill.solution
    template.write_text(template.read_text(encoding="utf-8") + "\nAn added line.\n",
                        encoding="utf-8")
    after = worked_solution(key)
    assert after != before and after.rstrip().endswith("An added line.")


def test_a_variant_keeps_its_own_solution(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from trainer.drills.variants import answer_key

    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    drill, _ = loader.find_drill(DRILL)
    own = worked_solution(answer_key(drill, None))
    variant = worked_solution(answer_key(drill, 7))
    assert variant != own and variant == render_solution(answer_key(drill, 7))


def test_kept_key_rows_are_the_ones_worked_out(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from trainer.drills.variants import answer_key
    from trainer.views import keys

    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    drill, _ = loader.find_drill(DRILL)
    worked_out = keys._key_rows(answer_key(drill, 3))
    assert keys.key_rows(answer_key(drill, 3)) == worked_out
    assert keys.key_rows(answer_key(drill, 3)) == worked_out  # now from the cache
    assert keys.key_rows(answer_key(drill, 4)) != worked_out  # another variant: its own rows


def test_kept_key_rows_of_another_shape_are_worked_out_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from trainer.drills import solutions
    from trainer.drills.variants import answer_key
    from trainer.views import keys

    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    drill, _ = loader.find_drill(DRILL)
    key = answer_key(drill, 3)
    planted = [{"id": "1a", "prompt": "p", "reference": "r", "wrong": [{"value": 1}],
                "slips": []}]
    # an entry kept under the very stamp the rows are kept by, but of another shape
    assert solutions.kept_for_key(key, "key rows", lambda: planted, list) == planted
    assert keys.key_rows(key) == keys._key_rows(key)


# ---- what show and solution print, and a re-marked attempt, kept -----------------------------


def _data_copy(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    for kind in ("drills", "rubrics", "solutions"):
        shutil.copytree(data_dir(kind), data / kind)
    return data


def _cli(args: list[str], home: Path, data: Path | None = None,
         stdin: str | None = None) -> str:
    env = dict(os.environ, KVDRILL_HOME=str(home))
    if data is not None:
        env["KVDRILL_DATA"] = str(data)
    done = subprocess.run([sys.executable, "-c", "from trainer.app.cli import main; main()",
                           *args], input=stdin, capture_output=True, text=True, timeout=120,
                          check=False, env=env)
    return done.stdout + done.stderr


def test_show_after_its_drill_file_changes_shows_the_change(tmp_path: Path) -> None:
    data, home = _data_copy(tmp_path), tmp_path / "home"
    before = _cli(["show", DRILL], home, data)
    assert _cli(["show", DRILL], home, data) == before
    drill = data / "drills" / f"{DRILL}.yaml"
    drill.write_text(drill.read_text(encoding="utf-8").replace(
        "title: ", "title: Renamed — ", 1), encoding="utf-8")
    after = _cli(["show", DRILL], home, data)
    assert after != before and "Renamed — " in after


def test_a_kept_show_is_per_variant_and_format(tmp_path: Path) -> None:
    home = tmp_path / "home"
    own, variant = _cli(["show", DRILL], home), _cli(["show", DRILL, "--variant", "5"], home)
    as_json = _cli(["show", DRILL, "--json"], home)
    assert len({own, variant, as_json}) == 3
    assert _cli(["show", DRILL, "--variant", "5"], home) == variant
    assert json.loads(_cli(["show", DRILL, "--json"], home)) == json.loads(as_json)


def test_solution_after_its_template_changes_shows_the_change(tmp_path: Path) -> None:
    data, home = _data_copy(tmp_path), tmp_path / "home"
    before = _cli(["solution", DRILL], home, data)
    template = next((data / "solutions").glob("llama2-70b*"))
    template.write_text(template.read_text(encoding="utf-8") + "\nA line added.\n",
                        encoding="utf-8")
    after = _cli(["solution", DRILL], home, data)
    assert after != before and "A line added." in after


def test_an_unknown_drill_still_says_so_with_a_cache(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _cli(["show", DRILL], home)
    assert "unknown drill 'llama2-70b-mi30x': did you mean" in _cli(["show", "llama2-70b-mi30x"],
                                                                    home)


def test_a_kept_review_follows_the_drill_it_was_marked_against(tmp_path: Path) -> None:
    data, home = _data_copy(tmp_path), tmp_path / "home"
    _cli(["practice", "llama31-8b-h100"], home, data, stdin="32\n8\n128\n")
    before = json.loads(_cli(["export", "1"], home, data))
    assert json.loads(_cli(["export", "1"], home, data)) == before
    drill = data / "drills" / "llama31-8b-h100.yaml"
    drill.write_text(drill.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    after = json.loads(_cli(["export", "1"], home, data))
    assert before["note"] is None
    assert after["note"].endswith("marked against the copy kept with the attempt")


def test_a_kept_review_follows_a_new_answer(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _cli(["practice", "llama31-8b-h100"], home, stdin="32\n")
    before = _cli(["review", "1", "--json"], home)
    _cli(["practice", "--resume", "1"], home, stdin="8\n")
    after = _cli(["review", "1", "--json"], home)
    answered = [s for s in json.loads(after)["steps"] if s["answer"] is not None]
    assert len(answered) == 2 and before != after


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG rule is Linux's")
@pytest.mark.parametrize("xdg", [None, "/tmp/kvdrill-xdg", "relative/path", ""])
def test_the_cache_folder_is_where_platformdirs_puts_it(
        xdg: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    from trainer.files.paths import cache_folder

    monkeypatch.delenv("KVDRILL_HOME", raising=False)
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert cache_folder() == platformdirs.user_cache_path("kvdrill")


# ---- a sheet graded again ----------------------------------------------------------------------


def _grade(home: Path, sheet: Path, *more: str, data: Path | None = None
           ) -> tuple[int, str]:
    env = dict(os.environ, KVDRILL_HOME=str(home))
    if data is not None:
        env["KVDRILL_DATA"] = str(data)
    done = subprocess.run([sys.executable, "-c", "from trainer.app.cli import main; main()",
                           "grade", DRILL, "--answers", str(sheet), *more],
                          capture_output=True, text=True, timeout=120, check=False, env=env)
    return done.returncode, done.stdout + done.stderr


def _sheet(tmp_path: Path, first: str) -> Path:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(f"1a: {first}\n2c-why: the weights take most of the card\n",
                     encoding="utf-8")
    return sheet


def test_a_sheet_graded_again_imports_neither_yaml_nor_pydantic(tmp_path: Path) -> None:
    home, sheet = tmp_path / "home", _sheet(tmp_path, "44 GB")
    _imports_after(["grade", DRILL, "--answers", str(sheet)], home)
    assert _imports_after(["grade", DRILL, "--answers", str(sheet)], home) == ["NONE"]


def test_a_sheet_graded_again_prints_the_same_and_exits_the_same(tmp_path: Path) -> None:
    home, sheet = tmp_path / "home", _sheet(tmp_path, "52 GB")
    first = _grade(home, sheet)
    assert first[0] == 1  # not every answer is right: the exit status says so both times
    assert _grade(home, sheet) == first


def test_an_edited_sheet_is_graded_afresh(tmp_path: Path) -> None:
    home, sheet = tmp_path / "home", _sheet(tmp_path, "52 GB")
    assert "52 GB" in _grade(home, sheet)[1]
    _sheet(tmp_path, "44 GB")
    again = _grade(home, sheet)[1]
    assert "44 GB" in again and "52 GB" not in again


def test_a_grade_follows_an_edited_rubric(tmp_path: Path) -> None:
    data, home, sheet = _data_copy(tmp_path), tmp_path / "home", _sheet(tmp_path, "44 GB")
    _grade(home, sheet, data=data)
    rubric = data / "rubrics" / "kv-capacity.yaml"
    rubric.write_text(rubric.read_text(encoding="utf-8").replace(
        "title: Levers", "title: Renamed levers", 1), encoding="utf-8")
    assert "Renamed levers" in _grade(home, sheet, data=data)[1]


def test_a_kept_grade_is_per_format(tmp_path: Path) -> None:
    home, sheet = tmp_path / "home", _sheet(tmp_path, "44 GB")
    _grade(home, sheet)
    as_json = _grade(home, sheet, "--json")[1]
    assert json.loads(as_json)["drill"] == DRILL
