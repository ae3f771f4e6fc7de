"""An interviewer's cohort (issue 16): `kvdrill import` takes exported transcripts into the store
(re-marked, tampering flagged, duplicates refused by content, nothing else changed), and
`kvdrill cohort DRILL` compares the attempts of one drill side by side."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from trainer.drills.loader import find_drill
from trainer.store.database import default_path

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
SHEET = Path(__file__).parent / "sheets" / f"{DRILL}-correct.yaml"
# What each candidate gets wrong: alice the KV heads (and the bytes per token it carries into),
# bob the weights in the budget, carol nothing.
CANDIDATES = {
    "alice": {"shape-kv-heads": "32", "bytes-per-token": "512 KiB"},
    "bob": {"kv-budget": "72 GB"},
    "carol": {},
}


def export_attempt(run: Run, changes: dict[str, str], out: Path) -> None:
    """A complete attempt through piped practice, exported to `out`."""
    data = yaml.safe_load(SHEET.read_text(encoding="utf-8"))
    answers = {str(k): " ".join(str(v).split()) for k, v in data.items()}
    answers.update(changes)
    run("practice", DRILL, input="".join(f"{a}\n" for a in answers.values()))
    newest = json.loads(run("history", "--json", "--limit", "1").stdout)[0]["id"]
    run("export", str(newest), "--out", str(out))


def tamper(path: Path, step: str, **fields: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    for entry in data["steps"]:
        if entry["id"] == step:
            entry.update(fields)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture(scope="module")
def transcripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """alice, bob and carol exported from a candidate's store; bob's seconds on one step cut
    to nothing after the fact (its overtime then disagrees)."""
    from click.testing import CliRunner

    from trainer.app.cli import cli

    folder = tmp_path_factory.mktemp("transcripts")

    def run(*args: str, input: str | None = None) -> Result:
        result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KVDRILL_HOME", str(folder / "candidates-home"))
        for name, changes in CANDIDATES.items():
            export_attempt(run, changes, folder / f"{name}.json")
    tamper(folder / "bob.json", "shape-layers", seconds=999.0)
    return {name: folder / f"{name}.json" for name in CANDIDATES}


def imported(run: Run, transcripts: dict[str, Path]) -> Result:
    return run("import", *(str(transcripts[name]) for name in CANDIDATES))


def cohort_json(run: Run, *args: str) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(run("cohort", DRILL, "--format", "json", *args).stdout)
    return payload


def attempts_in_store() -> int:
    return int(sqlite3.connect(default_path()).execute(
        "SELECT COUNT(*) FROM attempts").fetchone()[0])


# -- import -----------------------------------------------------------------------------------

def test_import_says_what_each_file_became_and_flags_the_tampered_one(
        run: Run, transcripts: dict[str, Path]) -> None:
    out = imported(run, transcripts).stdout.splitlines()
    assert out == [f"Imported {transcripts['alice']} as attempt 1, candidate alice",
                   f"Imported {transcripts['bob']} as attempt 2, candidate bob; ⚑ 1 flagged "
                   "(kvdrill review 2)",
                   f"Imported {transcripts['carol']} as attempt 3, candidate carol"]


def test_an_imported_attempt_keeps_its_answers_times_and_start(
        run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    original = json.loads(transcripts["alice"].read_text(encoding="utf-8"))
    stored = json.loads(run("export", "1").stdout)
    assert stored["started_at"] == original["started_at"]
    assert stored["finished_at"] == original["finished_at"]
    assert [(s["id"], s["answer"], s["seconds"], s["hints"]) for s in stored["steps"]] == \
        [(s["id"], s["answer"], s["seconds"], s["hints"]) for s in original["steps"]]


def test_a_file_already_imported_is_refused_and_nothing_is_added(
        run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    result = run("import", str(transcripts["carol"]), ok=False)
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {transcripts['carol']}: already in the store as attempt "
                             "3 (same drill, variant and answers); nothing imported\n")
    assert attempts_in_store() == 3


def test_a_copy_under_another_name_is_recognised_by_its_content(
        run: Run, transcripts: dict[str, Path], tmp_path: Path) -> None:
    copy = tmp_path / "alice-again.json"
    copy.write_text(transcripts["alice"].read_text(encoding="utf-8"), encoding="utf-8")
    imported(run, transcripts)
    result = run("import", str(copy), ok=False)
    assert "already in the store as attempt 1" in result.stderr and attempts_in_store() == 3


def test_an_export_of_an_attempt_practised_here_is_refused_as_a_duplicate(
        run: Run, tmp_path: Path) -> None:
    export_attempt(run, {}, tmp_path / "mine.json")
    result = run("import", str(tmp_path / "mine.json"), ok=False)
    assert "already in the store as attempt 1" in result.stderr and attempts_in_store() == 1


def test_a_verdict_changed_in_the_file_is_re_marked_and_flagged(
        run: Run, transcripts: dict[str, Path], tmp_path: Path) -> None:
    forged = tmp_path / "dave.json"
    forged.write_text(transcripts["alice"].read_text(encoding="utf-8"), encoding="utf-8")
    tamper(forged, "shape-kv-heads", verdict="correct")
    run("import", str(forged))
    stored = json.loads(run("export", "1").stdout)
    step = next(s for s in stored["steps"] if s["id"] == "shape-kv-heads")
    assert step["verdict"] == "wrong"
    (candidate,) = cohort_json(run)["candidates"]
    assert {"step": "shape-kv-heads", "field": "verdict",
            "says": "recorded correct, re-marked wrong from the answer as typed"} \
        in candidate["flags"]


def test_a_malformed_file_is_refused_while_the_others_are_imported(
        run: Run, transcripts: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"id": 1}', encoding="utf-8")
    result = run("import", str(broken), str(transcripts["carol"]), ok=False)
    assert result.exit_code == 1  # a file that cannot be taken in fails, as the help says
    assert result.stderr.startswith(f"Error: {broken}: malformed transcript: ")
    assert "Imported" in result.stdout and attempts_in_store() == 1


def test_imported_attempts_do_not_feed_this_stores_schedule(
        run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    payload = json.loads(run("next", "--json").stdout)
    assert payload["skills"] == []
    assert all(card["attempts"] == 0 for card in payload["schedule"])


# -- cohort -----------------------------------------------------------------------------------

def test_the_cohort_lists_each_candidate_with_four_dimensions_and_a_level(
        run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    candidates = cohort_json(run)["candidates"]
    assert [c["name"] for c in candidates] == ["alice", "bob", "carol"]
    for candidate in candidates:
        assert set(candidate["dimensions"]) == {"arithmetic", "assumptions", "levers",
                                                "operational-close"}
    # alice's KV heads leave her bytes per token wrong: the seed's Solid computes 128 KiB
    assert [bool(c["level"]) for c in candidates] == [False, True, True]
    scores = [c["dimensions"]["arithmetic"]["score"] for c in candidates]
    assert scores[2] > scores[0] and scores[2] > scores[1]


def test_the_cohort_flags_only_the_tampered_candidate(
        run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    flags = {c["name"]: c["flags"] for c in cohort_json(run)["candidates"]}
    assert flags["alice"] == [] and flags["carol"] == []
    assert [(f["step"], f["field"]) for f in flags["bob"]] == [("shape-layers", "overtime")]


def test_the_cohort_says_per_step_who_was_right_and_which_mistake_each_matched(
        run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    steps = {s["id"]: s for s in cohort_json(run)["steps"]}
    assert steps["shape-kv-heads"]["right"] == ["bob", "carol"]
    assert steps["shape-kv-heads"]["mistakes"] == {"alice": "query-heads"}
    assert steps["kv-budget"]["mistakes"] == {"bob": "forgot-weights"}
    assert steps["shape-layers"]["right"] == ["alice", "bob", "carol"]


def test_the_cohort_names_who_ran_over_a_steps_budget(
        run: Run, transcripts: dict[str, Path], tmp_path: Path) -> None:
    slow = tmp_path / "erin.json"
    slow.write_text(transcripts["carol"].read_text(encoding="utf-8"), encoding="utf-8")
    tamper(slow, "kv-budget", seconds=95.0, overtime=True)
    run("import", str(slow), str(transcripts["alice"]))
    steps = {s["id"]: s for s in cohort_json(run)["steps"]}
    assert steps["kv-budget"]["over"] == ["erin"]
    text = run("cohort", DRILL).stdout
    assert "✓ (over)" in text


def test_the_steps_that_separate_candidates_most_come_first(
        run: Run, transcripts: dict[str, Path]) -> None:
    """alice's bytes per token is carried forward (half credit), so it separates less than
    the two steps where one candidate of three is wrong outright."""
    imported(run, transcripts)
    payload = cohort_json(run)
    assert payload["separating"] == ["shape-kv-heads", "kv-budget", "bytes-per-token"]
    text = run("cohort", DRILL).stdout
    assert ("Steps that separate candidates most:\n"
            "  shape-kv-heads: right: bob, carol; mistakes: alice: query-heads\n") in text


def test_the_cohort_text_shows_the_dimensions_time_and_flags_side_by_side(
        run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    lines = run("cohort", DRILL).stdout.splitlines()
    assert lines[0] == f"Cohort of {DRILL}: 3 imported attempts (the drill's own givens)"
    assert lines[2].split() == ["candidate", "attempt", "Arithmetic", "Assumptions", "Levers",
                                "Operational", "close", "level", "right", "time", "/",
                                "budget", "over", "flags"]
    bob = next(line for line in lines if line.startswith("bob "))
    budget = sum(step.seconds for step in find_drill(DRILL)[0].steps)
    assert bob.endswith("⚑ 1") and f"/ {budget} s" in bob
    assert "  bob: shape-layers: overtime: overtime false with 999s of 15s" in lines


def test_cohort_variant_keeps_only_that_variants_attempts(
        run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    run("practice", DRILL, "--variant", "7", input="32\n")  # one of variant 7, incomplete
    only = cohort_json(run, "--variant", "7")  # none imported of it: your own is the cohort
    assert [c["attempt"] for c in only["candidates"]] == [4] and only["holds"] == "own"
    assert run("cohort", DRILL, "--variant", "7").stdout.startswith(
        f"Cohort of {DRILL}: 1 attempt of your own, none imported (variant 7)\n")


def test_a_cohort_holds_the_candidates_and_leaves_your_own_attempts_out_saying_so(
        run: Run, transcripts: dict[str, Path]) -> None:
    """Issue 38: without --variant, your own attempt of the drill's own givens was mixed in
    with the candidates' imported ones; --own puts it in, and the variants are then shown."""
    run("practice", DRILL, input="32\n")  # yours, before the import
    imported(run, transcripts)
    data = cohort_json(run)
    assert [c["name"] for c in data["candidates"]] == ["alice", "bob", "carol"]
    assert (data["holds"], data["own_left_out"]) == ("imported", 1)
    lines = run("cohort", DRILL).stdout.splitlines()
    assert lines[:2] == [f"Cohort of {DRILL}: 3 imported attempts (the drill's own givens)",
                         "Your own attempt of this drill (1) is left out: --own puts it in "
                         "beside the candidates."]
    both = cohort_json(run, "--own")
    assert [c["attempt"] for c in both["candidates"]] == [1, 2, 3, 4]
    assert (both["holds"], both["own_left_out"]) == ("imported and own", 0)
    assert run("cohort", DRILL, "--own").stdout.startswith(
        f"Cohort of {DRILL}: 4 attempts: 3 imported, 1 of your own (the drill's own givens)\n")


