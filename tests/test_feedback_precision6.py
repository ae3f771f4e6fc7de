"""The ninth blind feedback review (/tmp/w4/review9.md): a right answer that compares the copy's
tens of ms with the prefill's 240 ms is not said to underestimate recompute; "always recompute"
and "the host memory tier is useless" are claims; a one-figure answer the candidate's own
numbers round to ("~7x" for 7.2) is carried forward; a mistake moving a wrong input the other
way from the candidate's own answer is not named; k × α is named; a share above 100% is said
impossible and earns no carried credit. Each test failed before."""

from __future__ import annotations

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.claims import claims_made
from trainer.marking.prose import concept_credit
from trainer.reading.exact import Fraction


def marked(drill_id: str, answers: dict[str, str]) -> dict[str, Mark]:
    return mark_sheet(AnswerKey(find_drill(drill_id)[0]), answers)


def claimed(drill_id: str, step_id: str, text: str) -> list[str]:
    step = find_drill(drill_id)[0].step(step_id)
    return [made.claim.id for made in claims_made(step, text)]


def test_the_copys_tens_of_ms_beside_the_prefills_240_is_no_claim() -> None:
    said = "A ~1 GiB copy is tens of ms versus ~240 ms of prefill compute."
    assert claimed("swap-or-recompute", "policy", said) == []


def test_always_recomputing_is_a_claim() -> None:
    said = "Always recompute, copying KV over PCIe is never worth it."
    assert "recompute-wins-for-gqa" in claimed("swap-or-recompute", "policy", said)


def test_a_useless_host_memory_tier_is_a_claim() -> None:
    said = "The host memory tier is useless for serving because DRAM is too slow."
    assert "host-tier-unused" in claimed("swap-or-recompute", "policy", said)


def test_a_one_figure_answer_its_own_numbers_round_to_is_carried() -> None:
    # 36 sessions ÷ the 5 answered for all-attention = 7.2, typed "~7x"
    marks = marked("hybrid-state-kv", {"sessions": "36", "sessions-all-attention": "5",
                                       "hybrid-advantage": "~7x"})
    assert marks["hybrid-advantage"].carried_forward


def test_a_mistake_against_the_direction_of_a_wrong_input_is_not_named() -> None:
    # 512 KiB a token answered (4× the 128): K and V counted once (half) is not what gave a
    # transfer of half the key's
    marks = marked("disaggregated-prefill", {"kv-per-token": "512 KiB",
                                             "kv-per-request": "2048 MiB",
                                             "transfer-ib": "5.4 ms"})
    assert "forgot-kv-factor-2" not in marks["transfer-ib"].misconceptions


def test_k_times_alpha_is_named() -> None:
    mark = marked("speculative-decoding", {"expected-tokens": "3.2"})["expected-tokens"]
    assert "linear-acceptance" in mark.misconceptions and "Close" not in mark.feedback


def test_a_share_above_the_whole_is_said_impossible() -> None:
    mark = marked("decode-roofline-vs-measured", {"b96-fraction": "245%"})["b96-fraction"]
    assert "at most 100%" in mark.feedback and not mark.carried_forward


def credited(drill_id: str, concept_id: str, text: str) -> tuple[Fraction, str]:
    drill = find_drill(drill_id)[0]
    concept = load_rubric(drill.rubric).concept(concept_id)
    assert concept is not None
    return concept_credit(concept, text)


def test_a_mention_beside_a_figure_of_its_own_is_not_said_unquantified() -> None:
    said = "I'd plan on a measured effective bandwidth, e.g. ~3.4 TB/s at batch 64, not 4.8."
    credit, note = credited("decode-roofline-vs-measured", "plan-measured-fraction", said)
    assert credit == 0.5 and note.endswith("with figures the rubric does not list")


def test_a_ratio_right_only_before_rounding_says_so() -> None:
    # 36.3 ÷ 4.61 sessions = 7.87 before the floors; the whole counts 36 ÷ 4 give 9
    mark = marked("hybrid-state-kv", {"hybrid-advantage": "8"})["hybrid-advantage"]
    assert mark.verdict == "correct"
    assert "Right for the value before rounding, 7.87; the figures as rounded give 9." \
        in mark.feedback


def test_mamba_said_to_save_only_compute_is_a_claim() -> None:
    said = "Mamba only saves compute, not memory, so it scales exactly like a transformer."
    assert "mamba-saves-only-compute" in claimed("hybrid-state-kv", "how-concurrency-scales",
                                                 said)


def test_long_sessions_priced_like_chat_is_a_claim() -> None:
    said = "Charge the long tier per token like chat: they already pay for the tokens they send."
    assert "priced-like-chat" in claimed("long-context-tier", "pricing", said)


def test_per_token_pricing_said_to_miss_the_kv_is_no_claim() -> None:
    said = "Per-token pricing alone misses the KV a long session pins; charge by KV-seconds."
    assert "priced-like-chat" not in claimed("long-context-tier", "pricing", said)


def test_a_plan_said_never_to_go_stale_is_a_claim() -> None:
    said = "Nothing goes stale as long as the model doesn't change."
    assert "sizing-never-stale" in claimed("multi-turn-growth", "policy", said)


def test_a_round_figure_that_a_mistake_gives_to_half_a_percent_is_named() -> None:
    # 80 − 16 − 4 = 60 GB: all of HBM used (59.94 with the weights' 16.06 GB)
    mark = marked("multi-turn-growth", {"kv-budget": "60 GB"})["kv-budget"]
    assert mark.misconceptions == ("full-hbm",) and not mark.certain


def test_a_terse_verb_and_colon_says_what_the_verb_does() -> None:
    credit, note = credited("mixtral-moe-decode", "moe-saves-flops-not-memory",
                            "saves: FLOPs (2×12.9B vs 2×46.7B per token).")
    assert credit == 1 and "saves" in note


def test_a_draft_sized_with_the_targets_head_dim_hedges_the_fp32_reading() -> None:
    # 64 KiB a token for the draft: fp32, or the target's head_dim of 128 for the draft's 64
    mark = marked("speculative-decoding", {"draft-kv-per-token": "64 KiB"})["draft-kv-per-token"]
    assert "one reading of many" in mark.feedback and not mark.certain


def test_half_the_parameters_is_also_said_as_one_byte_each() -> None:
    mark = marked("speculative-decoding", {"draft-weights": "1.2 GB"})["draft-weights"]
    assert "or all of them at 1 byte each: an 8-bit copy" in mark.feedback


def test_never_on_a_numeric_step_is_wrong_not_unreadable() -> None:
    mark = marked("speculative-decoding", {"spec-breakeven": "never"})["spec-breakeven"]
    assert mark.verdict == "wrong" and "as no finite value" in mark.feedback


def test_no_limit_is_not_read_as_zero() -> None:
    mark = marked("speculative-decoding", {"spec-breakeven": "no limit"})["spec-breakeven"]
    assert "read as 0" not in mark.feedback
