"""What the marking says about whole attempts, against what their author meant (issue 33).

tests/corpus/blind_attempts.yaml holds answer sheets written as tired people fill them in,
each numeric answer labelled with its author's intent: right, a listed mistake, carried
forward from the attempt's own earlier numbers, a slip of one input, a unit mixed, a random
guess or a bound. Every sheet is graded as `kvdrill grade` grades it, and each thing the
marking says is checked against the label. Run as a script for the per-step report:

    python tests/attempts_report.py [--show KIND]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.variants import answer_key
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.scoring import score_attempt

CORPUS = Path(__file__).parent / "corpus" / "blind_attempts.yaml"
# The corpus's names for a unit mixed, as the marking names them.
# The corpus's names for an input, as the diagnosis names them.
INPUT_NAMES = {"hbm": "hbm_gb", "weights": "weights_gb", "bandwidth": "bandwidth_tbs",
               "reserve": "reserve_gb"}
UNIT_MIX_IDS = {"gb-gib": "gb-gib", "kb-kib": "kb-kib", "mb-mib": "mb-mib", "tb-tib": "tb-tib",
                "kib-as-1000": "kb-kib"}


@cache
def attempts() -> tuple[dict[str, Any], ...]:
    return tuple(yaml.safe_load(CORPUS.read_text(encoding="utf-8")))


@dataclass
class Report:
    """Counts over every numeric answer of every attempt, and the cases behind each."""

    answers: Counter[str] = field(default_factory=Counter)  # by intent kind
    scolded: list[str] = field(default_factory=list)  # right, and told otherwise
    too_many: list[str] = field(default_factory=list)  # three or more explanations
    false_flags: list[str] = field(default_factory=list)  # a red flag the author never earned
    carried: Counter[str] = field(default_factory=Counter)  # recognised / not
    wrongly_named: list[str] = field(default_factory=list)  # a reading that is not the slip
    bounds_credited: list[str] = field(default_factory=list)
    explained: Counter[str] = field(default_factory=Counter)  # by intent: something said
    per_wrong: Counter[int] = field(default_factory=Counter)  # explanations per wrong answer

    def line(self) -> str:
        wrong = sum(n for kind, n in self.answers.items() if kind != "right")
        recognised = self.carried["recognised"]
        return (f"{sum(self.answers.values())} answers in {len(attempts())} attempts "
                f"({dict(self.answers)}): right answers scolded {len(self.scolded)}; "
                f"answers with 3+ explanations {len(self.too_many)}; false red flags "
                f"{len(self.false_flags)}; carried forward recognised {recognised} of "
                f"{sum(self.carried.values())}; wrongly named {len(self.wrongly_named)} of "
                f"{wrong} wrong answers; bounds credited {len(self.bounds_credited)}; "
                f"explanations per wrong answer {dict(sorted(self.per_wrong.items()))}")


def explanations(mark: Mark) -> int:
    """How many explanations the marking gives for one answer."""
    readings = 0 if mark.diagnosis is None else 1 + len(mark.diagnosis.others)
    return len(mark.misconceptions) + readings + int(mark.carried_forward)


def _diagnosis_inputs(mark: Mark) -> set[str]:
    if mark.diagnosis is None:
        return set()
    return {s.input for s in (*mark.diagnosis.slips, *mark.diagnosis.others)}


def grade_attempt(attempt: dict[str, Any]) -> tuple[dict[str, Mark], tuple[str, ...]]:
    drill, _ = find_drill(attempt["drill"])
    key = answer_key(drill, attempt.get("variant"))
    answers = {str(k): None if v is None else str(v) for k, v in attempt["answers"].items()}
    marks = mark_sheet(key, answers)
    score = score_attempt(drill, load_rubric(drill.rubric), marks)
    return marks, tuple(flag for flag, _ in score.red_flags)


def report() -> Report:
    out = Report()
    for attempt in attempts():
        marks, flags = grade_attempt(attempt)
        drill, _ = find_drill(attempt["drill"])
        intents: dict[str, dict[str, Any]] = {str(k): v for k, v in attempt["intent"].items()}
        meant_mistakes = {i.get("mistake") for i in intents.values() if i["kind"] == "mistake"}
        rubric = load_rubric(drill.rubric)
        for flag in rubric.red_flags:
            if flag.id in flags and not set(flag.misconceptions) & meant_mistakes:
                out.false_flags.append(f"{attempt['id']} {flag.id}")
        for step_id, intent in intents.items():
            mark = marks.get(step_id)
            if mark is None or not mark.is_numeric:
                continue
            kind = intent["kind"]
            where = f"{attempt['id']} {step_id} {mark.answer!r} {intent}: {mark.feedback}"
            out.answers[kind] += 1
            if kind == "right":
                if mark.verdict != "correct" or "your working" in mark.feedback.lower():
                    out.scolded.append(where)
                continue
            out.per_wrong[explanations(mark)] += 1
            if explanations(mark) > 2:
                out.too_many.append(where)
            said = bool(mark.misconceptions or mark.diagnosis or mark.carried_forward)
            out.explained[kind] += said
            if mark.carried_forward and kind in ("mistake", "slip", "unit-mix"):
                continue  # the number does follow from the attempt's own: true whatever the cause
            if kind == "bound":
                if mark.verdict == "correct" and not drill.step(step_id).accepts_bound:
                    out.bounds_credited.append(where)
            elif kind == "carried":
                ok = mark.carried_forward or mark.verdict == "correct"
                out.carried["recognised" if ok else "missed"] += 1
                if not ok and said:
                    out.wrongly_named.append(where)
            elif kind == "mistake":
                # The same mistake made again later is also what the earlier answers give.
                if said and intent["mistake"] not in mark.misconceptions \
                        and not mark.carried_forward:
                    out.wrongly_named.append(where)
            elif kind == "unit-mix":
                if said and UNIT_MIX_IDS.get(intent["mix"]) not in mark.misconceptions:
                    out.wrongly_named.append(where)
            elif kind == "slip":
                # A mistake named beside the slip itself is no wrong word; one named alone is.
                slip = INPUT_NAMES.get(intent["input"], intent["input"])
                if said and slip not in _diagnosis_inputs(mark):
                    out.wrongly_named.append(where)
            elif kind == "random" and said:
                out.wrongly_named.append(where)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", choices=["scolded", "too_many", "false_flags",
                                           "wrongly_named", "bounds_credited"])
    args = parser.parse_args(argv)
    found = report()
    print(found.line())
    for case in getattr(found, args.show) if args.show else ():
        print(" -", case)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
