"""Expert pass 43, the feedback on wrong answers: the step that asks for the released FP8
checkpoint takes no one-byte-per-parameter count; DP attention with its copies left out, and an
MoE budget less only its active weights beside resident weights answered right, are named as
such; an answer is no copy of an earlier step's figure the candidate answered otherwise. Each
graded through the real CLI, as `kvdrill grade --json` prints it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from click.testing import Result
from retarget_text import refusal_text

Run = Callable[..., Result]


def _step(run: Run, tmp_path: Path, drill: str, sheet: dict[str, str], step_id: str,
          *target: str) -> dict[str, Any]:
    path = tmp_path / "sheet.yaml"
    path.write_text(yaml.safe_dump(sheet), encoding="utf-8")
    result = run("grade", drill, "--answers", str(path), *target, "--json", ok=False)
    steps: list[dict[str, Any]] = json.loads(result.output)["steps"]
    return next(s for s in steps if s["id"] == step_id)


def test_one_byte_per_parameter_is_no_count_of_the_released_checkpoint(
        run: Run, tmp_path: Path) -> None:
    # 97 sessions at 70 GB of FP8 weights; the released 72.66 GB checkpoint leaves room for 94
    step = _step(run, tmp_path, "llama31-70b-tp2-h100",
                 {"sessions-released-checkpoint": "97 sequences"}, "sessions-released-checkpoint")
    assert step["verdict"] == "wrong" and step["expected"]["value"] == 94


def test_the_released_checkpoints_own_count_is_right(run: Run, tmp_path: Path) -> None:
    step = _step(run, tmp_path, "llama31-70b-tp2-h100",
                 {"sessions-released-checkpoint": "94 sequences"}, "sessions-released-checkpoint")
    assert step["verdict"] == "correct"


def test_dp_attention_without_its_copies_is_named(run: Run, tmp_path: Path) -> None:
    # 8 × floor(310 GB ÷ 8 ÷ 2.30 GB) = 128: each GPU's eighth of the budget, no copy in it
    step = _step(run, tmp_path, "deepseek-v3-mla-h200",
                 {"sessions-dp-attention": "128 sequences"}, "sessions-dp-attention")
    assert step["misconceptions"] == ["dp-copies-left-out"]


def test_an_moe_budget_less_its_active_weights_is_named_beside_right_resident_weights(
        run: Run, tmp_path: Path) -> None:
    step = _step(run, tmp_path, "mixtral-moe-decode",
                 {"resident-weights": "93.4 GB", "active-weights": "25.8 GB",
                  "kv-budget": "110.2 GB"}, "kv-budget")
    assert step["misconceptions"] == ["moe-active-as-resident"]


def test_an_answer_is_no_copy_of_a_step_answered_otherwise(run: Run, tmp_path: Path) -> None:
    # Gemma-3-27B: 4a's 82 sessions is a coincidence for 4d where 4a was answered 15
    sheet = {"drill": "llama2-70b-mi300x", "variant": 334205,
             "target": "Gemma-3-27B on AMD Instinct MI300X",
             "4a": "15 sequences", "4d": "82 sequences"}
    target = ("--variant", "334205", "--model", "gemma-3-27b", "--gpu", "mi300x")
    step = _step(run, tmp_path, "llama2-70b-mi300x", sheet, "4d", *target)
    assert step["verdict"] == "wrong" and "answer to 4a" not in step["feedback"]


def test_a_calc_suggestion_keeps_the_card_asked_for_with_gpus_enough(run: Run) -> None:
    said = refusal_text(run, "disaggregated-prefill", "--model", "qwen3-235b-a22b", "--gpu",
                        "b200")
    command = said.split("with kvdrill ", 1)[1].split()
    assert command[:5] == ["calc", "--model", "qwen3-235b-a22b", "--gpu", "b200"]
    assert run(*command).exit_code == 0  # 470 GB of weights on four B200s


def test_a_refusal_nests_no_parentheses(run: Run) -> None:
    said = refusal_text(run, "chunked-prefill-tpot", "--model", "gpt-oss-120b", "--gpu", "mi325x")
    depth = deepest = 0
    for character in said:
        depth += {"(": 1, ")": -1}.get(character, 0)
        deepest = max(deepest, depth)
    assert deepest == 1, said

