"""Expert pass 74 (172 text answers on all 43 text steps, written before grading, graded on the
tree after pass 73's first fixes): 6 of 86 right or hedged answers red-flagged (5 of them
hedged: "A common take is …", "the colleague makes the usual assumption that …", "2,000 slots
would be right if …"), 1 flag naming a claim not made, 22 of 43 partly right and 1 of 43 wrong
answers missed, 11 of 388 credit statements false, 2 printed sentences wrong. Fixed here: a
common take, worry or guess, and a usual assumption a few words further on, are others'; a
claim that is the condition of a "would … if" is supposed, not said; an "if … were" hides only
the claim in its clause or what "would" follow, not a rule the main clause states ("if it were
below 1, vLLM starts anyway"); MQA, which does shorten the step as a retrained model, is no
wrong "improves both"; the copy ceiling named beside a measured plan; GPU memory full is no
alert at 100% KV usage; and six claims the partly right and wrong answers made."""

from __future__ import annotations

import pytest

from tests.expert_claims import claims_named, claims_of_answer
from trainer.drills.loader import find_drill

CORPUS = "expert_pass74_answers.yaml"


def _said(key: str) -> list[str]:
    return claims_of_answer(CORPUS, key)


@pytest.mark.parametrize("key", [
    "decode-roofline-vs-measured/batch1-why/R:A009",  # F1
    "decode-roofline-vs-measured/batch1-why/H:A012",
    "hybrid-state-kv/how-concurrency-scales/H:A032",  # F2
    "hybrid-state-kv/how-concurrency-scales/R:A029",
    "littles-law-capacity/plan/H:A036",  # F3
    "littles-law-capacity/plan/R:A033",
    "llama2-70b-mi300x/1b/R:A037", "llama2-70b-mi300x/1b/H:A040",
    "llama2-70b-mi300x/3c-explain/R:A049", "llama2-70b-mi300x/3c-explain/H:A052",
    "llama2-70b-mi300x/4f/H:A056",  # F4
    "llama2-70b-mi300x/4f/R:A053",
    "llama31-70b-tp2-h100/per-gpu-vs-total-explain/H:A076",  # F5
    "llama31-70b-tp2-h100/per-gpu-vs-total-explain/R:A073",
    "long-context-tier/operations/R:A101", "long-context-tier/operations/H:A104",
    "multi-turn-growth/why-overstated/R:A113", "multi-turn-growth/why-overstated/H:A116",
    "paged-blocks-vllm/refusal/R:A137", "paged-blocks-vllm/refusal/H:A140",
    "speculative-decoding/when-it-pays/H:A168",  # F6
    "speculative-decoding/when-it-pays/R:A165",
    "swap-or-recompute/policy/R:A169", "swap-or-recompute/policy/H:A172",
])
def test_right_and_hedged_answers_claim_nothing(key: str) -> None:
    assert _said(key) == []


@pytest.mark.parametrize(("key", "claim"), [
    ("llama2-70b-mi300x/1b/P:A038", "generated-tokens-held-apart"),
    ("multi-turn-growth/why-overstated/P:A114", "turns-kept-between-requests"),
    ("paged-blocks-vllm/refusal/P:A138", "vllm-never-refuses"),
    ("swap-or-recompute/policy/W:A171", "swap-takes-seconds"),
    ("llama2-70b-mi300x/3c-explain/P:A050", "weights-cached-on-chip"),
    ("littles-law-capacity/plan/P:A034", "prefix-blocks-pinned-per-conversation"),
])
def test_the_missed_claim_is_named(key: str, claim: str) -> None:
    assert claim in _said(key)


def test_gpu_memory_full_is_no_alert_at_full_kv_usage() -> None:  # F7
    said = _said("long-context-tier/operations/W:A103")
    assert said == ["gpu-memory-says-full"]


@pytest.mark.parametrize("text", [
    "A common worry is that verifying 5 tokens costs 5 target steps; at batch 1 it costs ~1.",
    "The usual take is that verification costs a step per token. It costs about one step.",
])
def test_a_common_take_is_others(text: str) -> None:
    assert claims_named("speculative-decoding", "when-it-pays", text) == []


def test_a_claim_said_outright_is_still_made() -> None:
    said = claims_named("speculative-decoding", "when-it-pays",
                        "Verifying 5 tokens costs 5 target steps, so it never pays here.")
    assert said


def test_what_would_follow_a_counterfactual_is_still_supposed() -> None:
    text = "If TP were 16, each GPU would hold half a head, so the KV per GPU would halve."
    assert claims_named("llama31-405b-h200-tp", "why-less", text) == []


def test_the_improves_both_flag_keeps_mqa_as_the_solution_does() -> None:  # S1
    drill = find_drill("llama2-70b-mi300x")[0]
    claim = next(c for c in drill.step("4f").wrong_claims
                 if c.id == "another-option-improves-both")
    assert "MQA would shorten the step only as a retrained model" in " ".join(claim.says.split())


def test_the_tp_flag_says_tp_splits_each_token_across_the_pair() -> None:  # S2
    drill = find_drill("llama2-70b-mi300x")[0]
    claim = next(c for s in drill.steps for c in s.wrong_claims if c.id == "tp-copies-weights")
    assert "cannot split" not in claim.says and "pair still holds all of it" in claim.says


def test_a_common_word_apart_from_a_belief_gives_nothing_away() -> None:
    said = claims_named("littles-law-capacity", "plan",
                        "Standard practice is to take 2,000 slots, one per online user, so buy "
                        "about 20 GPUs.")
    assert "online-users-as-slots" in said
