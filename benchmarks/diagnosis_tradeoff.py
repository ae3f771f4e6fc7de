"""What naming more slips would cost: the chance budget the diagnosis spends (trainer/marking/
chance.py) scaled by k, and, on the corpora written blind to it (tests/corpus/
blind_world_slips.yaml, blind_random_answers.yaml), the share of the slips named, the share
named wrongly, and the share of random wrong answers given a reading.

Run inside the project's virtual environment, from the project's root:
    python benchmarks/diagnosis_tradeoff.py [K ...]     (default: 1 2 3 5 100)

k = 1 is what ships. k = 100 admits every candidate chance would otherwise keep out: what is
still missed there is missed for want of a candidate (an input the step does not read, a
value no list holds) or for a count too short to say anything, not for the budget.
Issue 33 asked for 80% named with at most 5% of random answers explained; this prints why
the budget alone cannot give both. Nothing here runs in the test suite.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_diagnosis_blind as blind

from trainer.marking import chance, diagnosis

SHIPPED = (chance.BUDGET, chance.NEAR_BUDGET, chance.COARSE_BUDGETS, chance.WHOLE_BUDGETS)


def scale_budgets(k: float) -> None:
    budget, near, coarse, whole = SHIPPED
    chance.BUDGET, chance.NEAR_BUDGET = budget * k, near * k
    chance.COARSE_BUDGETS = tuple(share * k for share in coarse)
    chance.WHOLE_BUDGETS = tuple(share * k for share in whole)
    chance.admitted.__defaults__ = (chance.BUDGET, None)
    for name in dir(diagnosis):  # every cached pool, admission and diagnosis
        cached = getattr(diagnosis, name)
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("k", nargs="*", type=float, default=[1, 2, 3, 5, 100])
    args = parser.parse_args()
    slips = blind.entries("blind_world_slips.yaml")
    randoms = blind.entries("blind_random_answers.yaml")
    print(f"{'k':>6} {'named':>8} {'wrongly':>8} {'random read':>12}")
    for k in args.k:
        scale_budgets(k)
        outcomes = [blind.outcome(entry) for entry in slips]
        asked = [o for o in outcomes if o != "listed"]
        wrong = [m for m in map(blind.marked, randoms) if m.verdict == "wrong"]
        read = [m for m in wrong if m.diagnosis is not None and not m.diagnosis.crowded]
        print(f"{k:>6g} {asked.count('named') / len(asked):>8.1%} "
              f"{outcomes.count('wrong') / len(outcomes):>8.1%} {len(read) / len(wrong):>12.1%}")


if __name__ == "__main__":
    main()
