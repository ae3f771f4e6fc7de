"""Expert pass 51 (re-targeted drills at newer models, cards and hand-written config.json files:
57 renders, 95 refusals, about 340 numbers recomputed, all right but one rounding): a config's
shared expert and dense first layer are said (W1); a single expert is a dense MLP (W2);
Llama-4's chunked layers are not called windowed (M1); an MoE target's verification is named
beside the draft's read (M2); Mistral past its positions says so (M3); 55.17 GB is 55.2 (N1);
Gemma's caveat once (N2); the engine's cap once (N3); GPT-OSS keeps its LM head in 16 bits
too (N7)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import flat, refusal_text

Run = Callable[..., Result]
CONFIGS = Path(__file__).parent / "corpus" / "configs_pass51"


def _solution(run: Run, *args: str) -> str:
    return flat(run("solution", *args).output)


def test_a_configs_dense_first_layer_is_said(run: Run) -> None:
    # (W1) GLM-4.5-Air: first_k_dense_replace 1, so 45 of its 46 layers carry experts
    said = _solution(run, "mixtral-moe-decode", "--model", str(CONFIGS / "glm45air"),
                     "--gpu", "mi300x")
    assert "45 of its 46 layers (the other one dense) have an MLP of 128 experts" in said


def test_a_configs_shared_expert_is_read_by_every_token(run: Run) -> None:
    # (W1) Qwen1.5-MoE's shared expert (shared_expert_intermediate_size 5,632)
    said = _solution(run, "mixtral-moe-decode", "--model", str(CONFIGS / "qwen15-moe-a27b"))
    assert "A lone token goes through 4 of 60 routed experts in each layer, and through its 1 " \
           "shared expert too." in said


def test_the_question_lists_the_dense_layer_among_what_a_token_uses(run: Run) -> None:
    said = flat(run("show", "mixtral-moe-decode", "--model", str(CONFIGS / "glm45air"),
                    "--gpu", "mi300x").output)
    assert "1 shared expert, the dense MLP of its one other layer and 8 routed experts per " \
           "MoE layer" in said


def test_a_single_expert_is_a_dense_mlp(run: Run) -> None:
    # (W2) num_experts 1: JambaMLP, not JambaMoE; the refusal's reason is its two KV layers
    said = refusal_text(run, "littles-law-capacity", "--model",
                        str(CONFIGS / "jamba-reasoning-3b"))
    assert "keeps KV on 2 of its 28 layers" in said and "mixture of experts" not in said


def test_llama4s_chunked_layers_are_not_called_windowed(run: Run) -> None:
    # (M1) attention_chunk_size 8,192: a layer holds the tokens of its current chunk
    said = _solution(run, "mixtral-moe-decode", "--model", "llama-4-scout", "--gpu", "b200")
    assert "per session, the chunked-attention layers holding only their current chunk's " \
           "tokens" in said
    assert "the windowed layers holding only their window" not in said


def test_an_moe_targets_verification_is_named_beside_the_drafts_read(run: Run) -> None:
    # (M2) 1 − (124/128)^5 = 14.7% of the experts, 12.1 GB, not one token's 3.1%
    said = refusal_text(run, "speculative-decoding", "--model", "gpt-oss-120b", "--gpu", "h200")
    assert "verifying 5 tokens touches 14.7% of its experts (12.1 GB), not the 3.1% one token " \
           "does, so at k = 4 and acceptance 0.8 speculation would run at 0.64× the speed" in said


def test_mistral_past_its_positions_says_so(run: Run) -> None:
    # (M3) variant 2: 65,536 tokens, twice Mistral-7B-v0.1's 32,768 positions
    said = _solution(run, "sliding-window-kv", "--variant", "2")
    assert "Mistral-7B-v0.1 has 32,768 positions (max_position_embeddings): vLLM refuses a " \
           "max_model_len of 65,536" in said


def test_gemmas_caveat_is_said_once(run: Run) -> None:
    # (N2)
    said = _solution(run, "sliding-window-kv", "--variant", "2")
    assert said.count("nobody serves it this long") == 1


def test_one_cards_kv_is_rounded_from_the_exact_weights(run: Run) -> None:
    # (N1) 141 × 0.92 − 4 − 70.554 = 55.17 GB
    said = _solution(run, "llama31-70b-tp2-h100", "--variant", "2")
    assert "One card would leave only 55.2 GB for KV" in said


def test_the_engines_cap_is_said_once(run: Run) -> None:
    # (N3) said in the sessions paragraph as --max-num-seqs: no closing paragraph again
    said = _solution(run, "hybrid-state-kv", "--gpu", "b200")
    assert "The engine's cap" not in said and "max-num-seqs" in said


def test_gpt_oss_keeps_its_lm_head_in_16_bits_too(run: Run) -> None:
    # (N7) modules_to_not_convert: the untied LM head (201,088 × 2,880) stays bf16
    said = _solution(run, "mixtral-moe-decode", "--model", "gpt-oss-120b", "--gpu", "h200")
    assert "What is left in 16 bits (attention, router, embedding and LM head)" in said


def test_a_release_read_from_its_config_is_pitched_at_its_publishers_count(run: Run) -> None:
    # (N6) GPT-OSS-20B from its config.json: OpenAI's 3.61B, as the preset says, not 4.19B
    config = Path(__file__).parent / "corpus" / "configs" / "gpt-oss-20b"
    from_config = _solution(run, "mixtral-moe-decode", "--model", str(config))
    assert "is a 3.61B model at inference time" in from_config
    assert "is a 3.61B model at inference time" in _solution(
        run, "mixtral-moe-decode", "--model", "gpt-oss-20b")
