"""Skills (issue 16): every numeric step names the skill it exercises, lint says what to add when
one does not, and each marked answer rates its skill's card (Good in time, Hard over budget,
Again when wrong, skipped or hinted), kept in the store (schema 4) beside the drill's card."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml
from click.testing import Result
from old_stores import schema_2_store

from trainer.app.session import Session, StepPrompt, new_attempt
from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.drills.skills import SKILLS
from trainer.files.paths import drill_paths
from trainer.store import kept_marks as progress
from trainer.store.database import Store, default_path

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
SHEET = Path(__file__).parent / "sheets" / f"{DRILL}-correct.yaml"


def correct_answers() -> dict[str, str]:
    data = yaml.safe_load(SHEET.read_text(encoding="utf-8"))
    return {str(k): " ".join(str(v).split()) for k, v in data.items()}


def piped(run: Run, changes: dict[str, str] | None = None) -> None:
    """One complete attempt of DRILL through piped practice, the correct sheet with `changes`."""
    answers = {**correct_answers(), **(changes or {})}
    run("practice", DRILL, input="".join(f"{answers[k]}\n" for k in answers))


def skills(run: Run) -> dict[str, dict[str, Any]]:
    payload = json.loads(run("next", "--json").stdout)
    return {card["skill"]: card for card in payload["skills"]}


def shipped_copy(tmp_path: Path, drill_id: str, old: str, new: str) -> Path:
    source = next(path for path in drill_paths() if path.stem == drill_id)
    text = source.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "drills" / source.name
    path.parent.mkdir()
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


# -- tags -------------------------------------------------------------------------------------

def test_every_numeric_step_of_every_shipped_drill_names_a_known_skill() -> None:
    for path in drill_paths():
        drill, _ = find_drill(path.stem)
        for step in drill.steps:
            if step.kind == "numeric":
                assert step.skill in SKILLS, (drill.id, step.id)


def test_lint_names_a_step_without_a_skill_and_the_exact_line_to_add(
        run: Run, tmp_path: Path) -> None:
    path = shipped_copy(tmp_path, DRILL, "    answer: kv_budget_bytes\n    skill: kv-budget\n",
                        "    answer: kv_budget_bytes\n")
    result = run("lint", str(path), ok=False)
    assert result.exit_code == 1
    assert (f"{path}: drill {DRILL}: step kv-budget: no skill: add the line "
            "`skill: kv-budget` under its `answer:`") in result.stdout


def test_lint_suggests_ratio_for_a_ratio_step_without_a_skill(run: Run, tmp_path: Path) -> None:
    path = shipped_copy(tmp_path, "llama2-70b-mi300x",
                        "    ratio_of: [2a-bytes-per-token, 2b-bytes-per-token]\n"
                        "    skill: ratio\n",
                        "    ratio_of: [2a-bytes-per-token, 2b-bytes-per-token]\n")
    result = run("lint", str(path), ok=False)
    assert "step 2c-ratio: no skill: add the line `skill: ratio` under its `ratio_of:`" \
        in result.stdout


def test_lint_refuses_an_unknown_skill_and_lists_the_known_ones(run: Run, tmp_path: Path) -> None:
    path = shipped_copy(tmp_path, DRILL, "    skill: kv-budget\n", "    skill: kv-budgte\n")
    result = run("lint", str(path), ok=False)
    assert "step kv-budget: unknown skill 'kv-budgte': use one of model-shape, " \
        "kv-bytes-per-token" in result.stdout


def test_a_text_step_with_a_skill_is_refused_by_the_schema(run: Run, tmp_path: Path) -> None:
    path = shipped_copy(tmp_path, DRILL, "    kind: text\n", "    kind: text\n    skill: ratio\n")
    result = run("lint", str(path), ok=False)
    assert "`skill` tags numeric steps" in result.stdout


# -- skill cards ------------------------------------------------------------------------------

def test_a_wrong_answer_rates_its_skill_again_and_keeps_the_mistake(run: Run) -> None:
    piped(run, {"shape-kv-heads": "16", "bytes-per-token": "512 KiB"})
    card = skills(run)["kv-bytes-per-token"]
    assert card["last_rating"] == "Again" and card["wrong"] == 1
    assert card["last_mistake"] == "query-heads" and card["last_drill"] == DRILL


def test_right_answers_in_time_rate_their_skills_good(run: Run) -> None:
    piped(run)
    cards = skills(run)
    assert cards["kv-budget"]["last_rating"] == "Good" and cards["kv-budget"]["wrong"] == 0
    tagged = sum(1 for step in find_drill(DRILL)[0].steps if step.skill == "concurrency")
    assert cards["concurrency"]["steps"] == tagged > 1  # each tagged step of the drill rated


def test_a_hint_rates_a_right_answer_again(run: Run) -> None:
    answers = correct_answers()
    lines = [("?\n" if step == "kv-budget" else "") + f"{answer}\n"
             for step, answer in answers.items()]
    run("practice", DRILL, input="".join(lines))
    card = skills(run)["kv-budget"]
    assert card["last_rating"] == "Again" and card["last_mistake"] is None


def _timed_attempt(store: Store, seconds_each: float) -> int:
    """A complete attempt with the correct answers, each step taking `seconds_each` on a fake
    clock, finished as practice finishes one."""
    drill, path = find_drill(DRILL)
    key = AnswerKey(drill)
    attempt_id = new_attempt(store, key, path, None, exam=False, strict=False)
    feed: Iterator[str] = iter(correct_answers().values())
    now = [0.0]

    def ask(prompt: StepPrompt) -> str | None:
        now[0] += seconds_each
        return next(feed, None)

    Session(key, store, attempt_id, ask=ask, say=lambda _: None, clock=lambda: now[0]).run()
    progress.keep_finished(store, attempt_id)
    return attempt_id


def test_a_right_answer_over_its_budget_rates_its_skill_hard(run: Run) -> None:
    with Store() as store:
        _timed_attempt(store, 20.0)  # over the 15 s of each shape step, within kv-budget's 60
    cards = skills(run)
    assert cards["model-shape"]["last_rating"] == "Hard"
    assert cards["kv-budget"]["last_rating"] == "Good"


def test_finishing_a_practice_puts_its_answers_in_the_skill_cards(run: Run) -> None:
    piped(run)
    conn = sqlite3.connect(default_path())
    assert conn.execute("SELECT skills_scheduled FROM attempts").fetchall() == [(1,)]
    assert conn.execute("SELECT COUNT(*) FROM skills").fetchone()[0] > 0


def test_next_puts_in_attempts_finished_without_a_skill_card(run: Run) -> None:
    with Store() as store:
        drill, path = find_drill(DRILL)
        attempt_id = new_attempt(store, AnswerKey(drill), path, None, exam=False, strict=False)
        for step_id, raw in correct_answers().items():
            store.record_answer(attempt_id, step_id, "64" if step_id == "shape-head-dim" else raw,
                                None, None, "correct", None, False, 0, 5.0, 60, False)
        store.finish(attempt_id)
    assert skills(run)["model-shape"]["last_rating"] == "Again"  # 64 re-marked wrong
    conn = sqlite3.connect(default_path())
    assert conn.execute("SELECT skills_scheduled FROM attempts").fetchall() == [(1,)]


def test_each_attempt_is_put_in_the_skill_cards_once(run: Run) -> None:
    piped(run, {"kv-budget": "72 GB"})
    first = skills(run)["kv-budget"]
    second = skills(run)["kv-budget"]
    assert first == second and first["attempts"] == 1 and first["wrong"] == 1


def test_an_upgraded_stores_old_attempts_rate_the_skills_on_the_next_next(run: Run) -> None:
    """A store from before schema 4 (here schema 2): its finished attempt has no skill cards
    until the store is upgraded (as practice does); then `next` puts it in."""
    answers = {**correct_answers(), "kv-budget": "72 GB"}
    schema_2_store(default_path(), DRILL, list(answers.items()))
    assert skills(run) == {}  # read-only: an older store is not changed
    Store().close()  # the upgrade practice does
    card = skills(run)["kv-budget"]
    assert card["last_rating"] == "Again" and card["last_mistake"] == "forgot-weights"
