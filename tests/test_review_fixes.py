"""An expert review's modelling and wording fixes (the serving-system figures are in
test_drills_serving.py). Each states its figure, computed by hand, and its source, and is checked
through the real solver (the drill's answer key) and the worked solution the CLI renders."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.scoring import concept_credit
from trainer.reading.exact import Fraction

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
    # against 11.8 at 4k: sizing every request at the tail buys 21 GPUs instead of 3.
    assert abs(float(ref("littles-law-capacity", "p99-qps")) - 11 / 7.561) < 1e-3
    text = solution(run, "littles-law-capacity")
    assert "the KV in flight is about L × the mean context, plus headroom" in text
    assert "Sizing every request at the p99 buys 21 GPUs instead of 3" in text
    assert "Plan on the tail" not in text
    assert "Plan on the tail" not in model_answer("littles-law-capacity", "plan")


# ---- Paged blocks: vLLM's max_num_seqs cap (EngineArgs.get_batch_defaults: 1,024 on a GPU of
# 70 GiB or more that is not an A100, else 256) ------------------------------------------------


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


# ---- Llama-2-70B on an MI300X: the trained context, and the reserve on the real card ------------


def test_mi300x_situation_says_the_models_were_not_trained_for_this_context(run: Run) -> None:
    # Llama-2-70B: max_position_embeddings 4,096; Qwen2.5-72B: 32K native, YaRN beyond
    # (trainer/presets/models.yaml). The seed's answers stand: 44 GB and 4 sequences. The text
    # names no model of its own: a variant's model (Qwen2.5-72B) is not called Llama-2-70B.
    shown = " ".join(run("show", "llama2-70b-mi300x").output.split())
    assert "whether or not the model was trained that long" in shown.lower()
    assert "some models of this size were trained at 4,096 tokens" in shown
    assert ref("llama2-70b-mi300x", "1a") == 44 * GB


def test_mi300x_situation_names_only_the_variants_model(run: Run) -> None:
    from trainer.drills.loader import find_drill

    drill, _ = find_drill("llama2-70b-mi300x")
    assert "Llama" not in drill.situation and "Qwen" not in drill.situation


def test_mi300x_real_card_subtracts_the_reserve_from_206_gb(run: Run) -> None:
    # 196,592 MiB = 206.1 GB; − 10 GB reserve = 196.1 GB; − 138 GB weights = 58.1 GB
    text = solution(run, "llama2-70b-mi300x")
    assert "1 GPU × (206 GB memory − 10 GB reserve) = 196 GB after the reserve, minus 138 GB of " \
        "weights: 58.1 GB for KV" in text


# ---- Long-context tier: chat's cap is its p99, not its ~4k mean ----------------------------------


def test_long_context_tier_caps_chat_at_its_p99_not_at_the_4k_average(run: Run) -> None:
    text = solution(run, "long-context-tier")
    assert "Keep the chat tier's max_model_len at the p99 of chat contexts (well above the ~4k " \
        "average" in text
    assert "p99 cap (about 4k)" not in text
    assert "p99 cap of about 4k" not in model_answer("long-context-tier", "pool-policy")


# ---- DeepSeek-V3: SGLang-style DP attention, and vLLM's DP + EP -------------------------------


def test_deepseek_keeps_88_with_dp_attention_and_prices_vllm_dp_ep_at_72(run: Run) -> None:
    # vLLM DP+EP copies per GPU, besides what SGLang's DP attention copies (11.41 GB of
    # attention, the 1.85 GB BF16 embedding table): dense MLPs 3 × 3 × 7,168 × 18,432 = 1.19 GB
    # and shared experts 58 × 3 × 7,168 × 2,048 = 2.55 GB (FP8), and the BF16 LM head
    # 129,280 × 7,168 × 2 B = 1.85 GB. Budget 217.5 − 7 × 3.74 − 7 × 1.85 = 178.3 GB; 22.3 GB
    # a GPU ÷ 2.30 GB (61 × 576 × 2 B × 32,768) = 9 → 72 on the node.
    assert ref("deepseek-v3-mla-h200", "sessions-dp-attention") == 88
    dense, shared, head = 3 * 3 * 7168 * 18432, 58 * 3 * 7168 * 2048, 129_280 * 7168 * 2
    budget = ref("deepseek-v3-mla-h200", "kv-budget-dp-attention") - 7 * (dense + shared) \
        - 7 * head
    assert 8 * int(budget / 8 / (61 * 576 * 2 * 32768)) == 72
    text = solution(run, "deepseek-v3-mla-h200")
    assert "SGLang's DP attention" in text and "vLLM's data-parallel attention" not in text
    assert "about **178 GB**" in text and "about **72** on the node instead of 88" in text


# ---- Disaggregated prefill and chunked prefill: the card's datasheet figure on the GPU line -----


def test_a_measured_bandwidth_is_a_given_of_its_own_not_the_cards(run: Run) -> None:
    # H200 datasheet 4.8 TB/s; measured 3.4 TB/s at batch 64, 4k (shared/data/README.md).
    for drill_id in ("disaggregated-prefill", "chunked-prefill-tpot"):
        shown = run("show", drill_id).output
        assert "GPU: 1 × NVIDIA H200 SXM 141GB — 141 GB, 4.8 TB/s on the datasheet" in shown
        assert "measured bandwidth: 3.4 TB/s (the steps use this)" in shown


def test_a_datasheet_bandwidth_stays_on_the_gpu_line(run: Run) -> None:
    shown = run("show", "llama31-8b-h100").output
    assert "— 80 GB, 3.35 TB/s\n" in shown and "measured bandwidth" not in shown


# ---- Hybrid and TP2 wording ---------------------------------------------------------------------


def test_hybrid_capacity_falls_as_one_over_context_for_both_8x_apart(run: Run) -> None:
    # 32 layers ÷ 4 attention layers = 8× the sequences at long context (Jamba-1.5-Mini).
    text = solution(run, "hybrid-state-kv")
    assert "capacity falls as 1 ÷ context for both models" in text
    assert "32 ÷ 4 = 8 times as many sequences" in text and "8× more slowly" not in text


def test_tp2_quotes_the_measured_bandwidth_fractions(run: Run) -> None:
    # shared/data/README.md: 70–73% of 4.8 TB/s at large batches (85% of the 4,138 GB/s copy
    # ceiling), 43% at batch 1.
    text = solution(run, "llama31-70b-tp2-h100")
    assert "70–73% of the datasheet bandwidth (85% of the measured copy ceiling)" in text
    assert "70–85%" not in text
