"""Diagnosis on corpora written blind to it (issue 26): tests/corpus/blind_world_slips.yaml
holds 269 one-input slips over all 20 drills, worked out by hand by someone who read only
`kvdrill show`, `kvdrill solution` and shared/reference (never the code, never the diagnosis
output) and typed as people type; tests/corpus/blind_random_answers.yaml holds 999 random
wrong answers (the reference × U(0.3, 3) or × U(0.8, 1.25), typed to 2–4 figures) from the
same hand. Measured when written: 72.8% of the slips no listed mistake explains named, 3.0%
named wrongly, 4.1% of the random answers diagnosed (`python benchmarks/diagnosis_recall.py`
measures the generated space; these corpora are the world's)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from click.testing import Result

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.drills.variants import answer_key
from trainer.marking.checker import Mark, mark_sheet
from trainer.reading.exact import Fraction

Run = Callable[..., Result]
CORPORA = Path(__file__).parent / "corpus"
# Of the slips no listed mistake already explains. Issue 33 says nothing where three or more
# slips give the number (it said up to four readings): 61.7% named, 3.0% wrongly, measured.
NAMED_AT_LEAST = Fraction(60, 100)
WRONGLY_NAMED_AT_MOST = Fraction(3, 100)
RANDOM_DIAGNOSED_AT_MOST = Fraction(5, 100)
SAME_VALUE = Fraction(1, 200)  # an implied value as the corpus writes it (70.55 for 70.5537)


@cache
def entries(name: str) -> tuple[dict[str, Any], ...]:
    return tuple(yaml.safe_load((CORPORA / name).read_text(encoding="utf-8"))["entries"])


@cache
def key_of(drill_id: str) -> AnswerKey:
    return answer_key(find_drill(drill_id)[0], None)


def marked(entry: dict[str, Any]) -> Mark:
    return mark_sheet(key_of(entry["drill"]), {entry["step"]: entry["answer"]})[entry["step"]]


def outcome(entry: dict[str, Any]) -> str:
    """named (a reading holds the input at its value), wrong (a diagnosis without it),
    listed (a listed mistake explains it and nothing more is said) or none."""
    mark = marked(entry)
    assert mark.verdict == "wrong", entry
    if mark.diagnosis is None:
        return "listed" if mark.misconceptions else "none"
    value = Fraction(str(entry["value"]))
    readings = (mark.diagnosis.slip, *mark.diagnosis.others)
    return "named" if any(r.input == entry["input"] and abs(r.implied - value) <= value *
                          SAME_VALUE for r in readings) else "wrong"


def test_the_blind_corpora_cover_every_drill() -> None:
    drills = {e["drill"] for e in entries("blind_world_slips.yaml")}
    assert len(drills) == 20 and len(entries("blind_world_slips.yaml")) >= 250
    assert {e["drill"] for e in entries("blind_random_answers.yaml")} == drills


@cache
def slip_outcomes() -> tuple[str, ...]:
    return tuple(outcome(entry) for entry in entries("blind_world_slips.yaml"))


def test_blind_slips_are_named_with_the_input_and_its_value() -> None:
    results = slip_outcomes()
    asked = [r for r in results if r != "listed"]
    assert asked.count("named") >= NAMED_AT_LEAST * len(asked), results


def test_blind_slips_are_seldom_named_as_something_else() -> None:
    results = slip_outcomes()
    assert results.count("wrong") <= WRONGLY_NAMED_AT_MOST * len(results)


def test_blind_random_answers_are_diagnosed_at_most_one_time_in_twenty() -> None:
    marks = [marked(entry) for entry in entries("blind_random_answers.yaml")]
    wrong = [m for m in marks if m.verdict == "wrong"]
    diagnosed = [m.feedback for m in wrong if m.diagnosis is not None]
    assert len(wrong) == len(marks)
    assert len(diagnosed) <= RANDOM_DIAGNOSED_AT_MOST * len(wrong), diagnosed


def test_grade_json_says_what_the_checker_says(run: Run, tmp_path: Path) -> None:
    # every twentieth slip through the command a reviewer runs
    for entry in entries("blind_world_slips.yaml")[::20]:
        sheet = tmp_path / "sheet.yaml"
        sheet.write_text(yaml.safe_dump({entry["step"]: entry["answer"]}, allow_unicode=True),
                         encoding="utf-8")
        out = json.loads(run("grade", entry["drill"], "--answers", str(sheet), "--json",
                             ok=False).output)
        step = next(s for s in out["steps"] if s["id"] == entry["step"])
        mark = marked(entry)
        assert step["verdict"] == mark.verdict
        found = None if mark.diagnosis is None else (mark.diagnosis.slip.input,
                                                     mark.diagnosis.slip.implied)
        said = None if step["diagnosis"] is None else (
            step["diagnosis"]["input"], Fraction(str(step["diagnosis"]["implied"])))
        assert said == found or (said is not None and found is not None and said[0] == found[0]
                                 and abs(said[1] - found[1]) <= found[1] / 10**6)
