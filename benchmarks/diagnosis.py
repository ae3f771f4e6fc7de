"""How long practice takes to give feedback on a wrong answer that needs a diagnosis (the formula
solved backwards), as a ratio to the feedback on a right answer at the same step.

Run inside the project's virtual environment: python benchmarks/diagnosis.py [--repeat N]
Each measurement is a fresh process (so the first diagnosis pays for any lazy import and for
its step's candidates and what chance allows among them): a practice session whose earlier
steps are skipped, then one answer; the time is from the answer's Enter (the prompt returning
it) to its feedback line. Prints the median milliseconds of each case, the ratio to the right
answer's feedback, and the slowest run.
Nothing here runs in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

# (what it exercises, drill, step, a slip no listed mistake explains, the right answer)
CASES = (
    ("closed form: 23 layers", "llama31-8b-h100", "bytes-per-token", "92.0 KiB", "128 KiB"),
    ("closed form: utilisation after the weights", "llama31-8b-h100", "kv-budget", "53.6 GB",
     "52 GB"),
    ("closed form: a rate over a changed batch", "decode-roofline-vs-measured", "plan-tokens",
     "4,129.8 tokens/s", "4,772 tokens/s"),
    ("no closed form, candidates checked forward: the MoE expert read, batch 2",
     "mixtral-moe-decode", "read-batch1", "42.67 GB", "25.8 GB"),
    ("no closed form, candidates checked forward: the MoE expert read, nothing fits",
     "mixtral-moe-decode", "read-batch64", "61.23 GB", "93.4 GB"),
    ("the world: an H200's memory in an H100 question", "llama31-8b-h100", "kv-budget",
     "106.9 GB", "52 GB"),
    ("nothing plausible: every input tried", "llama2-70b-mi300x", "3a-step-time", "47.3 ms",
     "34.1 ms"),
)

PROBE = """
import json, sys, tempfile, time
from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.app.session import Session, new_attempt
from trainer.store.database import Store

drill_id, step_id, answer = sys.argv[1:4]
drill, path = find_drill(drill_id)
key = AnswerKey(drill)
store = Store()
attempt = new_attempt(store, key, path, None, exam=False, strict=False)
order = [s.id for s in drill.steps]
lines = [":skip"] * order.index(step_id) + [answer]
stamps = {}

def ask(prompt):
    if not lines:
        return None
    line = lines.pop(0)
    if not lines:
        stamps["enter"] = time.perf_counter()
    return line

def say(text):
    if "enter" in stamps and "feedback" not in stamps and text[:1] in "✓✗":
        stamps["feedback"] = time.perf_counter()

Session(key, store, attempt, ask=ask, say=say, clock=time.monotonic).run()
print(json.dumps((stamps["feedback"] - stamps["enter"]) * 1000))
"""


def feedback_ms(drill: str, step: str, answer: str, home: str) -> float:
    env = dict(os.environ, KVDRILL_HOME=tempfile.mkdtemp(dir=home))
    done = subprocess.run([sys.executable, "-c", PROBE, drill, step, answer], env=env,
                          capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL)
    value: float = json.loads(done.stdout.strip().splitlines()[-1])
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per case (median kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        print(f"{'case':<50} {'right':>9} {'slip':>9} {'ratio':>6} {'slowest':>8}")
        for name, drill, step, slip, right in CASES:
            rights = [feedback_ms(drill, step, right, home) for _ in range(args.repeat)]
            slips = [feedback_ms(drill, step, slip, home) for _ in range(args.repeat)]
            right_ms, slip_ms = statistics.median(rights), statistics.median(slips)
            print(f"{name:<50} {right_ms:>7.1f}ms {slip_ms:>7.1f}ms {slip_ms / right_ms:>5.1f}× "
                  f"{max(slips):>6.0f}ms")


if __name__ == "__main__":
    main()
