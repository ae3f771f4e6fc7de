"""An expert review's modelling and wording fixes (the serving-system figures are in
test_drills_serving.py). Each states its figure, computed by hand, and its source, and is checked
through the real solver (the drill's answer key) and the worked solution the CLI renders."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from click.testing import Result

from trainer.loader import find_drill, load_rubric
from trainer.reference import AnswerKey
from trainer.scoring import concept_credit

Run = Callable[..., Result]
GB = 10**9
MIB = 2**20


def ref(drill_id: str, step_id: str) -> Fraction:
    drill, _ = find_drill(drill_id)
    return AnswerKey(drill).reference(step_id).value


def solution(run: Run, drill_id: str, *args: str) -> str:
    return " ".join(run("solution", drill_id, *args).output.split())  # line breaks as spaces


def model_answer(drill_id: str, step_id: str) -> str:
    drill, _ = find_drill(drill_id)
    return " ".join((drill.step(step_id).model_answer or "").split())


# ---- Observed concurrency lower: the suspects under a paged cache -------------------------------
# vLLM's paged cache reserves nothing per max_model_len and wastes under one block per request
# (paged-blocks-vllm: 8 empty slots of 1,008 at 1,000 tokens, 0.8%).


def test_observed_lower_follow_up_names_paged_cache_suspects_not_reservations() -> None:
    answer = model_answer("llama31-8b-h100", "followup-observed-lower")
    assert "nothing is reserved per max_model_len" in answer
    assert "CUDA-graph memory bigger than the 4 GB assumed" in answer
    assert "The next suspects are max_model_len reservations" not in answer
    assert "KV-cache usage gauge at p95" in answer and "preemption counter" in answer


def test_observed_lower_rubric_credits_a_cuda_graph_peak_not_reservations() -> None:
    concept = load_rubric("kv-capacity").concept("observed-lower-causes")
    assert concept is not None
    assert concept_credit(concept, "The CUDA graph memory was bigger than the headroom we "
                                   "assumed for this context.")[0] > 0
    assert concept_credit(concept, "It is max_model_len reservation waste on every "
                                   "request.")[0] == 0


# ---- Little's law: size the shared pool on the mean, cap or route the tail ----------------------


def test_littles_law_sizes_the_pool_on_the_mean_and_names_the_8x_cost_of_the_tail(
        run: Run) -> None:
    # p99 at 32k: 11 in flight per GPU over W = 400 × 18.90 ms = 7.56 s, 1.46 requests/s
    # against 11.8 at 4k: sizing every request at the tail buys about 8× the GPUs.
    assert abs(float(ref("littles-law-capacity", "p99-qps")) - 11 / 7.561) < 1e-3
    text = solution(run, "littles-law-capacity")
    assert "the KV in flight is about L × the mean context, plus headroom" in text
    assert "Sizing every request at the p99 buys about 8× the GPUs" in text
    assert "Plan on the tail" not in text
    assert "Plan on the tail" not in model_answer("littles-law-capacity", "plan")


# ---- Paged blocks: vLLM's max_num_seqs cap (EngineArgs.get_batch_defaults: 1,024 on a GPU of
# 70 GiB or more that is not an A100, else 256) -----------------------------------------------------


def test_paged_blocks_h100_default_holds_431_under_the_1024_cap(run: Run) -> None:
    # 81,559 MiB × 0.9 − 16 GB − 4 GB = 56.97 GB ÷ (63 blocks × 16 × 131,072 B) = 431.2 → 431
    budget = 81_559 * MIB * Fraction(9, 10) - 20 * GB
    assert ref("paged-blocks-vllm", "paged-sessions") == int(budget / (1008 * 131_072)) == 431
    assert "by default 1,024 on this card" in solution(run, "paged-blocks-vllm")
    assert "Here the memory binds first: 431 sequences is under the cap" in solution(
        run, "paged-blocks-vllm")


def test_paged_blocks_a100_variant_says_max_num_seqs_256_binds(run: Run) -> None:
    # Variant 111494: A100 80GB, 81,920 MiB × 0.85 − 16 − 4 GB = 53.01 GB ÷ 132.1 MB = 401
    # requests' KV, but vLLM runs at most 256 at once on an A100.
    text = solution(run, "paged-blocks-vllm", "--variant", "111494")
    assert "NVIDIA A100 SXM 80GB" in text
    assert ("Here the cap binds: the KV cache holds 401 sequences, but vLLM runs at most "
            "**256** at once") in text
