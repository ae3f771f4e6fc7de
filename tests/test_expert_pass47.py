"""Expert pass 47 (grade feedback on re-targeted drills), the findings fixed after stop 62:
a count asked exactly is on a knife edge only within its inputs' own rounding (W6); a ratio
over the key's other is carried where the candidate typed that figure for another step (W5);
a carried value names the answers it follows from, not one another answer overrides (W2); an
MoE verification priced as one decode step is a mistake of its own (W4)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import flat

Run = Callable[..., Result]
SHEETS = Path(__file__).parent / "corpus" / "feedback_sheets_pass47"


def _graded(run: Run, tmp_path: Path, sheet: str, *args: str) -> str:
    path = tmp_path / "sheet.yaml"
    path.write_text(sheet, encoding="utf-8")
    return " ".join(flat(run("grade", *args, "--answers", str(path), ok=False).output).split())


def test_a_count_asked_exactly_is_not_rounded_up_past_its_inputs(run: Run,
                                                                 tmp_path: Path) -> None:
    # (W6) 2 × (141 × 0.92 − 4) − 72.66 = 178.78 GB ÷ 335,544,320 B = 532.81: 533 needs
    # 178.85 GB, and the step says "Exactly"
    said = _graded(run, tmp_path, "sessions-released-checkpoint: 533\n",
                   "llama31-70b-tp2-h100", "--variant", "144962", "--gpu", "h200")
    assert "sessions-released-checkpoint 533 wrong" in said


def test_a_count_asked_exactly_keeps_the_edge_its_checkpoints_rounding_makes(
        run: Run, tmp_path: Path) -> None:
    # the H200 default: 72.66 GB gives 257.998; the checkpoint's exact 72,655,052,800 B, 258.006
    said = _graded(run, tmp_path, "sessions-released-checkpoint: 258\n",
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
    said = _graded(run, tmp_path, "decode-bytes: 8.1 GB\ndecode-flops: 8.03 GFLOP\n",
                   "prefill-vs-decode", "--variant", "558992")
    assert "one FLOP counted a parameter where a multiply-add is two" in said
    assert "8-bit copy" not in said


def test_an_moe_verification_priced_as_one_decode_step_is_named(run: Run,
                                                                tmp_path: Path) -> None:
    # (W4) Qwen3-30B-A3B on an H100: 4 × 0.4961 + 1.9362 = 3.92 ms prices the verification
    # as one decode step; its 5 tokens touch 1 − (120/128)^5 = 27.6% of the experts
    said = _graded(run, tmp_path, "round-time: 3.92 ms\n", "speculative-decoding", "--model",
                   "qwen3-30b-a3b", "--gpu", "h100")
    assert "round-time 3.92 ms wrong [moe-verify-as-one-step]" in said
    assert "its 5 tokens touch 27.6% of the experts; a decode step's 1 token, 6.25%" in said
    assert "embedding-table-read" not in said
