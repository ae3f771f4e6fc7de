"""Issue 35, the seventh expert pass: what a re-targeted drill printed that was false for its
target, each found on a render nobody here had written a test for."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

Run = Callable[..., Result]
LLAMA = Path(__file__).parent / "corpus" / "configs" / "Llama-3.1-8B" / "config.json"


@pytest.fixture
def mha(tmp_path: Path) -> str:
    """A multi-head model with a long context: Llama-3.1-8B's config with a KV head for every
    query head (no preset is both MHA and long enough for every drill)."""
    config = json.loads(LLAMA.read_text())
    config["num_key_value_heads"] = config["num_attention_heads"]
    path = tmp_path / "MHA-8B" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(config))
    return str(path.parent)


def _solution(run: Run, *args: str) -> str:
    return run("solution", *args).output


def test_a_multi_head_model_is_not_said_to_group_its_heads(run: Run, mha: str) -> None:
    text = _solution(run, "llama31-8b-h100", "--model", mha, "--gpu", "h200")
    assert "multi-head attention: one KV head per query head" in text
    assert "grouped-query attention: 32 query heads share them" not in text


def test_a_multi_head_model_has_no_query_heads_red_flag(run: Run, mha: str) -> None:
    for drill in ("llama31-8b-h100", "multi-turn-growth", "paged-blocks-vllm"):
        text = _solution(run, drill, "--model", mha, "--gpu", "h200")
        assert "32 query heads instead of 32 KV heads" not in text, drill
        assert "Query heads (32) where the KV heads (32) belong" not in text, drill


def test_the_models_own_context_is_named_not_128k(run: Run) -> None:
    text = _solution(run, "llama31-8b-h100", "--model", "qwen3-8b")
    assert "not\n  to the model's 40k" in text or "not to the model's 40k" in text.replace(
        "\n  ", " ")


def test_a_steps_context_past_the_models_reach_is_refused(run: Run) -> None:
    result = run("show", "llama31-8b-h100", "--model", "llama-2-7b", ok=False)
    assert result.exit_code == 2
    assert "step sessions-32k holds 32,768 tokens, more than 4 × Llama-2-7B's 4,096" in \
        result.stderr


def test_a_drill_whose_own_model_is_stretched_takes_others_stretched_as_far(
        run: Run, tmp_path: Path) -> None:
    # llama2-70b-mi300x runs Llama-2-70B (4,096 positions) at 32,768 as a what-if: a GQA
    # model of 4,096 positions is stretched as far
    config = json.loads(LLAMA.read_text())
    config["max_position_embeddings"] = 4096
    (tmp_path / "Short-8B").mkdir()
    (tmp_path / "Short-8B" / "config.json").write_text(json.dumps(config))
    assert "Short-8B" in _solution(run, "llama2-70b-mi300x", "--model",
                                   str(tmp_path / "Short-8B"))


def test_naming_the_drills_own_model_changes_nothing(run: Run) -> None:
    assert _solution(run, "llama31-405b-h200-tp", "--gpu", "b200") == \
        _solution(run, "llama31-405b-h200-tp", "--model", "llama-3.1-405b", "--gpu", "b200")


def test_an_nvidia_card_is_not_read_with_rocm_smi(run: Run) -> None:
    text = _solution(run, "llama2-70b-mi300x", "--model", "qwen3-32b", "--gpu", "h200")
    assert "rocm-smi" not in text and "CUDA's total, which vLLM uses" in text


def test_a_card_under_70_gib_gets_vllms_smaller_default_batch_cap(run: Run) -> None:
    text = _solution(run, "paged-blocks-vllm", "--gpu", "l40s")
    assert "by default\n256 on this card" in text or "by default 256 on this card" in \
        text.replace("\n", " ")


def test_the_batch_question_states_the_targets_experts_per_token(run: Run) -> None:
    text = run("show", "mixtral-moe-decode", "--model", "qwen3-30b-a3b", "--gpu", "h100").output
    assert "Each token picks its own 8 experts per" in text.replace("\n    ", " ")
    assert "its own 2 experts" not in text


def test_a_follow_up_on_another_model_takes_the_cards_it_needs(run: Run) -> None:
    # it was refused, naming Llama-3.1-70B on 2 × A100 40GB; since expert pass 30 the
    # follow-up chooses four (tests/test_retarget_expert_pass30.py)
    result = run("show", "llama31-8b-h100", "--model", "qwen3-8b", "--gpu", "a100-40gb")
    assert "on four NVIDIA A100 40GB GPUs with 4-way tensor parallelism" in \
        " ".join(result.output.split())


def test_a_card_with_no_sourced_driver_total_is_never_given_an_unknown_figure(run: Run) -> None:
    from trainer.files.paths import drill_paths

    for path in drill_paths():
        result = run("solution", path.stem, "--gpu", "h100-pcie", ok=False)
        assert "unknown GB" not in result.output and "unknown MiB" not in result.output, \
            path.stem
        assert "about -" not in result.output, path.stem


def test_a_reserve_overrun_that_is_the_whole_gap_is_not_ruled_out(run: Run) -> None:
    # Qwen3-30B-A3B on an H100 has 6.94 GB of KV: 2.8 GB more reserve is the 40% gap
    text = _solution(run, "observed-concurrency-lower", "--model", "qwen3-30b-a3b", "--gpu",
                     "h100")
    assert "**yes**, alone, on this card: about 2.8 GB more than assumed" in text
    assert "would overshoot" not in text


def test_int8_weights_are_not_said_to_shorten_a_step_they_lengthen_at_full_load(
        run: Run) -> None:
    text = _solution(run, "llama2-70b-mi300x", "--model", "qwen3-32b", "--gpu", "h200")
    said = " ".join(text.split())
    assert "19.4 ms instead of 26.2 ms at 7 sequences" in said
    assert "Run full at 11 sequences and the extra users spend that saving (26.5 ms" in said


def test_a_key_does_not_blame_the_utilisation_for_a_figure_that_never_reads_it(
        run: Run, tmp_path: Path) -> None:
    run("variants", "mixtral-moe-decode", "--count", "1", "--out", str(tmp_path / "v"),
        "--model", "qwen3-30b-a3b")
    key = next((tmp_path / "v").glob("*key*.md")).read_text()
    row = next(line for line in key.splitlines() if line.startswith("| active-weights |"))
    assert "TensorRT-LLM" not in row


def test_a_deepseek_node_on_another_card_counts_its_vllm_dp_sessions(run: Run) -> None:
    text = " ".join(_solution(run, "deepseek-v3-mla-h200", "--gpu", "b200").split())
    assert "= 24 sessions a GPU: about **192** on the node instead of 216" in text


def test_a_wrong_claims_correction_on_a_re_target_states_none_of_the_drills_own_figures(
        run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text('why-paging: "the X in the log is the real number of requests it can run '
                     'at once, so 53 users"\n')
    own = run("grade", "paged-blocks-vllm", "--answers", str(sheet), ok=False).output
    moved = run("grade", "paged-blocks-vllm", "--answers", str(sheet), "--gpu", "h200",
                ok=False).output
    assert "about 53 on an H100" in own
    flag = next(line for line in moved.splitlines() if line.startswith("Red flag:"))
    assert "H100" not in flag and "53" not in flag and "a floor, not the real concurrency" in flag


# ---- the eighth pass ----------------------------------------------------------------------

def test_the_mha_against_gqa_drill_refuses_a_model_with_no_grouping(run: Run) -> None:
    result = run("show", "llama2-70b-mi300x", "--model", "llama-2-7b", "--gpu", "mi300x",
                 ok=False)
    assert result.exit_code == 2 and "fewer KV heads than query heads" in result.stderr


def test_a_measured_drill_on_another_card_suggests_what_runs_on_that_card(run: Run) -> None:
    result = run("show", "swap-or-recompute", "--gpu", "l4", ok=False)
    suggested = result.stderr.rstrip().rsplit(": ", 1)[-1]
    assert suggested.startswith("drill it with kvdrill practice ")
    drill, *options = suggested.removeprefix("drill it with kvdrill practice ").split()
    assert run("show", drill, *options).exit_code == 0


def test_a_batch_the_memory_cannot_hold_is_refused(run: Run) -> None:
    result = run("show", "mixtral-moe-decode", "--model", "mixtral-8x22b", "--gpu", "b200",
                 ok=False)
    assert "runs a batch of 64 sessions, and only 36 fit" in result.stderr


def test_a_draft_that_leaves_no_sequence_is_refused_not_priced() -> None:
    # Qwen3-4B on an L4 holds sessions alone; an 8B draft beside it leaves none (no preset
    # pair does since vLLM's equal-vocabulary rule refused Qwen2.5-7B with its 0.5B draft)
    from trainer.drills.loader import find_drill
    from trainer.drills.variants import _not_sensible

    drill = find_drill("speculative-decoding")[0]
    givens = {**drill.givens, "model": "qwen3-4b", "gpu": "l4", "draft_params": 8_030_261_248,
              "draft_layers": 32, "draft_kv_heads": 8, "draft_head_dim": 128}
    said = _not_sensible(drill, givens)
    assert said is not None and said.startswith("with the draft's weights and KV resident")


def test_an_fp8_pool_that_holds_none_is_not_recommended_as_a_count(run: Run) -> None:
    # (Qwen3-14B on an L40S: one 32k session, no 128k one even in FP8; Qwen3-32B on an H100,
    # the case first found, holds no 32k session and is refused since expert pass 20)
    text = " ".join(_solution(run, "llama31-8b-h100", "--model", "qwen3-14b", "--gpu",
                              "l40s").split())
    assert "instead of 0" not in text and "not even FP8 KV" in text


def test_the_paged_drill_refuses_a_model_whose_positions_vllm_would_not_stretch(
        run: Run) -> None:
    # its start-up lines are a server launched with --max-model-len 8192; Phi-3-mini-4k has
    # 4,096 positions, and vLLM refuses that length without RoPE scaling
    result = run("show", "paged-blocks-vllm", "--model", "phi-3-mini", ok=False)
    assert "past which vLLM refuses to start without RoPE scaling" in result.stderr
