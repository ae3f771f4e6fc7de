"""Expert pass 54 (130 text answers and 6 numeric sheets written before grading, on the tree
after pass 53's fixes): red flags wrong 2 of 31, wrong answers missed 22 of 51, credit
statements false 22 of about 414, numeric explanations wrong 2 of about 30. The general
faults behind the wrong flags, the false statements and the numeric explanations, each
tested here through the real matcher, scorer or CLI; the misses are claimed in the drills."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from trainer.drills.loader import find_drill
from trainer.marking.claims import claims_made
from trainer.reading.reader import read_answer


def _claims(drill_id: str, step_id: str, text: str) -> list[str]:
    step = find_drill(drill_id)[0].step(step_id)
    return [made.claim.id for made in claims_made(step, text)]


def _grade(run: Callable[..., Result], tmp_path: Path, drill: str, answers: dict[str, str],
           *options: str) -> dict[str, object]:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(json.dumps(answers), encoding="utf-8")
    result = run("grade", drill, "--answers", str(sheet), "--json", *options, ok=False)
    assert result.exit_code in (0, 1), result.output  # graded (1: not passed), no misuse
    graded: dict[str, object] = json.loads(result.output)
    return graded


@pytest.mark.parametrize(("typed", "value"), [
    ("96/8 = 12 ... actually 24", 24), ("12, make that 24", 24),
    ("12, actually", 12)])
def test_a_value_corrected_after_its_working_is_the_one_read(typed: str, value: int) -> None:
    # (NW1: "96/8 = 12 ... actually 24" was marked right as 12)
    assert read_answer(typed).readings[0].quantity.value == value


def test_working_that_leaves_steps_out_is_not_said_to_give_the_answer(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (NW2: "(160 - 70.55)*0.9 ... ≈ 150" was told "Your working gives 80.5 sequences, which
    # is right": 80.5 is GB, and the dots say the working went on)
    graded = _grade(run, tmp_path, "llama31-8b-h100",
                    {"followup-70b-tp-sessions": "(160 - 70.55)*0.9 ... ≈ 150"})
    step = next(s for s in graded["steps"]  # type: ignore[attr-defined]
                if s["id"] == "followup-70b-tp-sessions")
    assert step["verdict"] == "wrong" and "working" not in step["feedback"].lower()


def test_working_is_right_only_where_it_comes_to_the_value_not_within_a_wide_band(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (the follow-up's 20% band admits 80.5 for 97; working that comes to 80.5 is not right)
    graded = _grade(run, tmp_path, "llama31-8b-h100",
                    {"followup-70b-tp-sessions": "(160 - 70.55)*0.9 = 150"})
    step = next(s for s in graded["steps"]  # type: ignore[attr-defined]
                if s["id"] == "followup-70b-tp-sessions")
    assert "which is right" not in step["feedback"]


@pytest.mark.parametrize("text", [
    '"2,000 users = 2,000 slots" confuses open conversations with requests in flight. '
    'L = λW: 30/s × ~7.9 s ≈ 238 in flight.',
    "2,000 users = 2,000 slots is a common mistake: L = λW gives about 238 in flight."])
def test_a_claim_said_to_confuse_or_to_be_a_mistake_is_not_made(text: str) -> None:
    # (W2: a quoted claim followed by "confuses …" was flagged as the claim)
    assert _claims("littles-law-capacity", "plan", text) == []


def test_the_claim_itself_is_still_made_without_the_judgement() -> None:
    assert _claims("littles-law-capacity", "plan", "2,000 users = 2,000 slots, so buy 20 GPUs.") \
        == ["online-users-as-slots"]


def test_hidden_over_heads_said_to_overstate_sessions_is_no_overstated_cache() -> None:
    # (W1: "224 instead of the config's 256 undercounts the cache … and overstates sessions")
    text = ("Taking head_dim as hidden / heads = 3584 / 16 = 224 instead of the config's 256 "
            "undercounts the cache by 12.5% (294 vs 336 KiB per token) and overstates sessions.")
    assert _claims("sliding-window-kv", "why-different", text) == []


def test_a_figure_in_another_clause_is_not_given_to_a_mention(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (W20: "the preemption counter, …; if usage sits at 100% …" was said to quantify
    # preemption "with figures the rubric does not list")
    text = ("Watch KV-cache usage (p95), the preemption counter, and running vs waiting "
            "requests; if usage sits at 100% with preemptions, the estimate is stale.")
    graded = _grade(run, tmp_path, "llama31-8b-h100", {"policy": text})
    said = json.dumps(graded["rubric"])
    assert "preemption" in said and "the rubric does not list" not in said


def test_a_retargeted_grade_takes_no_figure_of_the_drills_own_card(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (W22: on a B200, "PP2 … 174 sessions" (the H200's figure) was credited as quantified)
    text = ("TP8 x PP2 instead: each stage keeps 8 KV heads on 8 GPUs, so the node pair "
            "holds about 174 sessions of 32k.")
    graded = _grade(run, tmp_path, "llama31-405b-h200-tp", {"fix": text}, "--gpu", "b200")
    said = json.dumps(graded["rubric"])
    assert "174" not in said


def test_the_drills_own_grade_still_takes_that_figure(
        run: Callable[..., Result], tmp_path: Path) -> None:
    text = ("TP8 x PP2 instead: each stage keeps 8 KV heads on 8 GPUs, so the node pair "
            "holds about 174 sessions of 32k.")
    graded = _grade(run, tmp_path, "llama31-405b-h200-tp", {"fix": text})
    assert "174" in json.dumps(graded["rubric"])


@pytest.mark.parametrize(("typed", "value"), [
    ("90-100, say 96 sessions", 96), ("between 150 and 170, say 163", 163),
    ("90 - 100, probably 96", 96)])
def test_a_value_picked_from_a_range_is_read_and_the_range_is_no_working(
        typed: str, value: int) -> None:
    # (found practising prefix-caching in tmux: "90-100, say 96 sessions" was read as -10,
    # and "between 150 and 170, say 163" was told "head_dim = 150 (the figure in your working)")
    read = read_answer(typed, "sequences")
    assert read.readings[0].quantity.value == value and read.working_parts == ()


def test_a_subtraction_before_the_value_is_still_working() -> None:
    read = read_answer("72 - 16, say 56 GB", "GB")
    assert read.readings[0].quantity.value == 56 * 10**9 and read.working_parts


# The expert's wrong answers left unflagged (X1-X22 but the five wrong only of a re-target,
# X4, X8, X19, X20, X21: no claim of the drill's own can say them), each flagged by a claim
# written in general terms by a helper who never saw the scorer, checked over the 57 corpora
# (no right answer there makes one) and over all 68 of the expert's right answers.
MISSED = [
    # X1 (t1)
    ('llama31-405b-h200-tp', 'why-less',
     'TP=16 doubles the GPUs so the KV capacity doubles; the reason we get fewer is NCCL '
     'overhead across nodes eating memory.'),
    # X2 (llama31-405b-h200-tp__c)
    ('llama31-405b-h200-tp', 'why-less',
     "Mostly it's the cross-node all-reduce: going over InfiniBand, NCCL needs large "
     'buffers that roughly eat the extra memory the second node brings. The KV heads also '
     'get replicated a bit, since there are only 8 of them.'),
    # X3 (llama31-405b-h200-tp__s1)
    ('llama31-405b-h200-tp', 'fix',
     'TP8 x PP2: each stage holds half the layers, one KV head per GPU, nothing '
     'duplicated, ~174 sessions. Since the two pipeline stages run concurrently, it also '
     'roughly halves the per-token latency compared with TP=8 on one node.'),
    # X5 (llama31-70b-tp2-h100__e)
    ('llama31-70b-tp2-h100', 'tp-trade',
     'TP=2 tends to double the KV per token, since each GPU keeps a full copy of the cache '
     'for its half of the model, but it is still worth it because the weights split in two '
     'and the budget grows. One H100 would work if you lower gpu_memory_utilization.'),
    # X6 (speculative-decoding__d)
    ('speculative-decoding', 'when-it-pays',
     "Speculation works because the draft's tokens are usually accepted, and since the "
     'output then mostly comes from the small model, quality degrades slightly, roughly in '
     "proportion to how often we accept. At batch 1 we get about 3x. I'd turn it off at "
     'high batch.'),
    # X7 (speculative-decoding__e)
    ('speculative-decoding', 'when-it-pays',
     'It pays at batch 1: ~3.1x. It tends to pay even more at large batch, since verifying '
     'k+1 tokens amortises the weight read over more tokens; the only reason to turn it '
     'off is when acceptance falls below about 0.5.'),
    # X9 (llama2-70b-mi300x__d)
    ('llama2-70b-mi300x', '5a',
     'The step gets about twice as long, since there are twice as many sequences to decode '
     'and each adds its own work; per-user speed roughly halves.'),
    # X10 (llama2-70b-mi300x__i)
    ('llama2-70b-mi300x', '3c-explain',
     'Per sequence 29 tok/s vs 38 at batch 1. To a PM: the GPU is mostly idle waiting for '
     'compute at batch 1, so extra users fill the idle compute units for free.'),
    # X11 (mixtral-moe-decode__f)
    ('mixtral-moe-decode', 'serving-levers',
     'Use expert parallelism instead of TP: each GPU holds 4 of the 8 experts, so the '
     'experts no longer have to be fully resident and the KV budget roughly doubles. Also '
     'quantize the KV to fp8.'),
    # X12 (sliding-window-kv__c)
    ('sliding-window-kv', 'why-different',
     "Gemma-2's window is roughly as effective as Mistral's, since most of its layers are "
     "local; the difference mostly comes from Gemma's larger head_dim of 256. hidden/heads "
     'would give 224, a slight undercount.'),
    # X13 (observed-concurrency-lower__s1)
    ('observed-concurrency-lower', 'hypotheses',
     'The main cause is the live context: history and output take sessions to ~6.8k '
     'tokens, which alone gives ~58 instead of 96. Fragmentation tends to add another '
     '5-10% on top with 16-token blocks, and a larger activation peak a bit more.'),
    # X14 (prefix-caching__s1)
    ('prefix-caching', 'when-not',
     'It buys little when the shared prompt is a small share of each session (at 32k live '
     'tokens the 2,000-token prompt is ~6%) or when per-user content comes first. Where it '
     "works it also saves decode bandwidth, since the shared prefix's KV is read once per "
     'step for all sessions rather than once per session. Watch the prefix-cache hit rate.'),
    # X15 (deepseek-v3-mla-h200__s1)
    ('deepseek-v3-mla-h200', 'why-mla',
     "MLA's latent is 576 elements per layer, ~71x smaller than the MHA cache of the same "
     'model, which is why the budget changes so much. Under TP=8 it is roughly split '
     'across the GPUs like GQA heads, apart from some replication of the 64-wide rope '
     'part, so TP takes back little.'),
    # X16 (prefill-vs-decode__c)
    ('prefill-vs-decode', 'why-two-regimes',
     'Prefill is compute-bound because it has to write the whole KV cache to HBM, which is '
     'a lot of FLOPs; decode is memory-bound because it reads the KV. As the batch grows '
     'decode tends to stay memory-bound at any batch, since every sequence brings its own '
     'KV.'),
    # X17 (hybrid-state-kv__b)
    ('hybrid-state-kv', 'how-concurrency-scales',
     "The Mamba state is constant per sequence, so the hybrid's concurrency is essentially "
     'independent of context: at 1k and at 32k you fit roughly the same number of '
     'sequences, since the state dominates.'),
    # X18 (paged-blocks-vllm__d)
    ('paged-blocks-vllm', 'refusal',
     "It refuses: with gpu_memory_utilization 0.45 the second process sees the first one's "
     'memory as used, and since 0.45 + 0.45 = 0.9 leaves too little for a 131k context, '
     'vLLM errors at start-up. Fix by setting max_model_len to 32k.'),
    # X22 (sliding-window-kv__s1)
    ('sliding-window-kv', 'why-different',
     "Mistral's window cuts the session roughly 8x, since all 32 layers keep only 4,096 of "
     '32,768 tokens. Gemma-2 saves a bit under half mostly because its windowed layers use '
     'a smaller head_dim than its global ones, so windowing them saves less.'),
]
RIGHT = [
    # speculative-decoding__a
    ('speculative-decoding', 'when-it-pays',
     'At batch 1 it pays: the 70B target step is ~26.9 ms on the roofline, a draft step '
     '~0.5 ms, so a round of 4 drafts plus one verification costs ~28.8 ms and yields '
     "~3.36 tokens at alpha 0.8: ~3.1x. Even at alpha 0.5 it's ~1.8x. Verifying 5 tokens "
     'costs about the same as 1 because the step is bound by reading 141 GB of weights, '
     'not by FLOPs. It stops paying as the batch grows: around batch ~50 verification '
     'turns compute-bound, and beyond ~165 the wasted FLOPs on rejected drafts make the '
     "server slower than plain decoding. So I'd enable it for the latency tier at low "
     'batch, and turn it off (or shrink k) under load or when acceptance drops.'),
    # prefix-caching__d
    ('prefix-caching', 'when-not',
     'When the prefix differs per request: a per-user timestamp or user name placed at the '
     'top of the system prompt breaks the match for every block after it, so nothing is '
     "shared. Also when the shared prefix is small next to each session's own tokens (at "
     '32k live tokens the 2,000-token prompt is 6%, 12 sessions either way), when the '
     'prompt is shorter than one block, or when prompts rotate faster than the cache keeps '
     'them (evicted under pressure). In production watch the prefix-cache hit rate (vLLM '
     'exposes prefix cache queries/hits), KV usage and TTFT of requests with a cached '
     'prefix.'),
    # sliding-window-kv__a
    ('sliding-window-kv', 'why-different',
     'Mistral windows every layer, so at 32k each of the 32 layers keeps ~4,096 tokens: '
     '512 MiB instead of 4 GiB per session, 8x less, ~99 sessions vs 12. Gemma-2 windows '
     'only 21 of its 42 layers; the 21 global layers still hold all 32,768 tokens, so the '
     'session goes from ~11.3 GB to ~6.3 GB, just under half saved (the global half '
     'dominates). Taking head_dim as hidden / heads = 3584 / 16 = 224 instead of the '
     "config's 256 undercounts the cache by 12.5% (294 vs 336 KiB per token) and "
     'overstates sessions.'),
    # deepseek-v3-mla-h200__r1
    ('deepseek-v3-mla-h200', 'why-mla',
     'It is not the case that the latent shards across TP ranks the way KV heads do: it '
     'has no head dimension, so all 8 GPUs keep the whole 70,272 B per token and the node '
     'pays 549 KiB. Per copy MLA is ~71x smaller than MHA (4.77 MiB per token), and still '
     '~2.2x smaller per GPU than a GQA-8 cache split 8 ways would be per token overall '
     '(250 KB vs ~69 KB per copy) — but the 8x replication hands most of that back: 16 '
     'sessions of 32k on the node.'),
    # observed-concurrency-lower__r1
    ('observed-concurrency-lower', 'hypotheses',
     "Someone will say fragmentation. It isn't: with 16-token blocks it's under 0.1%. Nor "
     'is it a max_model_len reservation, which would leave 12 sessions, not ~58. The live '
     'context is: prompts plus unlogged history plus output come to ~6.8k, exactly the 40% '
     'gap. A 10 GB activation peak would explain ~11%, not 40%.'),
    # llama31-405b-h200-tp__r1
    ('llama31-405b-h200-tp', 'why-less',
     'Contrary to the usual "more GPUs, more KV" intuition, past 8 GPUs the KV heads run '
     'out: 8 heads over 16 GPUs means each head is stored twice. Per GPU the token still '
     'costs 31.5 KiB, for the job 504 KiB instead of 252. The budget did grow 2.98x, to '
     '1,479 GB, since each GPU carries half the weights, but divided by twice the cost per '
     'token that is ~1.5x the sessions, 87 instead of 58.'),
    # hybrid-state-kv__a
    ('hybrid-state-kv', 'how-concurrency-scales',
     'Only 4 of the 32 layers keep KV, 16 KiB per token, and each of the 28 Mamba layers '
     'keeps a fixed state, ~8.7 MB per sequence in all whatever the length (worth ~532 '
     'tokens of KV). So per sequence the cost is a constant plus a small slope: at 32k '
     "it's ~520 MiB, 36 sequences in a 19.8 GB budget, 9x an all-attention version; at 1k "
     "it's dominated by the state, ~775 sequences. A transformer's concurrency falls as "
     '1/context; this one falls much more slowly at long context and is capped by the '
     'state at short context. So put long-document, long-context work on it; for short '
     'chat the fixed state is overhead and the advantage over a dense GQA model shrinks.'),
]
_RIGHT_ANSWER = {drill_id: text for drill_id, _, text in RIGHT}


@pytest.mark.parametrize(("drill_id", "step_id", "text"), MISSED)
def test_a_wrong_answer_the_expert_wrote_is_flagged(drill_id: str, step_id: str,
                                                     text: str) -> None:
    assert _claims(drill_id, step_id, text)


@pytest.mark.parametrize(("drill_id", "step_id", "text"), RIGHT)
def test_a_right_answer_beside_them_is_not(drill_id: str, step_id: str, text: str) -> None:
    assert _claims(drill_id, step_id, text) == []


def test_a_request_that_generates_tokens_is_no_measured_live_context() -> None:
    # (W18: "whether or not it generates tokens" in a pricing answer earned "Measure the live
    # context (prompt + history + generated) from the server")
    from trainer.drills.loader import load_rubric
    from trainer.marking.prose import concept_credit

    concept = load_rubric("capacity-policy").concept("measure-live-context")
    assert concept is not None
    text = ("Charge by reserved KV-time: a long session holds its KV for its whole life, "
            "whether or not it generates tokens.")
    assert concept_credit(concept, text)[0] == 0


# Right answers that said an idea in plain words and were told it was "not named" (W13, W14,
# W15, W19 and M3's list): each concept widened in general terms by a helper who never saw the
# scorer, every corpus figure the same and no wrong answer of the expert's graded otherwise.
SAID_PLAINLY = [
    # W13 (chunked-prefill-tpot__d2)
    ('serving-systems', 'chunk-ttft-tradeoff',
     'I used the measured 456 TFLOP/s. With ~14.9 ms left for matmuls, C ≈ 320. The '
     'pasting user waits ~26 x 25 ms ≈ 650 ms instead of ~250 ms, while 64 streams keep '
     'under 25 ms TPOT. vLLM: max_num_batched_tokens ≈ 384.'),
    # W14 (disaggregated-prefill__a)
    ('serving-systems', 'kv-transfer-cost',
     "Shipping a 4k prompt's 512 MiB of KV takes ~10.7 ms over 400 Gb/s IB, ~10% of the "
     '~112 ms prefill, so TTFT goes ~112 -> ~123 ms; over NVLink ~1.2 ms, negligible; over '
     '100 GbE ~43 ms, ~40%, where the transfer starts to eat the gain. It pays when '
     'prefills would otherwise interrupt decodes (TPOT targets with long prompts) and when '
     'the two phases want different parallelism or hardware. Sizing: one request costs '
     '~112 ms of prefill GPU and ~116 ms of decode GPU (512 steps of 14.5 ms shared by '
     '64), so about 1 prefill GPU per decode GPU for this mix (0.96); shorter prompts or '
     'longer replies shift it toward decode.'),
    # W15 (mixtral-moe-decode__b)
    ('architectures', 'moe-saves-flops-not-memory',
     'People often assume an MoE only needs memory for the parameters it uses per token. '
     "It doesn't: the router can send the next token to any expert, so all 46.7B "
     'parameters (93 GB in bf16) stay in HBM. The saving is in what a step reads: at batch '
     '1 only about 26 GB. At batch 64 almost every expert gets hit, so the step reads '
     'close to the full 93 GB.'),
    # W19 (prefix-caching__d)
    ('serving-engine', 'whole-blocks-shared',
     _RIGHT_ANSWER['prefix-caching']),
    # M3 (llama31-405b-h200-tp__r1)
    ('capacity-policy', 'kv-replication',
     _RIGHT_ANSWER['llama31-405b-h200-tp']),
    # M3 (mixtral-moe-decode__d)
    ('architectures', 'all-experts-resident',
     'sparse FFN: resident params = dense-47B (93 GB), so KV room is the same as dense. '
     'bytes streamed per step at bs=1 ~ 26 GB (top-2 of 8 routed FFNs + the shared '
     'attention/embeddings). once the batch is big the union of routed FFNs covers the '
     'whole set, weight traffic converges to the dense figure. compute per token stays '
     '~13B-ish regardless.'),
    # M3 (sliding-window-kv__a2)
    ('architectures', 'window-caps',
     'Mistral windows every layer, so at 32k each of the 32 layers keeps ~4,096 tokens: '
     '512 MiB instead of 4 GiB per session, 8x less, ~99 sessions vs 12. Gemma-2 windows '
     'only 21 of its 42 layers; the 21 global layers still hold all 32,768 tokens, so the '
     'session goes from ~11.3 GB to ~6.3 GB, just under half saved.'),
    # M3 (decode-roofline-vs-measured__f)
    ('serving-engine', 'attention-parallelism',
     'People sometimes blame the longer KV reads themselves, but the byte count is the '
     "same as 64x4k. It's parallelism: 8 sequences don't fill the SMs. Split-KV "
     '(flash-decoding) fixes it.'),
    # M3 (observed-concurrency-lower__a)
    ('diagnosis', 'activation-cuda-graph-memory',
     '1. Live context longer than the gateway logged: the prompts omit earlier turns and '
     'generated tokens. At ~6,800 tokens (two-thirds more) the card holds ~58 sessions, '
     'exactly the 40% gap; the tracing confirms it. This alone explains it. 2. Reserve '
     "underestimated: 10 GB instead of 4 GB gives 85 instead of 96, ~11% - real but can't "
     'explain 40% alone. 3. Block fragmentation: under 0.1% per session at 16-token '
     'blocks; negligible. 4. Reservation of max_model_len: would give 12 sessions, far '
     "worse than observed, and vLLM pages anyway, so it's ruled out."),
    # M3 (deepseek-v3-mla-h200__r1)
    ('architectures', 'mla-latent-compression',
     _RIGHT_ANSWER['deepseek-v3-mla-h200']),
]


@pytest.mark.parametrize(("rubric_id", "concept_id", "text"), SAID_PLAINLY)
def test_an_idea_said_in_plain_words_is_credited(rubric_id: str, concept_id: str,
                                                 text: str) -> None:
    from trainer.drills.loader import load_rubric
    from trainer.marking.prose import concept_credit

    concept = load_rubric(rubric_id).concept(concept_id)
    assert concept is not None and concept_credit(concept, text)[0] > 0


def test_a_cause_ruled_out_is_credited_when_denied_or_set_up_to_be_denied(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (M2: "Someone will say fragmentation. It isn't: … under 0.1%. Nor is it a max_model_len
    # reservation, which would leave 12 sessions" earned neither; the same in a list earned both)
    text = ("Someone will say fragmentation. It isn't: with 16-token blocks it's under 0.1%. "
            "Nor is it a max_model_len reservation, which would leave 12 sessions, not ~58.")
    graded = _grade(run, tmp_path, "observed-concurrency-lower", {"hypotheses": text})
    said = json.dumps(graded["rubric"])
    assert "'fragmentation' with '0.1%'" in said and "with '12'" in said


def test_a_cause_ruled_out_is_still_no_credit_beside_the_claim_that_it_is_the_cause(
        run: Callable[..., Result], tmp_path: Path) -> None:
    text = "It's fragmentation: the blocks waste about a third of the memory."
    graded = _grade(run, tmp_path, "observed-concurrency-lower", {"hypotheses": text})
    rubric = graded["rubric"]
    assert rubric["red_flags"] and rubric["dimensions"]["hypotheses"]["score"] == 0  # type: ignore[index]
