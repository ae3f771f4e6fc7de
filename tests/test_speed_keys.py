"""The interviewer's keys made fast (issue 39) say exactly what they said before: the slips a
key lists, the solver's evaluations in part, and the kept candidates and prompts each give
what the plain, uncached computation gives. No timing is asserted here (benchmarks/ times)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from trainer.capacity import solver
from trainer.capacity.wrong_paths import WRONG_PATHS
from trainer.drills import loader
from trainer.drills.reference import AnswerKey
from trainer.marking import diagnosis
from trainer.reading.exact import Fraction
from trainer.views import keys
from trainer.views.sheets import prompt_of

# The slips key_rows listed for sliding-window-kv, variant 646356 (pick_variants(drill, 2, 11)),
# written by the code before issue 39's changes: (step, [(value shown, what it means)]).
GOLDEN_SLIPS: list[tuple[str, list[tuple[str, str]]]] = [
    ("mistral-per-token", [("32 KiB", "kv_bytes_per_element = 0.5 B (int4's half byte)"),
                           ("4,096 KiB", "head_dim = 4,096 (the hidden size)"),
                           ("168 KiB", "layers = 42 (Gemma-2-9B's)")]),
    ("mistral-tokens-held", []),
    ("mistral-per-sequence", [("134 MB", "kv_bytes_per_element = 0.5 B (int4's half byte)"),
                              ("17,180 MB", "head_dim = 4,096 (the hidden size)"),
                              ("1,879 MB", "layers = 42 (Gemma-2-9B's)"),
                              ("1,829 MB", "windowed_layers = 21 (Gemma-2-9B's)")]),
    ("mistral-per-sequence-full", [("1.07 GB", "kv_bytes_per_element = 0.5 B (int4's half byte)"),
                                   ("137 GB", "head_dim = 4,096 (the hidden size)"),
                                   ("5.64 GB", "layers = 42 (Gemma-2-9B's)")]),
    # (stop 47: a slip whose value the step would mark right is no slip to list: 104 of
    # mistral-sessions, 11 of mistral-sessions-full, 7 of gemma-sessions are gone)
    ("mistral-sessions", [("410 sequences", "kv_bytes_per_element = 0.5 B (int4's half byte)"),
                          ("3 sequences", "head_dim = 4,096 (the hidden size)"),
                          ("47 sequences", "hbm_gb = 48 GB (an L40S's)"),
                          ("207 sequences", "hbm_gb = 141 GB (an H200's)")]),
    ("mistral-sessions-full", [("51 sequences", "kv_bytes_per_element = 0.5 B (int4's half "
                                "byte)"),
                               ("5 sequences", "hbm_gb = 48 GB (an L40S's)"),
                               ("9 sequences", "layers = 42 (Gemma-2-9B's)")]),
    ("gemma-head-dim", []),
    ("gemma-per-token", [("84 KiB", "kv_bytes_per_element = 0.5 B (int4's half byte)"),
                         ("4,704 KiB", "head_dim = 3,584 (the hidden size)"),
                         # (the givens' model's: a question of Gemma-2-9B with Mistral's 32)
                         ("256 KiB", "layers = 32 (Mistral-7B-v0.1's)")]),
    ("gemma-per-sequence", [("1.59 GB", "kv_bytes_per_element = 0.5 B (int4's half byte)"),
                            ("88.8 GB", "head_dim = 3,584 (the hidden size)"),
                            ("3.52 GB", "context = 16,384 tokens (a power of two)"),
                            ("12 GB", "context = 65,536 tokens (a power of two)")]),
    ("gemma-sessions", [("32 sequences", "kv_bytes_per_element = 0.5 B (int4's half byte)"),
                        ("14 sequences", "context = 16,384 tokens (a power of two)"),
                        ("3 sequences", "hbm_gb = 48 GB (an L40S's)"),
                        ("13 sequences", "layers = 32 (Mistral-7B-v0.1's)")]),
    ("gemma-sessions-full", [("18 sequences", "kv_bytes_per_element = 0.5 B (int4's half "
                              "byte)"),
                             ("1 sequence", "hbm_gb = 48 GB (an L40S's)")]),
]
# SHA-256 of the JSON of both variants' rows (id, reference, wrong values, slips), as above;
# made again in stop 47, when a count of tokens that no byte figure enters (the window's
# tokens held) stopped listing KB/KiB-style unit mixes, and a key stopped listing values the
# step marks right; and in stop 48, when Gemma's per-sequence step gained the wrong path
# window-on-every-layer (1.41 GB), its only change; and in stop 52, when a shape the givens
# take from their model is named as that model's (Gemma's layers slipped to 32: Mistral's, not
# Llama-3.1-8B's), the three labels its only change.
GOLDEN_ROWS = {646356: "8821c2c9066c076723dc691c68b3a89b08d0e6e18922c602b2f27dff8ba66d88",
               979765: "e0c5be03624024a7ff9585101f46045301bcc1f4828af6ad41ed9403a2b55441"}


def _keys(drill_id: str, count: int, seed: int) -> list[tuple[int, AnswerKey]]:
    drill, _ = loader.find_drill(drill_id)
    return [(variant, AnswerKey(drill, givens))
            for variant, givens in keys.pick_variants(drill, count, seed)]


def test_key_rows_are_the_ones_written_before_the_speed_up() -> None:
    chosen = _keys("sliding-window-kv", 2, 11)
    assert [variant for variant, _ in chosen] == list(GOLDEN_ROWS)
    first = keys.key_rows(chosen[0][1])
    assert [(row["id"], [(s["value"], s["means"]) for s in row["slips"]]) for row in first] \
        == [(step, list(slips)) for step, slips in GOLDEN_SLIPS]
    for variant, key in chosen:
        rows = [{k: row[k] for k in ("id", "reference", "wrong", "slips")}
                for row in keys.key_rows(key)]
        text = json.dumps(rows, sort_keys=True, ensure_ascii=False)
        assert hashlib.sha256(text.encode()).hexdigest() == GOLDEN_ROWS[variant]


# ---------------------------------------------------------------------------------------------
# The plain computation, as slip_values did it before: every input the step depends on (each
# checked by a fresh evaluation), every candidate of it (the full list, then the strong ones),
# each evaluated afresh, with no cache of the solver's.


def _fresh(deployment: Any, name: str, overrides: dict[str, Fraction], relaxed: bool) -> Any:
    inputs = solver._exact_inputs(deployment)
    if relaxed or name not in solver.FORMULAS:
        return getattr(solver._Namespace(inputs, solver.RELAXED_OPS, overrides), name)
    for needed in solver.FORMULAS[name].needs:
        if getattr(deployment, needed) is None:
            raise solver.InvalidInput(needed)
    return getattr(solver._Namespace(inputs, solver.EXACT_OPS, overrides), name)


def _fresh_value(problem: Any, overrides: dict[str, Fraction], relaxed: bool) -> Any:
    pins = dict(problem.pins) if relaxed or problem.quantity not in solver.FORMULAS else {}
    try:
        return _fresh(problem.deployment, problem.quantity, {**pins, **overrides}, relaxed)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError, diagnosis.KvdrillError):
        return None


def _plain_slip_values(key: AnswerKey, step_id: str, limit: int = 4
                       ) -> list[tuple[Fraction, str]]:
    problem = diagnosis._problem(key, step_id)
    reference = key.reference(step_id)
    strongest = []
    order = 0
    for spec in diagnosis._INPUTS:
        if spec.slot == problem.quantity:
            continue
        x0 = diagnosis._slot_value_of(problem.deployment, solver._exact_inputs(
            problem.deployment), spec.slot)
        if x0 is None or x0 <= 0:
            continue
        nudged = x0 * Fraction(9, 8)
        moved = _fresh_value(problem, {spec.slot: nudged}, relaxed=True)
        if moved is None or moved == problem.relaxed:
            continue
        given = diagnosis._BY_NAME.get(dict(problem.aliases).get(spec.name, ""))
        named = spec if given is None else diagnosis.replace(given, slot=spec.slot,
                                                             scale=spec.scale)
        strongest += [(c.tier, order, named, c)
                      for c in diagnosis._candidates_of(problem, named, x0 / named.scale)
                      if c.tier <= diagnosis.OWN
                      and not c.why.endswith(diagnosis._OTHER_VARIANT)]
        order += 1
    strongest.sort(key=lambda item: item[:2])
    taken = {reference.value, *(v for _, v in reference.wrong)}
    found: list[tuple[Fraction, str]] = []
    for _, _, spec, candidate in strongest:
        value = _fresh_value(problem, {spec.slot: candidate.value * spec.scale}, relaxed=False)
        if value is None or value <= 0 or value in taken:
            continue
        taken.add(value)
        found.append((value, f"{spec.name} = {diagnosis._shown(candidate.value, spec)} "
                             f"({candidate.why})"))
        if len(found) == limit:
            break
    return found


@pytest.mark.parametrize("drill_id", ["llama2-70b-mi300x", "littles-law-capacity"])
def test_kept_slips_are_the_plain_computations(drill_id: str) -> None:
    for _, key in _keys(drill_id, 2, 3):
        for step in key.drill.steps:
            if step.kind != "numeric" or step.answer is None or step.ratio_of is not None:
                continue
            assert diagnosis.slip_values(key, step.id) == _plain_slip_values(key, step.id), \
                step.id


def test_strong_candidates_are_the_strong_part_of_the_full_list() -> None:
    _, key = _keys("llama31-70b-tp2-h100", 1, 5)[0]
    for step in key.drill.steps:
        if step.kind != "numeric" or step.answer is None or step.ratio_of is not None:
            continue
        problem = diagnosis._problem_of(key, step.id, None)
        for spec, x0 in diagnosis._settable(problem):
            true = x0 / spec.scale
            full = diagnosis._candidates_of(problem, spec, true)
            assert diagnosis._candidates(problem, spec, true, True) == tuple(
                c for c in full if c.tier <= diagnosis.OWN), (step.id, spec.name)


# ---------------------------------------------------------------------------------------------
# The solver's evaluation in part: a kept evaluation with some names set gives the value, and
# the type, of an evaluation afresh.


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("drill_id", ["deepseek-v3-mla-h200", "littles-law-capacity",
                                      "hybrid-state-kv"])
def test_evaluation_in_part_is_the_evaluation_afresh(drill_id: str) -> None:
    _, key = _keys(drill_id, 1, 7)[0]
    d = key.base
    pins = {"batch_size": solver.value_of(d, "batch_size")}
    slots = [s.slot for s in diagnosis._INPUTS if diagnosis._slot_value(d, s.slot)]
    for name in solver.FORMULAS:
        for slot in slots:
            x = diagnosis._slot_value(d, slot)
            assert x is not None
            overrides = {slot: x * Fraction(9, 8)}
            for relaxed in (False, True):
                try:
                    expected = _fresh(d, name, {**(pins if relaxed else {}), **overrides},
                                      relaxed)
                except Exception as error:  # the evaluation in part raises the same
                    with pytest.raises(type(error)):
                        _kept(d, name, overrides, pins, relaxed)
                    continue
                assert _same(_kept(d, name, overrides, pins, relaxed), expected), (name, slot)


def _kept(d: Any, name: str, overrides: dict[str, Fraction], pins: dict[str, Fraction],
          relaxed: bool) -> Any:
    if relaxed:
        return solver.relaxed_value(d, name, overrides, pins=pins)
    return solver.Solution(d, overrides)[name]


def test_a_wrong_paths_deployment_is_evaluated_as_afresh() -> None:
    for _, key in _keys("llama2-70b-mi300x", 1, 2):
        d = key.base
        for path in WRONG_PATHS.values():
            changed = path.change(d)
            if changed is None:
                continue
            solver.value_of(d, "max_concurrency")  # the parent, evaluated first
            for name in ("kv_bytes_per_token", "max_concurrency", "tokens_per_second",
                         "weights_read_per_step"):
                fresh = solver.Solution(changed)
                try:
                    expected = fresh[name]
                except ZeroDivisionError:
                    continue
                assert _same(solver.value_of(changed, name), expected), (path.id, name)


def test_reads_name_every_input_that_moves_the_value() -> None:
    _, key = _keys("llama31-8b-h100", 1, 4)[0]
    d = key.base
    for name in ("max_concurrency", "tokens_per_second", "kv_budget_bytes"):
        reads = solver.relaxed_reads(d, name)
        assert reads is not None
        base = solver.relaxed_value(d, name)
        for slot, value in solver.exact_inputs(d).items():
            if slot in reads or not isinstance(value, Fraction) or not value:
                continue
            assert solver.relaxed_value(d, name, {slot: value * 2}) == base, (name, slot)


def test_a_keys_prompts_are_the_candidates_prompts() -> None:
    _, key = _keys("llama2-70b-mi300x", 1, 9)[0]
    givens = key.display_givens()
    for step in key.drill.steps:
        assert keys._prompt(step, givens) == prompt_of(key, step.id).strip()