def test_a_cohort_of_mixed_variants_shows_each_candidates_variant(
        run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    run("practice", DRILL, "--variant", "7", input="32\n")
    lines = run("cohort", DRILL, "--own").stdout.splitlines()
    assert lines[0] == (f"Cohort of {DRILL}: 4 attempts: 3 imported, 1 of your own "
                        "(variants: drill's own, 7)")
    assert lines[2].split()[:3] == ["candidate", "attempt", "variant"]
    mine = next(line for line in lines if line.startswith("attempt 4 "))
    assert mine.split()[3] == "7"  # "attempt 4", its id, its variant
    assert "| attempt 4 | 4 | 7 |" in run("cohort", DRILL, "--own", "--format", "md").stdout


def test_cohort_of_an_unknown_drill_is_misuse(run: Run) -> None:
    result = run("cohort", "llama31-8b-h10", ok=False)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: DRILL: unknown drill 'llama31-8b-h10': did you "
                                    "mean llama31-8b-h100")


def test_cohort_of_a_drill_without_attempts_says_how_to_import(run: Run) -> None:
    result = run("cohort", DRILL, ok=False)
    assert result.exit_code == 1
    assert result.stderr == (f"Error: no attempts of {DRILL} in the store: kvdrill import FILE "
                             "takes candidates' transcripts in\n")


