"""The eighth attack (a wheel of the committed code): a transcript's lone surrogate, a value JSON
allows but no figure is, or a key given twice is refused at its field, and an import goes on
to the next file; an export of this store imported back with its start moved is a duplicate;
a FIFO where a kept entry belongs is a miss, not a hang; a YAML merge key in a sheet is
refused; a message says the limit a field is over and names a nested key as a key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result
from one_line import one_line_error

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"


def exported(run: Run) -> dict[str, Any]:
    run("practice", DRILL, input="32\n8\n128\n")
    payload: dict[str, Any] = json.loads(run("export", "1").output)
    return payload


def written(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_lone_surrogate_in_an_answer_is_refused_at_its_field(run: Run,
                                                                tmp_path: Path) -> None:
    transcript = exported(run)
    transcript["steps"][0]["answer"] = "\ud800"
    path = written(tmp_path, "t.json", json.dumps(transcript))
    one_line_error(run("review", str(path), ok=False), 2,
                   "steps[0: shape-layers].answer: holds a lone surrogate (\\ud800), not text")


def test_an_import_goes_on_past_a_file_with_a_lone_surrogate(run: Run, tmp_path: Path) -> None:
    transcript = exported(run)
    other = json.loads(json.dumps(transcript))  # another candidate's answers
    other["steps"][0]["answer"] = "31"
    good = written(tmp_path, "good.json", json.dumps(other))
    transcript["drill_hash"] = "\udc80"
    bad = written(tmp_path, "bad.json", json.dumps(transcript))
    result = run("import", str(bad), str(good), ok=False)
    assert "internal error" not in result.output + result.stderr
    assert "drill_hash: holds a lone surrogate" in result.stderr
    assert "Imported" in result.output and "good.json" in result.output


def test_nan_seconds_are_refused_at_the_step_that_holds_them(run: Run, tmp_path: Path) -> None:
    text = json.dumps(exported(run))
    start = text.index('"seconds": ')
    text = text[:start] + '"seconds": NaN' + text[text.index(",", start):]
    one_line_error(run("review", str(written(tmp_path, "t.json", text)), ok=False), 2,
                   "steps[0: shape-layers].seconds: NaN is not a number JSON allows")


def test_a_key_given_twice_is_named_where_it_stands(run: Run, tmp_path: Path) -> None:
    text = json.dumps(exported(run)).replace('"hints": 0', '"hints": 0, "hints": 3', 1)
    one_line_error(run("review", str(written(tmp_path, "t.json", text)), ok=False), 2,
                   "steps[0: shape-layers].hints: given twice in one object")


def test_an_export_of_this_store_with_its_start_moved_is_a_duplicate(run: Run,
                                                                     tmp_path: Path) -> None:
    transcript = exported(run)
    transcript["started_at"] = "2020-01-01T00:00:00+00:00"
    path = written(tmp_path, "moved.json", json.dumps(transcript))
    one_line_error(run("import", str(path), ok=False), 1, "already in the store as attempt 1")


def test_an_over_long_answer_is_told_the_limit(run: Run, tmp_path: Path) -> None:
    transcript = exported(run)
    transcript["steps"][0]["answer"] = "x" * 9000
    one_line_error(run("review", str(written(tmp_path, "t.json", json.dumps(transcript))),
                       ok=False), 2, "9,000 characters, more than the 8,000 it may hold")


def test_a_fifo_where_a_kept_entry_belongs_is_a_miss_not_a_hang(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = dict(os.environ, KVDRILL_HOME=str(home))
    show = [sys.executable, "-c", "from trainer.app.cli import main; main()", "show", DRILL]
    first = subprocess.run(show, capture_output=True, text=True, env=env, timeout=120,
                           check=True, stdin=subprocess.DEVNULL)
    kept = list((home / "parsed").glob("*.json"))
    assert kept
    for entry in kept:
        entry.unlink()
        os.mkfifo(entry)
    # the timeout only guards the suite: before the fix the command never returned
    again = subprocess.run(show, capture_output=True, text=True, env=env, timeout=120,
                           check=False, stdin=subprocess.DEVNULL)
    assert again.returncode == 0 and again.stdout == first.stdout


def test_a_yaml_merge_key_in_a_sheet_is_refused(run: Run, tmp_path: Path) -> None:
    sheet = written(tmp_path, "s.yaml",
                    f"drill: {DRILL}\n<<: {{shape-layers: 0x20, shape-kv-heads: 010}}\n")
    one_line_error(run("grade", DRILL, "--answers", str(sheet), ok=False), 2,
                   "s.yaml:2: a YAML merge key (<<) is not allowed in an answer sheet")


def test_a_nested_key_given_twice_is_a_key_on_one_line(run: Run, tmp_path: Path) -> None:
    sheet = written(tmp_path, "s.yaml", f"drill: {DRILL}\npolicy: {{a: 1, a: 2}}\n")
    one_line_error(run("grade", DRILL, "--answers", str(sheet), ok=False), 2,
                   "key 'a' is given twice in the answer sheet (line 2)")


def test_a_transcript_of_a_drill_not_here_says_where_the_drills_are(run: Run,
                                                                     tmp_path: Path) -> None:
    transcript = exported(run)
    transcript.update(drill="nosuch-drill", drill_text=None, drill_hash=None)
    path = written(tmp_path, "t.json", json.dumps(transcript))
    assert "`kvdrill list` shows the drills" in run("review", str(path), ok=False).output


def test_a_kept_preset_file_of_another_shape_is_read_afresh(run: Run) -> None:
    import hashlib

    from trainer.capacity import presets
    from trainer.files.paths import cache_folder

    presets.gpus.cache_clear()  # read in this test's home, and so kept there
    run("calc", "--model", "llama-3.1-8b", "--gpu", "h100")
    planted = 0
    for entry in (cache_folder() / "parsed").glob("*.json"):
        kept = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(kept.get("data"), dict) and "h100" in kept["data"]:
            kept["data"] = {name: "x" for name in kept["data"]}  # its digest made to match
            kept["digest"] = hashlib.sha256(json.dumps(
                kept["data"], sort_keys=True, allow_nan=False).encode()).hexdigest()
            entry.write_text(json.dumps(kept), encoding="utf-8")
            planted += 1
    assert planted == 1
    presets.gpus.cache_clear()
    try:
        assert "NVIDIA H100" in run("calc", "--model", "llama-3.1-8b", "--gpu", "h100").output
    finally:
        presets.gpus.cache_clear()


def _named_after(text: str, lead: str) -> list[str]:
    listed = " ".join(text.split()).split(lead, 1)[1].rstrip(")").split(")")[0]
    return [name.strip() for name in listed.replace(" or ", ", ").split(", ")]


def test_a_refusals_drafted_targets_all_run_on_the_card(run: Run) -> None:
    said = run("solution", "speculative-decoding", "--model", "phi-4", "--gpu",
               "gaudi3", ok=False).stderr
    named = _named_after(said, "choose a target such as ")
    assert named and "llama-3.3-70b" not in named  # 141 GB of weights on one Gaudi 3
    for model in named:
        run("solution", "speculative-decoding", "--model", model, "--gpu", "gaudi3")


def test_a_refusals_cards_all_hold_the_drill(run: Run) -> None:
    said = run("solution", "llama2-70b-mi300x", "--gpu", "gaudi3", ok=False).stderr
    cards = _named_after(said, "choose a card it has one for (")
    assert cards == ["b200", "mi300x"]
    for card in cards:
        run("solution", "llama2-70b-mi300x", "--gpu", card)


def test_a_stored_models_field_is_said_as_the_file_writes_it(run: Run, tmp_path: Path) -> None:
    transcript = exported(run)
    transcript["target"] = {"model": {"config": {"layers": True, "head_dim": 128}},
                            "gpu": "h100"}
    path = written(tmp_path, "t.json", json.dumps(transcript))
    one_line_error(run("review", str(path), ok=False), 2,
                   "target: model.config.layers: true is not a whole number")


def test_a_stored_gpu_is_named_once(run: Run, tmp_path: Path) -> None:
    transcript = exported(run)
    transcript["target"] = {"gpu": [1]}
    path = written(tmp_path, "t.json", json.dumps(transcript))
    one_line_error(run("review", str(path), ok=False), 2, "target: gpu: not a GPU preset id")
