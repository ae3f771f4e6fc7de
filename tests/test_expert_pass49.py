"""Expert pass 49 (what `grade` says of wrong numbers on the twelve drills pass 47 left out: 25
sheets, 281 steps, 136 causes named, 131 right; sheets and findings in
tests/corpus/feedback_sheets_pass49): Little's law with the think time alone is a mistake of
its own (W1); a carried count names both answers it needs, not one that gives another value
(W2); a count of chunks is a ceiling asked exactly (W3); a re-targeted model sized with the
drill's own model's figure is said so (M3); the step before's figure kept is said so (M6); a
DP-attention count rounded up per rank is named so (M8)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import flat, graded_text

Run = Callable[..., Result]
SHEETS = Path(__file__).parent / "corpus" / "feedback_sheets_pass49"


def test_open_conversations_from_the_think_time_alone_are_named(run: Run,
                                                                tmp_path: Path) -> None:
    # (W1) 64 in flight × 45 s ÷ 15 s = 192; the whole cycle gives 64 × 60 ÷ 15 = 256
    said = graded_text(run, tmp_path, "sessions: 64\nopen-conversations: 192\n",
                   "multi-turn-growth")
    assert "open-conversations 192 wrong [think-time-only]" in said
    assert "context = 8,192" not in said


def test_a_carried_count_names_the_bytes_it_needs_beside_the_budget(run: Run) -> None:
    # (W2) 577 GB ÷ (32,768 × 516,096 B) = 34.1; the budget alone gives 68
    said = flat(run("grade", "llama31-405b-h200-tp", "--answers", str(SHEETS / "S22.yaml"),
                    ok=False).output)
    assert "It follows from your answer to kv-budget-tp8, which gives 34" not in said
    assert "It follows from your answers to bytes-per-token-tp8 and kv-budget-tp8" in said


def test_too_few_chunks_to_cover_the_document_are_wrong(run: Run, tmp_path: Path) -> None:
    # (W3) 25 chunks of 320 tokens cover 8,000 of the 8,192
    said = graded_text(run, tmp_path, "chunk-steps: 25\n", "chunked-prefill-tpot")
    assert "chunk-steps 25 wrong [rounded-down]" in said


def test_chunks_from_the_candidates_own_chunk_size_are_right(run: Run, tmp_path: Path) -> None:
    # a C of 330, right within its tolerance, covers 8,192 tokens in 25 chunks
    said = graded_text(run, tmp_path, "max-chunk: 330\nchunk-steps: 25\n", "chunked-prefill-tpot")
    assert "chunk-steps 25 correct" in said


def test_a_retarget_sized_with_the_drills_own_models_layers_says_whose(run: Run,
                                                                      tmp_path: Path) -> None:
    # (M3) Qwen3-8B has 36 layers; 128 KiB is Llama-3.1-8B's 32
    said = graded_text(run, tmp_path, "bytes-per-token: 128 KiB\n", "long-context-tier", "--model",
                   "qwen3-8b", "--gpu", "h200")
    assert "as if the model had 32 layers (Llama-3.1-8B's, the drill's own model)" in said


def test_the_step_befores_figure_kept_is_said_so_not_a_chance_mistake(run: Run) -> None:
    # (M6) 64 is the in-flight count of the step before, not query heads or 126 layers
    said = flat(run("grade", "multi-turn-growth", "--answers",
                    str(SHEETS / "probes" / "q02.yaml"), ok=False).output)
    assert "It is the answer to sessions (64 sequences), not what this step asks for" in said
    assert "query-heads" not in said


def test_a_dp_attention_count_rounded_up_per_rank_is_named_so(run: Run) -> None:
    # (M8) 66.88 GB ÷ 8.456 GB = 7.91 a rank, rounded up to 8: 16 × 8 = 128, not 112
    for sheet in (SHEETS / "probes" / "q13.yaml", SHEETS / "S23.yaml"):
        said = flat(run("grade", "llama31-405b-h200-tp", "--variant", "129344", "--answers",
                        str(sheet), ok=False).output)
        assert "sessions-dp-attention 128 wrong [rounded-up]" in said, sheet.name