def test_the_markdown_cohort_escapes_a_candidates_name(
        run: Run, transcripts: dict[str, Path], tmp_path: Path) -> None:
    odd = tmp_path / "a|b_c.json"
    odd.write_text(transcripts["carol"].read_text(encoding="utf-8"), encoding="utf-8")
    run("import", str(odd))
    markdown = run("cohort", DRILL, "--format", "md").stdout
    assert "| a\\|b\\_c | 1 |" in markdown


def test_the_html_cohort_escapes_a_candidates_name(
        run: Run, transcripts: dict[str, Path], tmp_path: Path) -> None:
    odd = tmp_path / "<script>alert(1)<script>.json"
    odd.write_text(transcripts["carol"].read_text(encoding="utf-8"), encoding="utf-8")
    run("import", str(odd))
    page = run("cohort", DRILL, "--format", "html").stdout
    assert "&lt;script&gt;alert(1)&lt;script&gt;" in page and "<script>alert" not in page


# -- imported attempts are other people's -----------------------------------------------------

def test_a_reviewed_import_still_shows_what_the_file_contradicted(
        run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    data = json.loads(run("review", "2", "--format", "json").stdout)
    assert [(t["step"], t["field"]) for t in data["tampered"]] == [("shape-layers", "overtime")]


def test_imports_are_labelled_in_history_and_left_out_of_its_trends(
        run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    rows = json.loads(run("history", "--json").stdout)
    assert [r["candidate"] for r in rows] == ["carol", "bob", "alice"]
    text = run("history").stdout
    assert "candidate bob:" in text and "Trends" not in text


def test_an_imported_attempt_cannot_be_resumed(run: Run, transcripts: dict[str, Path]) -> None:
    imported(run, transcripts)
    result = run("practice", "--resume", "1", ok=False, input="32\n")
    assert result.exit_code == 1
    assert "attempt 1 is an imported transcript (candidate alice): it cannot be resumed" in \
        result.output


def test_a_broken_file_among_good_ones_fails_the_import_with_exit_1(
        run: Run, transcripts: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"steps": NaN}', encoding="utf-8")
    result = run("import", str(broken), str(transcripts["carol"]), "--json", ok=False)
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert [(r["file"], r["attempt"]) for r in report] == [(str(broken), None),
                                                             (str(transcripts["carol"]), 1)]
    assert report[0]["error"].startswith(f"{broken}: ")


def test_steps_without_weak_is_a_usage_error(run: Run) -> None:
    result = run("practice", DRILL, "--steps", "3", ok=False, input="")
    assert result.exit_code == 2 and "--steps goes with --weak" in result.output


def test_a_cohort_of_re_targeted_attempts_says_on_what(run: Run) -> None:
    run("practice", "llama31-8b-h100", "--model", "qwen3-8b", "--gpu", "h200", input="32\n")
    run("practice", "llama31-8b-h100", "--gpu", "h100", input="32\n")
    first = run("cohort", "llama31-8b-h100").output.splitlines()[0]
    assert "on a mix of 2 targets: Qwen3-8B on NVIDIA H200 SXM 141GB" in first
    assert "own givens" not in first
