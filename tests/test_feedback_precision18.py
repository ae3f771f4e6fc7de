"""Stop 59, third corpus: what the blind corpus AJ (code-first answers: short Python snippets
with `#` comments, flags and metric names inline) showed the tool saying wrongly when measured
unread after AH's and AI's fixes: three right seniors said to make a wrong claim, seven fluent
wrong answers let through. The texts here are written for the tests, not copied from it."""

from __future__ import annotations

from feedback_probes import claimed


def test_a_chunk_given_the_whole_target_named_as_the_mistake_is_no_claim() -> None:
    text = ("Giving the chunk the whole 25 ms ignores the decode tokens and gives ~630, which "
            "blows TPOT every step.")
    assert "chunk-gets-whole-target" not in claimed("chunked-prefill-tpot", "trade-off", text)


def test_each_users_kv_private_beside_shared_weights_is_no_claim_that_kv_sets_the_step() -> None:
    text = ("Weights are 76% of a full-batch step's bytes and are shared by the batch; only each "
            "user's KV is private.")
    assert "kv-read-sets-the-step" not in claimed("llama2-70b-mi300x", "3c-explain", text)


def test_prompt_tokens_watched_against_the_chat_cap_is_no_sizing_on_prompts() -> None:
    text = ("On the chat tier, `request_prompt_tokens` p99 should stay under the chat cap: a "
            "long request landing there means the router leaked.")
    assert "prompt-length-histogram" not in claimed("long-context-tier", "operations", text)


def test_offloading_the_idle_experts_is_a_wrong_claim() -> None:
    text = ("Any token touches 8/256 = 3% of the routed experts, so offloading the idle 97% to "
            "host DRAM keeps the GPU doing useful work.")
    assert "offload-cold-experts" in claimed("deepseek-v3-mla-h200", "experts-and-levers", text)


def test_history_served_from_the_prefix_cache_as_free_is_a_wrong_claim() -> None:
    text = ("Earlier turns are served from the prefix cache, so they're shared and effectively "
            "free per session.")
    assert "history-shared-by-prefix-cache" in claimed("multi-turn-growth", "why-overstated",
                                                       text)


def test_vllm_keeping_blocks_back_to_max_model_len_is_a_wrong_claim() -> None:
    text = ("The scheduler can't know the lengths when it admits them, so vLLM keeps enough "
            "blocks back for each to reach max_model_len (8,192).")
    assert "vllm-reserves-max-model-len" in claimed("paged-blocks-vllm", "why-paging", text)
