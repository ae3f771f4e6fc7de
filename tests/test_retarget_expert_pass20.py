"""The twentieth expert pass (/tmp/w4/expert20.md): an MXFP4 MoE taken for its active share is
priced at what a token reads, so the key names the mistake at the drill's own active figure; a
drill about a batch sharing the weight read refuses a card that holds one sequence; the
flagship refuses a target with no 32k session; a refusal points a 70B at the TP=2 drill and
Gemma-2-9B at the windows drill. Each test fails on what was printed before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import flat

Run = Callable[..., Result]


def _refusal(run: Run, *args: str) -> str:
    result = run("show", *args, ok=False)
    assert result.exit_code == 2
    return flat(result.output)


def test_the_active_share_taken_for_the_weights_is_named_at_the_drills_own_figure(
        run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("resident-weights: 3.72 GB\n", encoding="utf-8")
    result = run("grade", "mixtral-moe-decode", "--model", "gpt-oss-20b", "--gpu", "h100",
                 "--answers", str(sheet), ok=False)
    assert "wrong [moe-active-as-resident]" in result.output


def test_one_sequence_on_the_card_is_no_batch_to_share_a_read(run: Run) -> None:
    text = _refusal(run, "llama2-70b-mi300x", "--model", "phi-4", "--gpu", "l40s")
    assert "only 1 sequence of 32,768 tokens fits on 1 × NVIDIA L40S" in text


def test_the_flagship_refuses_a_target_with_no_32k_session(run: Run) -> None:
    text = _refusal(run, "llama31-8b-h100", "--model", "qwen3-32b")
    assert "its step sessions-32k holds not one sequence of 32,768 tokens" in text


def test_a_128k_tier_that_holds_none_is_still_an_answer(run: Run) -> None:
    result = run("solution", "llama31-8b-h100", "--model", "qwen3-14b", "--gpu", "l40s")
    assert result.exit_code == 0


def test_a_dense_70b_is_pointed_at_the_tensor_parallel_drill(run: Run) -> None:
    text = _refusal(run, "llama31-405b-h200-tp", "--model", "llama-3.1-70b", "--gpu", "h100")
    assert "drill it with kvdrill practice llama31-70b-tp2-h100" in text


def test_gemma_2_9b_is_pointed_at_the_drill_that_works_it(run: Run) -> None:
    text = _refusal(run, "llama31-8b-h100", "--model", "gemma-2-9b", "--gpu", "h100")
    assert "drill it with kvdrill practice sliding-window-kv" in text


def test_the_batch1_ceiling_question_divides_by_the_bytes_its_key_divides_by(run: Run) -> None:
    text = flat(run("show", "llama2-70b-mi300x", "--model", "gemma-3-27b", "--gpu",
                    "b200").output)
    assert "(7.7 TB/s over 54.02 GB)" in text


def test_a_bf16_model_in_place_of_llama_2_keeps_a_bf16_cache(run: Run) -> None:
    text = flat(run("show", "llama2-70b-mi300x", "--model", "qwen3-32b", "--gpu",
                    "b200").output)
    assert "KV cache dtype bf16" in text and "fp16" not in text


def test_a_question_names_the_cards_own_graphs(run: Run) -> None:
    assert "activation peak and the HIP graphs" in flat(
        run("show", "observed-concurrency-lower", "--gpu", "mi300x").output)
    assert "and HPU graphs" in flat(run("show", "prefix-caching", "--gpu", "gaudi3").output)


def test_a_re_targeted_key_names_no_slip_of_the_drills_own_model(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "keys"
    run("variants", "llama2-70b-mi300x", "--count", "1", "--model", "qwen3-32b", "--gpu",
        "h200", "--out", str(out))
    key = next(out.glob("*-key.md")).read_text(encoding="utf-8")
    assert "Llama-2-70B's" not in key


def test_llama_4s_chunked_attention_is_not_called_a_window(run: Run) -> None:
    text = _refusal(run, "llama31-8b-h100", "--model", "llama-4-scout", "--gpu", "h200")
    assert "36 chunked-attention layers, which keep only the tokens of their current " \
           "8,192-token chunk" in text
    assert "windowed layers" not in text


def test_fp8_kv_is_not_sold_as_more_running_sessions_past_the_cap(run: Run) -> None:
    text = flat(run("solution", "mixtral-moe-decode", "--model", "gpt-oss-120b", "--gpu",
                    "h200").output)
    assert "past vLLM's default max_num_seqs of 1,024, so it adds running sessions only once " \
           "that is raised" in text
