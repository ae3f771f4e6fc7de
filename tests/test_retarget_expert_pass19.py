"""The nineteenth expert pass (/tmp/w4/expert19.md): the engine's cap named for every count
past it and, where latency bounds the batch, for the batch that runs; speculation's MoE verdict
a roofline estimate and refusals that suggest no target the drill itself advises against; an
MoE's active count beside bytes that leave its embedding table out; a model with learned
positions not said to need RoPE scaling; 141.1 GB of weights not printed as 141 GB against 141
GB; Gaudi 3's scale-up ports named as such. Each test fails on what was printed before."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result
from retarget_text import flat
from retarget_text import solution_text as _solution

Run = Callable[..., Result]


def _refusal(run: Run, *args: str) -> str:
    result = run("solution", *args, ok=False)
    assert result.exit_code == 2
    return flat(result.output)


def test_a_batch_the_tpot_keeps_under_the_cap_gets_no_cap_note(run: Run) -> None:
    # 332 sequences fit in memory on the L4, but the TPOT target runs 99: the cap is not met
    text = _solution(run, "littles-law-capacity", "--model", "qwen2.5-0.5b", "--gpu", "l4")
    assert "The engine's cap" not in text


def test_a_running_batch_past_the_cap_is_the_one_named(run: Run) -> None:
    text = flat(_solution(run, "littles-law-capacity", "--variant", "422835", "--model",
                          "qwen2.5-0.5b", "--gpu", "l4"))
    assert "The batch this drill runs, 278 sequences, is past vLLM's default max_num_seqs" \
        in text


def test_counts_past_the_cap_are_said_to_be_the_same_at_the_defaults(run: Run) -> None:
    text = flat(_solution(run, "prefix-caching", "--model", "qwen2.5-0.5b", "--gpu", "h200"))
    # (by their counts, not their step ids: expert pass 31)
    assert "the counts of 2,422, 4,305, 4,732 and 9,465 sequences above are past it" in text
    assert "adds no running sequences until the cap is raised" in text


def test_a_speculation_refusal_suggests_no_moe_target(run: Run) -> None:
    text = _refusal(run, "speculative-decoding", "--model", "gpt-oss-120b", "--gpu", "h100")
    assert "qwen3-30b-a3b" not in text
    assert "qwen3-8b or gemma-2-9b" in text


def test_speculation_on_an_moe_target_is_a_roofline_estimate(run: Run) -> None:
    text = flat(_solution(run, "speculative-decoding", "--model", "qwen3-30b-a3b", "--gpu",
                          "h100"))
    assert "the speed-up below is an upper bound" not in text
    assert "a roofline estimate, which the measured step times decide" in text
    assert "unless measured step times say otherwise" in text


def test_the_active_count_beside_bytes_without_the_embedding_says_so(run: Run) -> None:
    text = flat(_solution(run, "mixtral-moe-decode", "--model", "qwen3-30b-a3b", "--gpu",
                          "h100"))
    assert "3.35B active parameters counting the input embedding, less its 0.622 GB table, of " \
           "which a step reads one row): **6.08 GB**" in text


def test_the_pitch_quotes_the_publishers_active_count(run: Run) -> None:
    text = flat(_solution(run, "mixtral-moe-decode", "--model", "gpt-oss-20b", "--gpu", "l4"))
    assert '"GPT-OSS-20B is a 3.61B model at inference time' in text
    assert "4.19B model at inference time" not in text


def test_learned_positions_are_not_said_to_need_rope_scaling(run: Run) -> None:
    text = _refusal(run, "paged-blocks-vllm", "--model", "opt-125m", "--gpu", "l4")
    assert "RoPE" not in text
    assert "2,048 positions, which it learned as an embedding: no scaling stretches them" \
        in text


def test_weights_a_little_over_the_card_are_not_printed_equal_to_it(run: Run) -> None:
    text = _refusal(run, "speculative-decoding", "--model", "llama-3.1-70b", "--gpu", "h200")
    assert "(141.1 GB against 141 GB)" in text


def test_gaudi_3s_links_between_nodes_are_set_against_its_scale_up_ports(run: Run) -> None:
    text = flat(_solution(run, "llama31-405b-h200-tp", "--gpu", "gaudi3"))
    assert "several times slower than Gaudi 3's scale-up RoCE ports" in text
