"""Expert pass 56 (145 text answers and numeric sheets written before grading, on the tree after
pass 54's and 55's fixes, none of them read here before): red flags wrong 2 of 36 (one answer,
twice), wrong answers missed 11 of 45, credit statements false 25 of 376, numeric explanations
wrong 4 of 13. Its false red flag and a misread number, tested through the real matcher and
CLI; the misses it found are claimed in the drills."""

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


def test_a_cause_said_to_explain_a_tenth_not_the_gap_is_no_claim_that_it_explains_it() -> None:
    # (W1: "might explain about 10%, not 40%" was flagged "cannot make 40% alone", and a
    # Staff-quality diagnosis fell to "not yet Solid")
    text = ("The context per request is underestimated: the gateway logs only see prompts, not "
            "generated tokens or earlier turns, and two-thirds more gives about 58 sessions, the "
            "whole gap. A CUDA-graph and activation peak larger than assumed might explain about "
            "10%, not 40%. Fragmentation is tiny with 16-token blocks.")
    assert _claims("observed-concurrency-lower", "hypotheses", text) == []


def test_the_claim_that_it_explains_the_gap_is_still_made() -> None:
    assert _claims("observed-concurrency-lower", "hypotheses",
                   "The activation peak explains the 40% gap: CUDA graphs take 20 GB.") \
        == ["activation-memory-explains-the-gap"]


def test_the_round_count_a_quotient_comes_to_is_the_answer(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (W14: "44 / 10.7 = 4.1, about 4" was read as 4.1 and told it rounded a count up)
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("2b-max-sequences: |\n  44 / 10.7 = 4.1, about 4\n", encoding="utf-8")
    result = run("grade", "llama2-70b-mi300x", "--answers", str(sheet), "--json", ok=False)
    step = next(s for s in json.loads(result.output)["steps"] if s["id"] == "2b-max-sequences")
    assert step["verdict"] == "correct"


def test_a_whole_figure_rounded_for_the_ear_is_not_the_answer() -> None:
    from trainer.reading.reader import read_answer

    assert read_answer("96, roughly 100 sessions", "sequences").readings[0].quantity.value == 96


def test_a_notes_own_pool_own_max_model_len_names_no_owner() -> None:
    # (W10: "own pool, own max_model_len" earned "the platform team owns the per-tier caps")
    from trainer.drills.loader import load_rubric
    from trainer.marking.prose import concept_credit

    concept = load_rubric("kv-capacity").concept("platform-owns-caps")
    assert concept is not None
    assert concept_credit(concept, "own pool, own max_model_len, gateway routes by tier")[0] == 0
    assert concept_credit(concept, "The platform team owns max_model_len per tier.")[0] > 0


# The expert's wrong answers left unflagged (X1-X10, X14; X11 is wrong only of a re-target),
# each flagged by a claim written in general terms by a helper who never saw the scorer,
# checked over the 57 corpora (no right answer there makes one) and over all 79 of the
# expert's sheets (no new flag on any right one).
MISSED = [
    # X1 (8b_B)
    ('llama31-8b-h100', 'followup-128k-policy',
     'Separate long-context pool with its own max_model_len, routed by tier, FP8 KV there '
     'so about 6 sessions per card instead of 3. Prefill of a 128k prompt tends to be '
     "bandwidth-bound like decode, so chunked prefill won't buy much; instead just give "
     'the long pool its own GPUs so chat TPOT is untouched.'),
    # X2 (pc_B)
    ('prefix-caching', 'when-not',
     'It buys little when sessions are long compared with the prompt. It also mostly stops '
     "working once the KV cache is in FP8, since quantised blocks can't be hashed and "
     'shared, so with FP8 KV you lose the sharing gain. Watch the hit rate.'),
    # X3 (cp_B)
    ('chunked-prefill-tpot', 'trade-off',
     'I sized the chunk so that the step stays under 25 ms. Chunking mostly costs the '
     'pasting user nothing, since the prefill FLOPs are the same chunked or not, so the '
     "first token still arrives after roughly the 252 ms of the unchunked pass. I'd set "
     'max_num_batched_tokens to 320.'),
    # X4 (pd_B)
    ('prefill-vs-decode', 'why-two-regimes',
     'Prefill is compute-bound because it has to read the whole KV cache of the prompt, '
     'which is large, while decode reads little but the weights. As the batch grows, '
     'decode tends to turn compute-bound at about batch 8 to 16 on an H200.'),
    # X5 (dg_B)
    ('disaggregated-prefill', 'when-it-pays',
     'It pays nearly always, because the transfer is tiny: the KV of a 4k prompt is only '
     "about 64 MiB, well under a millisecond over InfiniBand. I'd size the pools at "
     'roughly one prefill GPU per four decode GPUs, since prefill is compute-bound and '
     'therefore fast.'),
    # X6 (l2_B)
    ('llama2-70b-mi300x', '5a',
     'The step time roughly halves, since fp8 halves the bytes of the KV that is read.'),
    # X7 (sr_B)
    ('swap-or-recompute', 'policy',
     'Recompute: prefill on an H200 is compute-bound and very fast, so it roughly always '
     'beats a PCIe transfer, which is far slower than HBM. The host tier is mostly useless '
     'for KV, since PCIe is too slow to sit on the resume path.'),
    # X8 (hy_B)
    ('hybrid-state-kv', 'how-concurrency-scales',
     "Jamba's memory is essentially constant in context, since the Mamba layers hold a "
     'fixed state, so its concurrency hardly depends on length. That makes it the right '
     'choice for every workload, short chat included, where it also holds roughly 9x what '
     'a transformer holds.'),
    # X9 (lc_B)
    ('long-context-tier', 'operations',
     'Watch GPU utilisation (SM busy %) on both pools; as long as it stays below about '
     '90%, the pool is sized right.'),
    # X10 (oc_B)
    ('observed-concurrency-lower', 'action',
     'Tell product to go ahead with the order, and meanwhile lower max_model_len to 8k to '
     'stop the reservations.'),
    # X14 (sw_B)
    ('sliding-window-kv', 'why-different',
     "Gemma-2's window is the same 4,096 tokens, but it has more layers and a wider head, "
     'so the window mostly cuts every layer just as in Mistral, only from a bigger '
     'starting point. Taking head_dim as 3584/16 = 224 gives a slightly larger cache, '
     'which is at least the safe side.'),
]


@pytest.mark.parametrize(("drill_id", "step_id", "text"), MISSED)
def test_a_wrong_answer_the_expert_wrote_is_flagged(drill_id: str, step_id: str,
                                                     text: str) -> None:
    assert _claims(drill_id, step_id, text)


def test_working_in_words_is_read_as_plain_arithmetic_and_gets_one_explanation(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (W16: "80 x 0.9 = 72, minus 16 GB weights = 56 GB" was told it left out the reserve "or
    # mixed GB and GiB: both give it"; the working shows no unit mixed)
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text('kv-budget: "80 x 0.9 = 72, minus 16 GB weights = 56 GB"\n',
                     encoding="utf-8")
    result = run("grade", "llama31-8b-h100", "--answers", str(sheet), "--json", ok=False)
    step = next(s for s in json.loads(result.output)["steps"] if s["id"] == "kv-budget")
    assert step["misconceptions"] == ["forgot-reserve"]
