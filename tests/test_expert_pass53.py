"""Expert pass 53 (136 text answers written before grading, after the fixes of pass 52: no
red flag wrong of 48, but 17 of 51 wrong answers missed, most a single wrong claim in mild
words inside an answer otherwise right): each is flagged by a claim written in general
terms, checked over the 57 corpora (no right answer there makes one). X16, a claim right of
the drill's own card and wrong only of a re-target's, has no kind of claim that fits: left."""

from __future__ import annotations

import pytest

from trainer.drills.loader import find_drill
from trainer.marking.claims import claims_made

MISSED = [
    # X1 (t405-b)
    ('llama31-405b-h200-tp', 'fix',
     'Run TP8 x PP2. It gives about the same sessions as two separate TP8 replicas, around '
     '116, but with one endpoint.'),
    # X2 (mix-b)
    ('mixtral-moe-decode', 'what-moe-saves',
     'Memory is not saved: all 46.7B params, 93.4 GB, sit in HBM, so KV only gets ~42.6 '
     'GB, ~79 sessions. At batch 1 a step reads ~25.8 GB, ~3.9 ms, about 255 tok/s, much '
     'faster than a dense 47B. And batching tends to keep that advantage: at batch 64 each '
     'step still reads roughly the active 26 GB or so, since every token only uses 2 '
     'experts, plus the KV.'),
    # X3 (ocl-c)
    ('observed-concurrency-lower', 'action',
     'Tell product not to buy yet. vLLM roughly reserves the max_model_len up front for '
     'each request, so the 32k setting is tying up memory; lowering --max-model-len to '
     '8192 will mostly fix it. After that, enable FP8 KV for about 2x.'),
    # X4 (l8-b)
    ('llama31-8b-h100', 'policy',
     'Cap max_model_len at the real p99 and keep long context in its own pool. Turning on '
     'FP8 KV roughly doubles sessions, 96 to ~190, and it also halves the weights to about '
     '8 GB, so there is a bit more on top. Watch KV usage at p95 and preemptions.'),
    # X5 (l8-c)
    ('llama31-8b-h100', 'policy',
     'Per-tier max_model_len caps, a separate long pool. FP8 KV gives 2x (193 sessions). '
     'Prefix caching tends to halve the KV of pretty much any workload, since prompts '
     'share a lot, so count on another ~2x. Alert on KV usage >85% p95 and preemption rate '
     '>1%.'),
    # X6 (sd-b)
    ('speculative-decoding', 'when-it-pays',
     'It pays at batch 1: ~3.1x with alpha 0.8, ~1.8x at 0.5, because verifying 5 tokens '
     'costs about one weight read. And it tends to help even more at large batch, since '
     "there is more work to overlap. I'd turn it off only when acceptance drops below "
     '~0.5.'),
    # X7 (sd-c)
    ('speculative-decoding', 'when-it-pays',
     "At batch 1 it's ~3.1x. I'd also try a smaller draft: any small model works, e.g. "
     "Qwen2.5-0.5B, since the tokenizer doesn't matter - only the target's logits decide "
     'acceptance. Turn it off at high batch where the step goes compute-bound (~50+).'),
    # X8 (sd-e)
    ('speculative-decoding', 'when-it-pays',
     'Speculative decoding cuts the total compute, since the cheap draft does most of the '
     'work and the big model only checks. So it helps most when the target is '
     'compute-bound, at large batches, and matters less at batch 1.'),
    # X9 (pc-b)
    ('prefix-caching', 'block-size-why',
     'Bigger blocks tend to share more of the prompt, because fewer blocks need to match, '
     'so 256-token blocks should be at least as good as 16-token ones here. The cost of '
     'big blocks is only the waste at the end of each request.'),
    # X10 (pc-c)
    ('prefix-caching', 'when-not',
     'It buys nothing if the prompts differ at the start. With long sessions it still '
     'roughly doubles the sessions, like at 4k, since the same 2,000 tokens are saved each '
     'time. Watch the prefix cache hit rate.'),
    # X11 (sw-b)
    ('sliding-window-kv', 'why-different',
     'Both use the same 4,096-token window, so at 32k both caches shrink roughly 8x; '
     "Gemma-2's ends up a bit bigger only because its head_dim is 256. Taking head_dim as "
     '3584/16 = 224 understates it by 12.5%.'),
    # X12 (mt-b)
    ('multi-turn-growth', 'why-overstated',
     'They counted 1,280 tokens but a live request holds 6,144 (history and reply so far), '
     'so 64 per card, not 309. On top of that the KV of the conversations between turns '
     'stays on the card, roughly 256 open conversations to hold, so the real limit is '
     'lower still.'),
    # X13 (cp-b)
    ('chunked-prefill-tpot', 'trade-off',
     'I picked the largest chunk that keeps the last mixed step under 25 ms, 320 tokens. '
     'It costs the paster roughly nothing in TTFT, since the same prefill FLOPs get done '
     'either way, just spread over steps. Set max_num_batched_tokens accordingly.'),
    # X14 (dg-b)
    ('disaggregated-prefill', 'when-it-pays',
     "The transfer is small: only the final layer's KV needs to move, since the decode GPU "
     'recomputes the rest from it, roughly 16 MiB per request, well under a millisecond on '
     'IB. So it pays basically always; one prefill GPU per decode GPU.'),
    # X15 (l2-e)
    ('llama2-70b-mi300x', '2d',
     "One 32k MHA sequence is ~86 GB against 44 GB free, so it doesn't fit as specified. "
     "If we drop the 10 GB reserve it roughly fits one user, so that's the quick fix; "
     'otherwise cut the context or use two GPUs.'),
    # X17 (sub-sr)
    ('swap-or-recompute', 'policy',
     'Swap: 1 GiB over PCIe is ~43 ms against ~240 ms of recompute. Park preempted '
     'sessions in the 250 GB host tier, ~232 of them; resuming one costs roughly nothing, '
     "since the copy back always overlaps entirely with the other sequences' decode."),
]


@pytest.mark.parametrize(("drill_id", "step_id", "text"), MISSED,
                         ids=[f"X{i}" for i in (*range(1, 16), 17)])
def test_a_wrong_answer_the_expert_found_unflagged_is_flagged(
        drill_id: str, step_id: str, text: str) -> None:
    step = find_drill(drill_id)[0].step(step_id)
    assert claims_made(step, text)
