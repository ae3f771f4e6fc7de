"""Expert pass 59 (233 text answers and 38 numeric ones written before grading, on the tree of
the end of stop 67, none read here before): red flags wrong 6 of 55, wrong answers missed 43
of 93, credit statements false 31 of 717, levels clearly wrong 6, numeric explanations wrong 0
of 12. Its false flags and the confidently wrong answer it found rated Senior, each said here
in other words than the expert's, through the real matcher."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from trainer.drills.loader import find_drill
from trainer.marking.claims import claims_made


def _claims(drill_id: str, step_id: str, text: str) -> list[str]:
    step = find_drill(drill_id)[0].step(step_id)
    return [made.claim.id for made in claims_made(step, text)]


def test_what_would_seem_harmless_and_is_then_denied_is_no_claim() -> None:
    # (W1: "Raising max_model_len everywhere would seem harmless because vLLM pages - it isn't")
    text = ("A 128k cap for every pool might seem harmless since vLLM pages the cache; it is "
            "not: one long user displaces 32 chat sessions.")
    assert _claims("long-context-tier", "pool-policy", text) == []


def test_a_global_cap_said_to_be_harmless_is_still_flagged() -> None:
    assert _claims("long-context-tier", "pool-policy",
                   "Raising max_model_len to 128k everywhere seems fine because vLLM pages.") \
        == ["raise-cap-for-everyone"]


def test_a_partial_block_said_not_to_be_shared_before_the_shared_share_is_no_claim() -> None:
    # (W2: "the partial last block can't be shared: … 1,792 of 2,000 tokens are shared")
    text = ("The last partial block is never shared: at 256-token blocks only 1,792 of the "
            "2,000 prompt tokens are shared.")
    assert "partial-block-shared" not in _claims("prefix-caching", "block-size-why", text)


def test_a_partial_block_said_to_be_shared_is_still_flagged() -> None:
    assert "partial-block-shared" in _claims(
        "prefix-caching", "block-size-why",
        "The partial last block gets shared as well: 2,000 of 2,000 tokens shared.")


def test_a_cost_set_beside_the_cost_in_one_go_is_no_claim_that_bigger_is_better() -> None:
    # (W4: "Costs the pasting user ~26 x 25 ms = 650 ms TTFT vs 252 ms in one go")
    text = "The pasting user waits about 650 ms for the first token, versus 252 ms in one go."
    assert "bigger-chunks-always-better" not in _claims("chunked-prefill-tpot", "trade-off", text)


def test_a_user_holding_a_kv_slot_through_think_time_is_flagged() -> None:
    # (X8 and L1: "every online user holds a KV slot for the session, think time included, so
    # we need 2,000 slots, about 20 GPUs" was credited and rated Senior)
    text = ("Each online user holds a KV slot for the whole session, think time included, so "
            "size for 2,000 slots.")
    assert "thinking-users-hold-kv" in _claims("littles-law-capacity", "plan", text)


def test_a_lever_wrong_of_the_drills_model_and_right_of_the_target_is_not_flagged(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (W3: "FP8 weights would roughly double it again" flagged on Qwen3-30B-A3B, whose FP8
    # weights take 17 sessions to 93, as the tool's own worked solution says)
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("policy: |\n  Cap the context at the p99. FP8 weights would about double "
                     "the sessions, since the weights fill most of the card.\n", encoding="utf-8")
    flagged = []
    for target in ((), ("--model", "qwen3-30b-a3b")):
        said = json.loads(run("grade", "llama31-8b-h100", "--answers", str(sheet), *target,
                              "--json", ok=False).output)
        flagged.append([claim["id"] for claim in said["rubric"]["wrong_claims"]])
    assert flagged == [["fp8-weights-double-sessions"], []]


def test_heads_that_cannot_go_below_one_per_gpu_are_credited_as_replication(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (W5: "they can't go below one per GPU … TP=16 duplicates each: 504 KiB per token for
    # the job vs 252" earned nothing on assumptions)
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("why-less: |\n  KV heads cannot go below one per GPU, so TP=16 duplicates "
                     "them: 504 KiB per token for the job against 252 KiB.\n", encoding="utf-8")
    said = json.loads(run("grade", "llama31-405b-h200-tp", "--answers", str(sheet), "--json",
                          ok=False).output)
    assert said["rubric"]["dimensions"]["assumptions"]["score"] > 0


def test_a_re_targeted_flag_with_nothing_general_to_say_names_its_claim() -> None:
    # (M1: "Red flag: an interviewer flags it; the worked solution gives this target's
    # figures" gave no reason at all)
    from trainer.marking.claims import ClaimMade
    from trainer.records import replace

    claim = find_drill("llama31-8b-h100")[0].step("policy").wrong_claims[0]
    bare = replace(claim, id="fp8-weights-double-sessions",
                   says="16 GB of weights against 52 GB of KV: 15% more sessions.")
    said = ClaimMade(bare, "policy").retargeted_sentence()
    assert said.startswith("an interviewer flags the claim 'fp8 weights double sessions'")


# Wrong answers the expert found unflagged (X1, X3, X10, X12, X14, and two partly right ones), said
# here in other words, each beside the right answer to the same question, which stays unflagged.
@pytest.mark.parametrize("drill_id, step_id, claim, wrong, right", [
    ("llama2-70b-mi300x", "2c-why", "gqa-caches-keys-only",
     "With GQA the server keeps only the keys in the cache and rebuilds the values when "
     "needed, which halves it.",
     "GQA keeps K and V for 8 KV heads instead of 64, so the cache is 8x smaller."),
    ("llama31-8b-h100", "policy", "paged-cache-spills-to-cpu",
     "No cap needed: paged attention spills the KV cache to CPU memory on its own when the "
     "GPU fills.",
     "Cap max_model_len at the p99; paged attention allocates blocks as tokens arrive but "
     "does not spill to the CPU by itself."),
    ("paged-blocks-vllm", "why-paging", "x-is-a-hard-cap",
     "The 53x in the log is a hard ceiling: vLLM will never run more than 53 requests at once.",
     "The 53x is tokens divided by max_model_len, a worst case, not a cap: short requests run "
     "hundreds at once."),
    ("prefix-caching", "when-not", "prefix-always-helps",
     "Prefix caching always roughly halves memory whatever the workload.",
     "It buys little when the shared prefix is a small share of each session, and nothing "
     "when per-user text comes first."),
    ("llama31-8b-h100", "policy", "window-caps-llama-kv",
     "Past 4k a session costs nothing more because Llama's sliding window caps the KV at "
     "4,096 tokens.",
     "Llama-3.1-8B has no sliding window: every layer keeps the whole context, so a 32k "
     "session holds 8x the KV."),
    # partly right answers' one wrong claim in mild words (two of the 27)
    ("speculative-decoding", "when-it-pays", "speculation-helps-at-any-batch",
     "Speculation pays at any batch size: the draft is cheap, so it speeds up big batches as "
     "much as batch 1.",
     "It pays at low batch, where the step is memory-bound; near the ridge the verification "
     "FLOPs eat the gain."),
    ("prefix-caching", "block-size-why", "big-blocks-buy-nothing",
     "Bigger blocks buy nothing at all; they only waste the tail.",
     "Bigger blocks buy shorter block tables and bigger kernel tiles, at the cost of a larger "
     "unshared tail."),
])
def test_a_wrong_claim_is_flagged_and_the_right_answer_beside_it_is_not(
        drill_id: str, step_id: str, claim: str, wrong: str, right: str) -> None:
    assert claim in _claims(drill_id, step_id, wrong)
    assert _claims(drill_id, step_id, right) == []
