"""Issue 37, the sixth attack (a hostile tester from a wheel): a plain variant's sheet graded
at another target, re-targeted variants that repeat, a cohort that mixes targets, options that
--resume cannot honour, an empty input path, a damaged answer or skill row, an unusable output,
and a hybrid drill's prose on another hybrid."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from one_line import one_line_error

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
WHOLE = ("32\n8\n128\n2 B\n128 KiB\n56 GB\n396728 tokens\n96\n193\n24\n50 GB\n100\n"
         "shorter contexts\n10\nseparate pool\n60\nfragmentation\n")  # every step answered
CONFIGS = Path(__file__).parent / "corpus" / "configs"


def _store(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / "kvdrill.sqlite3")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    monkeypatch.setenv("KVDRILL_HOME", str(folder))
    return folder


# ---- G16: a plain variant's sheet is its own model's and card's ----------------------------

def test_a_plain_variants_sheet_graded_at_a_target_is_refused(run: Run, tmp_path: Path) -> None:
    run("variants", DRILL, "--count", "1", "--seed", "9", "--out", str(tmp_path / "v"))
    sheet = next((tmp_path / "v").glob("*-answers.yaml"))
    one_line_error(run("grade", DRILL, "--answers", str(sheet), "--model", "qwen3-8b",
                       "--gpu", "h200", ok=False), 2,
                   "as drawn, on the drill's own model and card", "without --model and --gpu")


# ---- G11: re-targeted variants are distinct, counted after the target ----------------------

def test_re_targeted_variants_never_repeat(run: Run) -> None:
    out = json.loads(run("variants", DRILL, "--model", "qwen3-8b", "--gpu", "h200",
                         "--count", "27", "--json").output)
    params = [json.dumps(v["params"], sort_keys=True) for v in out["variants"]]
    assert len(set(params)) == 27


def test_the_re_targeted_space_is_counted_without_the_replaced_choices(run: Run) -> None:
    one_line_error(run("variants", DRILL, "--model", "qwen3-8b", "--gpu", "h200", "--count",
                       "28", ok=False), 2, "re-targeted at Qwen3-8B",
                   "has 27 variants with answers of their own")


# ---- G12: a cohort of several targets says each candidate's -------------------------------

def test_a_cohort_of_mixed_targets_says_each_candidates_target(run: Run, tmp_path: Path,
                                                              home: Path) -> None:
    run("practice", DRILL, input="32\n8\n")
    run("practice", DRILL, "--model", "qwen3-8b", "--gpu", "h200", input="36\n8\n")
    for attempt in ("1", "2"):
        run("export", attempt, "--out", str(tmp_path / f"cand{attempt}.json"))
    (home / "kvdrill.sqlite3").unlink()
    run("import", str(tmp_path / "cand1.json"), str(tmp_path / "cand2.json"))
    text = run("cohort", DRILL, "--format", "md").output
    rows = [line for line in text.splitlines() if line.startswith("| cand")]
    assert any("Qwen3-8B on NVIDIA H200 SXM 141GB" in row for row in rows)
    assert any("own model and card" in row for row in rows)


# ---- G13: --resume keeps the mode its attempt began in ------------------------------------

@pytest.mark.parametrize("option", ["--exam", "--strict"])
def test_resume_refuses_a_mode_it_cannot_honour(run: Run, home: Path, option: str) -> None:
    run("practice", DRILL, input="32\n")
    one_line_error(run("practice", "--resume", "1", option, input="9\n", ok=False), 2,
                   "--resume continues an attempt in the mode it began with")


# ---- G19: an empty input path says what the argument takes ---------------------------------

@pytest.mark.parametrize(("command", "says"), [
    ("review", "give the transcript's path, or an attempt ID"),
    ("import", "give the path of an exported transcript")])
def test_an_empty_input_path_names_what_to_give(run: Run, command: str, says: str) -> None:
    result = run(command, "", ok=False)
    one_line_error(result, 2, says)
    assert "standard output" not in result.stderr


# ---- G7, G8: one damaged row leaves its attempt or skill out, not the store ----------------

def test_a_deeply_nested_skill_card_is_left_out_by_name(run: Run, home: Path) -> None:
    run("practice", DRILL, input="32\n8\n128\n")
    with _store(home) as db:
        db.execute("UPDATE skills SET card = ? WHERE rowid = (SELECT MIN(rowid) FROM skills)",
                   ("[" * 100_000 + "]" * 100_000,))
    for command in (["progress"], ["next"]):
        result = run(*command)
        assert "internal error" not in result.output + result.stderr, command


def test_a_non_number_in_one_answer_leaves_that_attempt_out(run: Run, home: Path) -> None:
    for _ in range(2):
        run("practice", DRILL, input=WHOLE)
    with _store(home) as db:
        db.execute("UPDATE answers SET seconds = 'abc' WHERE attempt_id = 1 AND step_id = "
                   "'shape-kv-heads'")
    result = run("progress")
    assert "attempt 1 is damaged (its answer to shape-kv-heads" in result.stderr
    assert "move it away" not in result.stderr
    cohort = run("cohort", DRILL)
    assert "attempt 1 is damaged" in cohort.stderr and "1 attempt of your own" in cohort.output
    one_line_error(run("review", "1", ok=False), 1, "attempt 1 is damaged",
                   "the store's other attempts are unaffected")


# ---- G9: an unusable output is named --------------------------------------------------------

def test_a_device_given_as_the_out_folder_is_refused_by_name(run: Run) -> None:
    one_line_error(run("variants", DRILL, "--out", "/dev/null", ok=False), 2,
                   "--out /dev/null is a device, pipe or socket, not a folder")


# ---- G17: the hybrid drill is Jamba's own ---------------------------------------------------

def test_the_hybrid_drill_refuses_another_hybrid_rather_than_keep_jambas_prose(
        run: Run, tmp_path: Path) -> None:
    config = json.loads((CONFIGS / "Qwen3-8B" / "config.json").read_text())
    config.update(layer_types=(["linear_attention"] * 3 + ["full_attention"]) * 9,
                  linear_num_key_heads=16, linear_num_value_heads=32, linear_key_head_dim=128,
                  linear_value_head_dim=128, linear_conv_kernel_dim=4)
    path = tmp_path / "Hybrid" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(config))
    one_line_error(run("show", "hybrid-state-kv", "--model", str(path.parent), "--gpu", "h200",
                       ok=False), 2, "is Jamba-1.5-Mini's own", "kvdrill calc --model")
