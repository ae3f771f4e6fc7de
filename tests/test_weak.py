"""`kvdrill practice --weak` (issue 16): after attempts with known mistakes, a short timed session
asks steps of the missed skills, from drills that exercise them, with new numbers and each step's
givens shown; the mistake last matched is named; the attempt is stored and reviewed like any
other; `next` says when such a session would help more than a whole drill."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.marking.grading import in_step_unit

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
SHEET = Path(__file__).parent / "sheets" / f"{DRILL}-correct.yaml"
# Query heads for KV heads (and the bytes per token it carries into), the weights left in.
# 16 KV heads (no known mistake), then 512 KiB: the query heads, not carried from 16
MISTAKES = {"shape-kv-heads": "16", "bytes-per-token": "512 KiB", "kv-budget": "72 GB"}
MISSED = {"model-shape", "kv-bytes-per-token", "kv-budget"}


def piped(run: Run, changes: dict[str, str] | None = None) -> None:
    data = yaml.safe_load(SHEET.read_text(encoding="utf-8"))
    answers = {str(k): " ".join(str(v).split()) for k, v in data.items()}
    answers.update(changes or {})
    run("practice", DRILL, input="".join(f"{a}\n" for a in answers.values()))


def weak_session(run: Run, *args: str, ok: bool = True) -> Result:
    return run("practice", "--weak", *args, input="1\n" * 20, ok=ok)


def last_export(run: Run) -> dict[str, Any]:
    history = json.loads(run("history", "--json").stdout)
    export: dict[str, Any] = json.loads(run("export", str(history[0]["id"])).stdout)
    return export


def session_drill(export: dict[str, Any]) -> dict[str, Any]:
    drill: dict[str, Any] = yaml.safe_load(export["drill_text"])
    return drill


@pytest.fixture
def with_mistakes(run: Run) -> None:
    piped(run, MISTAKES)


def test_without_any_marked_answer_weak_practice_says_to_practise_a_drill_first(
        run: Run) -> None:
    result = weak_session(run, ok=False)
    assert result.exit_code == 1
    assert result.stderr == ("Error: no skill has been rated yet: practise a drill first "
                             "(kvdrill next says which), then kvdrill practice --weak\n")


def test_weak_practice_with_a_drill_is_misuse(run: Run) -> None:
    result = run("practice", DRILL, "--weak", ok=False)
    assert result.exit_code == 2
    assert "--weak builds its own session: give it without DRILL" in result.stderr


@pytest.mark.usefixtures("with_mistakes")
def test_a_weak_session_asks_only_the_skills_that_were_missed(run: Run) -> None:
    weak_session(run)
    drill = session_drill(last_export(run))
    assert drill["id"] == "weak-skills"
    assert {step["skill"] for step in drill["steps"]} == MISSED


@pytest.mark.usefixtures("with_mistakes")
def test_a_weak_session_has_six_steps_unless_told(run: Run) -> None:
    weak_session(run)
    assert len(last_export(run)["steps"]) == 6
    weak_session(run, "--steps", "4")
    assert len(last_export(run)["steps"]) == 4


@pytest.mark.usefixtures("with_mistakes")
def test_the_intro_names_the_mistake_each_skill_last_matched(run: Run) -> None:
    out = weak_session(run).stdout
    assert ("- kv-bytes-per-token (KV bytes per token: 2 × layers × KV heads × head_dim × "
            "bytes): last time: used the query (attention) heads where the KV heads belong "
            f"(query-heads, in {DRILL})") in out
    assert "kv-budget" in out and "(forgot-weights, in llama31-8b-h100)" in out


@pytest.mark.usefixtures("with_mistakes")
def test_each_question_names_its_drill_and_variant_in_one_line_without_the_givens(
        run: Run) -> None:
    weak_session(run)
    for step in session_drill(last_export(run))["steps"]:
        first = step["prompt"].split("\n")[0]
        assert re.fullmatch(r"\[[a-z-]+ · [a-z0-9-]+, (variant \d+|its own givens)\]", first)
        assert re.fullmatch(r"\S.* on \d+ × \S.*\.", step["prompt"].split("\n")[1])
        assert "Given:" not in step["prompt"]


@pytest.mark.usefixtures("with_mistakes")
def test_the_intro_lists_the_givens_of_no_step(run: Run) -> None:
    out = weak_session(run).stdout
    intro = out.split("\n[1-")[0]
    assert "Given:" not in intro and "model: " not in intro


@pytest.mark.usefixtures("with_mistakes")
def test_a_weak_session_asks_with_new_numbers(run: Run) -> None:
    """Each budget or bytes-per-token step's reference differs from the one its drill gives
    with its own givens (a model's shape is the same in every variant)."""
    weak_session(run)
    export = last_export(run)
    drill = session_drill(export)
    references = {step["id"]: step["expected"]["value"] for step in export["steps"]}
    compared = 0
    for step in drill["steps"]:
        source_id = re.match(r"\[[a-z-]+ · ([a-z0-9-]+),", step["prompt"]).group(1)
        source, _ = find_drill(source_id)
        source_step = step["id"].split("-", 1)[1]
        if step["skill"] == "model-shape":
            continue
        own = AnswerKey(source).reference(source_step)
        assert references[step["id"]] != in_step_unit(own.value, own.unit), step["id"]
        compared += 1
    assert compared >= 4


@pytest.mark.usefixtures("with_mistakes")
def test_a_weak_session_is_stored_and_reviewed_like_any_attempt(run: Run) -> None:
    weak_session(run)
    history = json.loads(run("history", "--json").stdout)
    assert history[0]["drill"] == "weak-skills" and history[0]["status"] == "complete"
    assert history[0]["scored"]
    review = run("review", str(history[0]["id"])).stdout
    assert review.startswith(f"Review of attempt {history[0]['id']}: weak-skills")


@pytest.mark.usefixtures("with_mistakes")
def test_a_weak_sessions_answers_rate_the_skills_again(run: Run) -> None:
    before = {c["skill"]: c["attempts"] for c in json.loads(run("next", "--json").stdout)[
        "skills"]}
    weak_session(run)  # every answer "1": wrong
    after = {c["skill"]: c for c in json.loads(run("next", "--json").stdout)["skills"]}
    for skill in MISSED:
        assert after[skill]["attempts"] == before[skill] + 1
        assert after[skill]["last_rating"] == "Again"


@pytest.mark.usefixtures("with_mistakes")
def test_next_prefers_a_weak_session_when_several_skills_were_missed(run: Run) -> None:
    out = run("next").stdout
    first = out.splitlines()[0]
    assert first.startswith("Practise your weak skills now: 3 skills were missed at their last "
                            "answer (")
    named = first.split("answer (")[1].split(")")[0].split(", ")
    assert sorted(named) == ["kv-budget", "kv-bytes-per-token", "model-shape"]
    assert "  kvdrill practice --weak\n" in out
    payload = json.loads(run("next", "--json").stdout)
    assert payload["weak"]["recommended"] is True


@pytest.mark.usefixtures("with_mistakes")
def test_a_mistake_put_right_since_is_named_as_the_last_mistake_not_last_time(
        run: Run) -> None:
    piped(run)  # all right this time
    out = weak_session(run).stdout
    assert ("kv-budget (the KV budget: HBM × utilization − reserve − weights): right at its "
            "last answer (Good); the last mistake: left the model weights out") in out
    assert "last time:" not in out


def test_next_does_not_offer_a_weak_session_when_nothing_was_missed(run: Run) -> None:
    piped(run)
    assert "--weak" not in run("next").stdout
    payload = json.loads(run("next", "--json").stdout)
    assert payload["weak"] == {"recommended": False, "skills": [],
                               "reason": "every skill was right at its last answer"}


@pytest.mark.parametrize(("drill_id", "step_id"), [
    ("prefill-vs-decode", "prefill-measured"), ("speculative-decoding", "draft-step"),
    ("disaggregated-prefill", "transfer-ethernet")])
def test_a_prompt_that_opens_with_and_does_not_stand_alone(drill_id: str, step_id: str) -> None:
    """Issue 38's trial: "And at the measured 550 TFLOP/s?" was asked first in a --weak
    session, with nothing before it to say what was being timed."""
    from trainer.app.weak import stands_alone

    drill, _ = find_drill(drill_id)
    step = drill.step(step_id)
    assert step.prompt.startswith("And ") and not stands_alone(step)


def test_the_first_prefill_step_still_stands_alone() -> None:
    from trainer.app.weak import stands_alone

    drill, _ = find_drill("prefill-vs-decode")
    assert stands_alone(drill.step("prefill-flops"))
