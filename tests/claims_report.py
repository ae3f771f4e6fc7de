"""How the text scorer ranks blind answers, per step: junior < mid < senior (ordered), the bare
list below mid (buzzwords held), the fluent wrong answer at or below the junior (wrong held),
and, as its precision, how often a right answer (junior, mid, senior) is said to make a
wrong claim, and how often the wrong answer's claim is caught.

    python tests/claims_report.py [CORPUS ...] [--show failures|claims]

CORPUS: files under tests/corpus shaped drill → step → {junior, mid, senior, buzzwords,
wrong}; default: blind_claims_a.yaml and blind_claims_b.yaml. Each answer is graded alone,
as `kvdrill grade --json` grades a sheet holding only it (the anchor score lint uses).
"""

from __future__ import annotations

import argparse
import sys
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.model import Drill, Rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import mark_sheet
from trainer.marking.scoring import score_attempt
from trainer.reading.exact import Fraction

CORPORA = Path(__file__).parent / "corpus"
LEVELS = ("junior", "mid", "senior", "buzzwords", "wrong")


@cache
def drill_and_rubric(drill_id: str) -> tuple[Drill, Rubric]:
    drill = find_drill(drill_id)[0]
    return drill, load_rubric(drill.rubric)


def load(name: str) -> dict[str, dict[str, dict[str, str]]]:
    data: dict[str, Any] = yaml.safe_load((CORPORA / name).read_text(encoding="utf-8"))
    return data


def step_report(drill_id: str, step_id: str, answers: dict[str, str]) -> dict[str, Any]:
    drill, rubric = drill_and_rubric(drill_id)
    graded = {level: _graded(drill, rubric, step_id, answers[level])
              for level in LEVELS if answers.get(level)}
    scores = {level: score for level, (score, _) in graded.items()}
    claimed = {level: claims for level, (_, claims) in graded.items()}
    return {
        "drill": drill_id, "step": step_id, "scores": scores, "claimed": claimed,
        "ordered": scores["junior"] < scores["mid"] < scores["senior"],
        "buzzwords_held": scores["buzzwords"] < scores["mid"],
        "wrong_held": "wrong" not in scores or scores["wrong"] <= scores["junior"],
    }


def _graded(drill: Drill, rubric: Rubric, step_id: str, text: str) -> tuple[Any, list[str]]:
    """What the answer scores alone (lint's anchor_score) and the wrong claims it makes, from
    one marking and one scoring of it."""
    key = AnswerKey(drill)
    score = score_attempt(drill, rubric, mark_sheet(key, {step_id: text}),
                          moe=key.base.experts is not None)
    total = sum((d.score for d in score.dimensions if d.id != "arithmetic"), Fraction(0))
    return total, [c.claim.id for c in score.wrong_claims if c.step_id == step_id]


def report(names: list[str]) -> list[dict[str, Any]]:
    rows = []
    for name in names:
        for drill_id, steps in load(name).items():
            for step_id, answers in steps.items():
                rows.append({"corpus": name, **step_report(drill_id, step_id, answers)})
    return rows


def summary(rows: list[dict[str, Any]]) -> str:
    n = len(rows)
    right = [(r, level) for r in rows for level in ("junior", "mid", "senior")]
    false_claims = [(r, level) for r, level in right if r["claimed"].get(level)]
    with_wrong = [r for r in rows if "wrong" in r["scores"]]
    caught = [r for r in with_wrong if r["claimed"].get("wrong")]
    return (f"{n} steps: ordered {sum(r['ordered'] for r in rows)}/{n}, buzzwords held "
            f"{sum(r['buzzwords_held'] for r in rows)}/{n}, wrong held "
            f"{sum(r['wrong_held'] for r in with_wrong)}/{len(with_wrong)}; wrong claim "
            f"caught {len(caught)}/{len(with_wrong)}; right answers said to claim wrongly "
            f"{len(false_claims)}/{len(right)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpora", nargs="*",
                        default=["blind_claims_a.yaml", "blind_claims_b.yaml"])
    parser.add_argument("--show", choices=("failures", "claims"))
    args = parser.parse_args()
    for name in args.corpora:
        rows = report([name])
        print(f"{name}: {summary(rows)}")
        for r in rows:
            shown = ", ".join(f"{k} {float(v):.2f}" for k, v in r["scores"].items())
            if args.show == "failures" and not (r["ordered"] and r["buzzwords_held"]
                                                and r["wrong_held"]):
                print(f"  {r['drill']}/{r['step']}: {shown}")
            if args.show == "claims" and any(r["claimed"].values()):
                print(f"  {r['drill']}/{r['step']}: {r['claimed']}")
    sys.exit(0)


if __name__ == "__main__":
    main()
