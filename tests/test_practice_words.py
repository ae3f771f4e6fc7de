"""What practice and the commands beside it say (issue 25): history counts the skipped steps, a
key prints whole bytes and the cache's own dtype, a drill's text agrees with its target and names
only the variant's model, and a --weak question stands alone."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import yaml
from click.testing import Result

from trainer.app import weak
from trainer.drills import catalog
from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.marking.lint import stated_minutes
from trainer.store.schedule import SkillCard

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
SHEET = Path(__file__).parent / "sheets" / f"{DRILL}-correct.yaml"


def _sheet_answers() -> list[str]:
    data = yaml.safe_load(SHEET.read_text(encoding="utf-8"))
    return [" ".join(str(v).split()) for v in data.values()]


def test_history_says_how_many_steps_an_ended_attempt_answered(run: Run) -> None:
    answers = _sheet_answers()
    lines = answers[:6] + [":skip"] * (len(answers) - 6)
    run("practice", DRILL, input="".join(f"{line}\n" for line in lines))
    assert "ended, 6 of 17 answered" in run("history").stdout
    row = json.loads(run("history", "--json").stdout)[0]
    assert (row["status_text"], row["steps"], row["skipped"]) == (
        "ended, 6 of 17 answered", 17, 11)


def test_history_calls_an_attempt_complete_only_when_every_step_was_answered(
        run: Run) -> None:
    run("practice", DRILL, input="".join(f"{a}\n" for a in _sheet_answers()))
    assert "complete, 17 of 17 answered" in run("history").stdout


def test_the_key_prints_whole_bytes_or_a_rounded_figure(run: Run) -> None:
    key = run("variants", "llama2-70b-mi300x", "--count", "2").stdout
    assert not re.search(r"\d,\d{3}\.\d+ B\b", key)
    assert "2.75 MB: mixed MB" in key  # MB and MiB: each prefix named as it was mixed


def test_bits_for_bytes_names_the_caches_own_dtype(run: Run) -> None:
    key = run("variants", "llama2-70b-mi300x", "--count", "1").stdout
    assert "used the dtype's bits as bytes (16 for fp16)" in key
    assert "16 for bf16" not in key


def test_no_drill_states_a_time_budget_that_disagrees_with_its_target() -> None:
    for drill_id in catalog.usable_drill_ids():
        drill, _ = find_drill(drill_id)
        assert stated_minutes(drill.situation) in (None, drill.target_minutes), drill_id


def test_lint_refuses_a_time_budget_that_disagrees_with_the_target(run: Run,
                                                                   tmp_path: Path) -> None:
    _, path = find_drill(DRILL)
    copy = tmp_path / f"{DRILL}.yaml"
    shutil.copy(path, copy)
    text = copy.read_text(encoding="utf-8").replace(
        "situation: |\n", "situation: |\n  Time budget: 1 minute for the shape, 2 for the "
        "budget.\n\n", 1)
    copy.write_text(text, encoding="utf-8")
    result = run("lint", str(copy), ok=False)
    assert result.exit_code != 0
    assert "the situation's time budget sums to 3 minutes, but target_minutes is 14" in \
        result.output + result.stderr


def test_the_70b_drills_text_follows_the_variants_model() -> None:
    drill, _ = find_drill("llama2-70b-mi300x")
    key = AnswerKey(drill, {**drill.givens, "model": "qwen2.5-72b"})
    from trainer.views.sheets import situation_of

    text = situation_of(key)
    assert "Qwen2.5-72B" in text and "Llama" not in text


def _card(skill: str, *, reviews: int, wrong: int, last: str | None) -> SkillCard:
    return SkillCard(skill, reviews, reviews, wrong, last, "query-heads" if wrong else None,
                     DRILL if wrong else None, None)


def test_a_weak_intro_lists_as_missed_only_skills_with_a_recorded_miss() -> None:
    cards = [_card("kv-budget", reviews=2, wrong=1, last="Again"),
             _card("concurrency", reviews=1, wrong=0, last="Good")]
    lines = weak._skill_lines(cards, ["kv-budget", "concurrency", "model-shape"])
    missed = lines[lines.index("Missed at the last answer:") + 1:
                   lines.index("Right at the last answer:")]
    assert [line.split(" ")[1] for line in missed] == ["kv-budget"]
    assert lines[-2:] == ["Not practised yet:", f"- model-shape ({weak.SKILLS['model-shape']})"]


def test_a_skill_wrong_before_but_right_last_is_not_listed_as_missed() -> None:
    cards = [_card("kv-budget", reviews=3, wrong=1, last="Good")]
    lines = weak._skill_lines(cards, ["kv-budget"])
    assert lines[0] == "Right at the last answer:"
    assert "right at its last answer (Good)" in lines[1]


def test_a_weak_question_names_the_model_and_card_it_is_about() -> None:
    drill, _ = find_drill("llama31-8b-h100")
    chosen = weak.Chosen("model-shape", drill, drill.step("shape-head-dim"), AnswerKey(drill),
                         None)
    data = yaml.safe_load(weak.session_text([], [chosen], 1))
    assert data["steps"][0]["prompt"].split("\n")[1].startswith("Llama-3.1-8B on 1 × NVIDIA H100")


def test_a_weak_step_gives_the_earlier_figures_it_builds_on_inline() -> None:
    drill, _ = find_drill("disaggregated-prefill")
    key = AnswerKey(drill)
    chosen = weak.Chosen("kv-transfer", drill, drill.step("transfer-ib"), key, None)
    cards = [_card("kv-transfer", reviews=1, wrong=1, last="Again")]
    data = yaml.safe_load(weak.session_text(cards, [chosen], 1))
    prompt = data["steps"][0]["prompt"]
    assert prompt.split("\n")[2] == (
        f"From earlier in that drill: kv-per-token = {key.reference('kv-per-token').display}; "
        f"kv-per-request = {key.reference('kv-per-request').display}.")
    assert prompt.split("\n")[3].startswith("How many ms does that KV take")


def test_a_weak_session_prefers_steps_that_stand_alone() -> None:
    drill, _ = find_drill("disaggregated-prefill")
    assert weak.stands_alone(drill.step("kv-per-token"))
    assert not weak.stands_alone(drill.step("transfer-ib"))
