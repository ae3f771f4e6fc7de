"""Expert pass 45 (re-targeted lessons: 0 wrong, 3 misleading): the hybrid's short-context
sentence says how much of a 1,024-token sequence the state is, not that capacity "barely grows";
a dense model beside GPT-OSS reads all its weights but the embedding table, as the MoE column
does; a refusal for weights that fit the HBM but not what the drill leaves of it says so."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result
from retarget_text import flat, refusal_text

Run = Callable[..., Result]


def test_the_hybrid_says_the_state_share_at_a_short_context(run: Run) -> None:
    said = flat(run("solution", "hybrid-state-kv", "--format", "md").output)
    assert "barely grows" not in said
    # 8.72 MB of state against 16.8 MB of KV at 1,024 tokens: a third of the sequence
    assert "the state is 34% of each sequence and **775 sequences** fit" in said


def test_a_dense_model_beside_an_moe_reads_all_but_its_embedding_table(run: Run) -> None:
    said = flat(run("solution", "mixtral-moe-decode", "--model", "gpt-oss-20b", "--gpu", "l4",
                    "--format", "md").output)
    assert "| bytes read per step, batch 64 | 12.6 GB | 12.6 GB |" in said
    assert "embedding table (1.16 GB, one row a token: 12.6 GB)" in said


def test_mixtrals_dense_twin_still_reads_its_whole_checkpoint(run: Run) -> None:
    # (Mixtral's preset lists no vocabulary: no table is taken out on either side)
    said = flat(run("solution", "mixtral-moe-decode", "--format", "md").output)
    assert "| bytes read per step, batch 64 | 93.4 GB | 93.4 GB |" in said


def test_weights_that_fit_the_hbm_but_not_what_is_left_of_it_say_so(run: Run) -> None:
    said = refusal_text(run, "mixtral-moe-decode", "--model", "qwen3-235b-a22b", "--gpu", "h200")
    assert "do not fit in what 2 × AMD Instinct MI325X leave after the drill's utilisation " \
           "and reserve (453 GB)" in said


def test_more_hybrid_sequences_than_vllms_default_cap_say_the_cap(run: Run) -> None:
    said = flat(run("solution", "hybrid-state-kv", "--gpu", "mi325x", "--format", "md").output)
    assert "**4,834 sequences** fit in memory; unless --max-num-seqs is raised, vLLM runs " \
           "1,024 of them at once on this card" in said
