"""Issue 37, the seventh attack: a re-target's refusal comes before its count, variants are
distinct in what they ask (not only in their givens), a refusal's suggestion is one that runs,
a --out link to nothing is named, and the drill's own model named again is no re-target."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from one_line import one_line_error

Run = Callable[..., Result]
CONFIGS = Path(__file__).parent / "corpus" / "configs"


def test_a_refused_re_target_is_refused_whatever_the_count(run: Run) -> None:
    one_line_error(run("variants", "chunked-prefill-tpot", "--model", "qwen3-8b", "--gpu",
                       "h200", "--count", "500", ok=False), 2, "is Llama-3.1-8B's own")


def test_variants_whose_answers_are_all_the_same_are_one_variant(run: Run) -> None:
    # long-context-tier: an A100-80GB and an H100 give the same answers
    out = json.loads(run("variants", "long-context-tier", "--count", "34", "--json").output)
    answers = {json.dumps(v["answers"], sort_keys=True) for v in out["variants"]}
    assert len(answers) == 34


def test_past_the_distinct_answers_the_count_said_is_one_that_runs(run: Run) -> None:
    result = run("variants", "long-context-tier", "--count", "54", ok=False)
    one_line_error(result, 2, "has 34 variants with answers of their own",
                   "ask for --count 34 or fewer")


def test_a_model_windowed_on_every_layer_draws_no_variants_of_this_drill(run: Run) -> None:
    # (it drew 5, its contexts past the window being one; since expert pass 31 the drill,
    # whose option (d) halves the context, refuses a model whose cache stops at its window)
    one_line_error(run("variants", "llama2-70b-mi300x", "--model", "mistral-7b-v0.1", "--gpu",
                       "h100", "--count", "6", ok=False), 2, "keeps only its 4,096-token window")


def test_a_calc_suggestion_names_the_card_with_gpus_enough_for_the_weights(run: Run) -> None:
    # (it named the card alone, where 54 GB of weights do not fit one 24 GB L4; since expert
    # pass 43 the card asked for is kept, with the fewest GPUs that hold the weights)
    result = run("show", "chunked-prefill-tpot", "--model", str(CONFIGS / "gemma-3-27b-it"),
                 "--gpu", "l4", ok=False)
    suggestion = result.stderr.strip().rsplit(": ", 1)[-1]
    assert suggestion.startswith("size gemma-3-27b-it with kvdrill calc --model")
    assert suggestion.endswith("--gpu l4 --gpus 4")
    assert run(*suggestion.split("with kvdrill ", 1)[1].split()).exit_code == 0


def test_gpu_only_is_offered_only_where_the_drills_own_model_runs(run: Run) -> None:
    result = run("show", "deepseek-v3-mla-h200", "--model", "qwen3-8b", "--gpu", "l4",
                 ok=False)
    assert "--gpu only" not in result.stderr
    # a drill that runs on the card asked about is named before one on another card
    assert "--gpu l4" in result.stderr and "does not run on" not in result.stderr


def test_an_out_folder_that_is_a_link_to_nothing_is_named(run: Run, tmp_path: Path) -> None:
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "missing" / "x")
    one_line_error(run("variants", "llama31-8b-h100", "--out", str(link), ok=False), 2,
                   "is a symbolic link to nothing")


def test_the_drills_own_model_named_again_grades_a_card_only_sheet(run: Run,
                                                                   tmp_path: Path) -> None:
    run("variants", "llama31-8b-h100", "--gpu", "h200", "--count", "1", "--seed", "3",
        "--out", str(tmp_path / "v"))
    sheet = next((tmp_path / "v").glob("*-answers.yaml"))
    assert run("grade", "llama31-8b-h100", "--answers", str(sheet), "--gpu", "h200",
               "--model", "llama-3.1-8b").exit_code == 0
