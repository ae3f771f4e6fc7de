"""Expert pass 47 (grade feedback on re-targeted drills), the findings fixed after stop 62:
a count asked exactly is on a knife edge only within its inputs' own rounding (W6); a ratio
over the key's other is carried where the candidate typed that figure for another step (W5);
a carried value names the answers it follows from, not one another answer overrides (W2); an
MoE verification priced as one decode step is a mistake of its own (W4), as are a batch read as
the active share (M2), the draft's KV left out (M3) and a tail sized by memory alone (M5); a
mistake the step lists that gives the number is named beside an unrelated wrong input (M6);
sessions follow from the live tokens answered (M1); a carried value names only the answers that
enter it (N2)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import flat, graded_text

Run = Callable[..., Result]
SHEETS = Path(__file__).parent / "corpus" / "feedback_sheets_pass47"


def test_a_count_asked_exactly_is_not_rounded_up_past_its_inputs(run: Run,
                                                                 tmp_path: Path) -> None:
    # (W6) 2 × (141 × 0.92 − 4) − 72.66 = 178.78 GB ÷ 335,544,320 B = 532.81: 533 needs
    # 178.85 GB, and the step says "Exactly"
    said = graded_text(run, tmp_path, "sessions-released-checkpoint: 533\n",
                   "llama31-70b-tp2-h100", "--variant", "144962", "--gpu", "h200")
    assert "sessions-released-checkpoint 533 wrong" in said


def test_a_count_asked_exactly_keeps_the_edge_its_checkpoints_rounding_makes(
        run: Run, tmp_path: Path) -> None:
    # the H200 default: 72.66 GB gives 257.998; the checkpoint's exact 72,655,052,800 B, 258.006
    said = graded_text(run, tmp_path, "sessions-released-checkpoint: 258\n",
                   "llama31-70b-tp2-h100", "--gpu", "h200")
    assert "sessions-released-checkpoint 258 correct" in said


def test_a_ratio_over_the_copy_typed_for_another_step_is_carried(run: Run) -> None:
    # (W5) 3.8125 MiB ÷ 70,272 B (one copy of the latent, typed as the node's 68.6 KiB where
    # the per-GPU answer split it 8 ways) = 56.9
    said = " ".join(flat(run("grade", "deepseek-v3-mla-h200", "--gpu", "b200", "--answers",
                             str(SHEETS / "s17_mla_b200.yaml"), ok=False).output).split())
    assert "It follows from your answer to mha-bytes-per-token, which gives 56.9 here: " \
           "carried forward" in said


def test_a_carried_count_names_the_answer_it_follows_from_not_one_overridden(run: Run) -> None:
    # (W2) 51.1 GB ÷ 512 MiB (the bytes per sequence typed) = 95; the 112 KiB per token
    # typed would give 51.1 GB ÷ 3.77 GB = 13
    said = " ".join(flat(run("grade", "hybrid-state-kv", "--gpu", "b200", "--answers",
                             str(SHEETS / "s10_hybrid_b200.yaml"), ok=False).output).split())
    assert "It follows from your answers to bytes-per-sequence and kv-budget, which give 95 " \
           "sequences here: carried forward" in said


def test_a_flop_steps_halved_parameters_are_no_8_bit_copy_after_a_byte_step(
        run: Run, tmp_path: Path) -> None:
    # a byte step's candidates for the parameter count, cached, were handed to the FLOP step
    # of the same sheet with their reason ("an 8-bit copy"): 8.03 GFLOP is one FLOP counted
    # a parameter, 2 × 8.03 B parameters being 16.1 GFLOP
    said = graded_text(run, tmp_path, "decode-bytes: 8.1 GB\ndecode-flops: 8.03 GFLOP\n",
                   "prefill-vs-decode", "--variant", "558992")
    assert "one FLOP counted a parameter where a multiply-add is two" in said
    assert "8-bit copy" not in said


def test_an_moe_verification_priced_as_one_decode_step_is_named(run: Run,
                                                                tmp_path: Path) -> None:
    # (W4) Qwen3-30B-A3B on an H100: 4 × 0.4961 + 1.9362 = 3.92 ms prices the verification
    # as one decode step; its 5 tokens touch 1 − (120/128)^5 = 27.6% of the experts
    said = graded_text(run, tmp_path, "round-time: 3.92 ms\n", "speculative-decoding", "--model",
                   "qwen3-30b-a3b", "--gpu", "h100")
    assert "round-time 3.92 ms wrong [moe-verify-as-one-step]" in said
    assert "its 5 tokens touch 27.6% of the experts; a decode step's 1 token, 6.25%" in said
    assert "embedding-table-read" not in said


def test_a_batch_read_as_the_active_share_is_named_as_that_belief(run: Run,
                                                                 tmp_path: Path) -> None:
    # (M2) Qwen3-30B-A3B: 64 tokens touch 1 − (120/128)^64 = 98.4% of the experts; 6.08 GB is
    # one token's read, not an answer copied by mistake
    said = graded_text(run, tmp_path, "read-batch64: 6.08 GB\n", "mixtral-moe-decode", "--model",
                   "qwen3-30b-a3b", "--gpu", "h100")
    assert "read-batch64 6.08 GB wrong [batch-reads-active-share]" in said
    assert "not what this step asks for" not in said


def test_the_drafts_kv_left_out_is_named_before_a_unit_mix(run: Run, tmp_path: Path) -> None:
    # (M3) (72 − 6 − 61.064 − 1.192) GB ÷ 402.65 MB = 9.3 without the draft's 448 MiB
    said = graded_text(run, tmp_path, "sessions-with-draft: 9\n", "speculative-decoding",
                   "--model", "qwen3-30b-a3b", "--gpu", "h100")
    assert "sessions-with-draft 9 wrong [draft-kv-forgotten]" in said


def test_a_tail_sized_by_memory_alone_is_said_within_tolerance(run: Run, tmp_path: Path) -> None:
    # (M5) Qwen3-8B on an H200 at 32k: memory holds 23, the 20 ms TPOT 16; 2.16 is the former
    said = graded_text(run, tmp_path, "p99-qps: 2.16\n", "littles-law-capacity", "--model",
                   "qwen3-8b", "--gpu", "h200")
    assert "though 2.16 requests/s is what you get if you sized the batch by memory alone" \
        in said


def test_a_listed_mistake_that_gives_the_number_is_named_beside_an_unrelated_wrong_input(
        run: Run) -> None:
    # (M6) 8,784 B = 70,272 ÷ 8, the latent split; the wrong latent width (1152) would have
    # given 140,544 B, so it plays no part
    said = " ".join(flat(run("grade", "deepseek-v3-mla-h200", "--gpu", "b200", "--answers",
                             str(SHEETS / "s17_mla_b200.yaml"), ok=False).output).split())
    assert "bytes-per-token-per-gpu 8784 B wrong [mla-latent-split" in said


def test_sessions_worked_from_the_live_tokens_answered_follow_from_them(run: Run) -> None:
    # (M1) 184,900 ÷ 4,096 = 45.1: the floor of the candidate's own live tokens, no round-up
    said = " ".join(flat(run("grade", "llama31-8b-h100", "--model", "qwen3-8b", "--gpu", "h200",
                             "--answers", str(SHEETS / "s01_8b_qwen3-8b_h200.yaml"),
                             ok=False).output).split())
    assert "It follows from your answer to live-tokens, which gives 45 sequences here" in said
    assert "rounds it up" not in said



def test_a_speedup_from_the_plain_step_carries_beside_a_wrong_target_step(run: Run) -> None:
    # 3.2 tokens × 1.936 ms ÷ 3.92 ms = 1.58: the candidate's expected tokens and round time,
    # with the plain decode step, not their 18.3 ms target step
    said = " ".join(flat(run("grade", "speculative-decoding", "--model", "qwen3-30b-a3b",
                             "--gpu", "h100", "--answers",
                             str(SHEETS / "s13_spec_qwen3-30b_h100.yaml"),
                             ok=False).output).split())
    assert "speedup 1.58 wrong (carried forward)" in said
    assert "It follows from your answers to expected-tokens and round-time" in said


def test_a_round_worked_from_rounded_figures_names_the_verification_mistake(
        run: Run, tmp_path: Path) -> None:
    # 4 × 0.5 + 1.94 = 3.94 ms, the candidate's own rounded draft and decode steps: within 2%
    # of the 3.92 the mistake gives, named as the step lists it (lint finds it on an MoE)
    said = graded_text(run, tmp_path, "round-time: 4*0.5 + 1.94 = 3.94 ms\n",
                       "speculative-decoding", "--model", "qwen3-30b-a3b", "--gpu", "h100")
    assert "wrong [moe-verify-as-one-step]" in said


def test_turning_speculation_off_at_batch_1_is_no_red_flag_on_an_moe_target(
        run: Run, tmp_path: Path) -> None:
    # on Qwen3-30B-A3B the round loses (0.86×): off at batch 1 is the right call there
    text = ("'not here: the MoE verify of 5 tokens touches ~28% of experts vs ~6% for one, so "
            "it is slower than plain decode (0.86x). turn it off for moe at batch 1'\n")
    said = graded_text(run, tmp_path, f"when-it-pays: {text}", "speculative-decoding", "--model",
                   "qwen3-30b-a3b", "--gpu", "h100")
    assert "Red flag" not in said


def test_turning_speculation_off_at_batch_1_is_still_flagged_on_a_dense_target(
        run: Run, tmp_path: Path) -> None:
    said = graded_text(run, tmp_path, "when-it-pays: turn it off for latency-sensitive batch 1 "
                   "users, it only pays at high batch\n", "speculative-decoding")
    assert "Red flag: Low-batch, latency-sensitive traffic is where speculation pays most" \
        in said


def test_a_window_taken_as_the_whole_context_says_so(run: Run, tmp_path: Path) -> None:
    # (N5) 32,768 tokens held is Mistral's context: no window at all, not "a power of two"
    said = graded_text(run, tmp_path, "mistral-tokens-held: 32768\n", "sliding-window-kv",
                       "--gpu", "l40s")
    assert "as if the window were 32,768 tokens (the whole context: no window at all)" in said
