"""Issue 34: a text answer is credited for the claims it makes, not the words it uses. Each text
step lists the wrong claims an interviewer would flag; one made costs the concept it
contradicts, holds the answer to the junior anchor's credit and is said as a red flag; one
negated, refuted or spread over separate clauses is not made."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml
from click.testing import Result

from trainer.drills.loader import find_drill, load_rubric
from trainer.marking.claims import claims_made
from trainer.marking.lint import anchor_score
from trainer.marking.prose import concept_credit

Run = Callable[..., Result]
DRILL = "llama31-405b-h200-tp"
STEP = "why-less"
HALVES = "tp16-halves-kv-per-gpu"


def claimed(text: str) -> list[str]:
    return [made.claim.id for made in claims_made(find_drill(DRILL)[0].step(STEP), text)]


def grade(run: Run, tmp_path: Path, answer: str) -> dict:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(yaml.safe_dump({STEP: answer}), encoding="utf-8")
    return json.loads(run("grade", DRILL, "--answers", str(sheet), "--json", ok=False).output)


def test_a_wrong_claim_said_in_other_words_is_found() -> None:
    assert claimed("going to tp 16 means every gpu keeps half the kv heads, so kv per gpu is "
                   "halved and we fit 2x the users") == [HALVES]


def test_a_negated_claim_is_not_made() -> None:
    assert claimed("TP=16 does not halve the KV per GPU; each GPU still holds one KV head.") \
        == []


def test_a_claim_reported_to_refute_it_is_not_made() -> None:
    assert claimed("The classic mistake is to think TP=16 halves the KV heads per GPU. It "
                   "cannot: there are only 8.") == []


def test_parts_said_in_separate_clauses_are_not_a_claim() -> None:
    assert claimed("At TP=16 there are 16 GPUs, the weights per GPU halve, the KV heads stay "
                   "at one per GPU.") == []


def test_a_sentence_closed_inside_brackets_ends_before_the_next() -> None:
    # "(… rows are invisible: far below the ridge.) So aggregate doubles": the aside's FLOPs
    # and the next sentence's "doubles" are two statements, not "the compute doubles".
    step = find_drill("llama2-70b-mi300x")[0].step("5a")
    text = ("Bytes set a memory-bound step. (The extra FLOPs of 8 vs 4 rows are invisible: far "
            "below the ridge.) So aggregate doubles to 234 tok/s, per-user stays 29.3.")
    assert "compute-grows" not in [made.claim.id for made in claims_made(step, text)]


def test_unlike_negates_the_mention_after_it() -> None:
    concept = load_rubric("architectures").concept("gqa-kv-heads") or \
        load_rubric("kv-capacity").concept("gqa-kv-heads")
    assert concept is not None
    assert concept_credit(concept, "unlike gqa, the latent cache is one vector per token")[0] \
        == 0


def test_grade_json_says_the_wrong_claim_and_raises_it_as_a_red_flag(run: Run,
                                                                    tmp_path: Path) -> None:
    out = grade(run, tmp_path, "With TP=16 each GPU has half as many KV heads, so the KV per "
                               "GPU halves and the 3x budget should give 3x the sessions.")
    assert [c["id"] for c in out["rubric"]["wrong_claims"]] == [HALVES]
    assert any(flag["id"] == HALVES and "cannot halve" in flag["says"]
               for flag in out["rubric"]["red_flags"])


def test_a_contradicted_concept_earns_nothing(run: Run, tmp_path: Path) -> None:
    out = grade(run, tmp_path, "Past TP=8 the heads get replicated, but at TP=16 each GPU has "
                               "half the KV heads, so the KV per GPU halves.")
    # (the idea is said too, "the heads get replicated": held beside the claim, not credited)
    replicated = next(e for d in out["rubric"]["dimensions"].values() for e in d["evidence"]
                      if e.startswith("Past the KV-head count"))
    assert "no credit beside the wrong claim in why-less" in replicated


def test_a_fluent_wrong_answer_scores_at_most_the_junior_anchor() -> None:
    drill = find_drill(DRILL)[0]
    rubric = load_rubric(drill.rubric)
    anchors = drill.step(STEP).anchors
    assert anchors is not None
    wrong = ("There are 8 KV heads and 16 GPUs, so at TP=16 each GPU holds half a KV head's "
             "worth: the KV per GPU halves to 15.75 KiB per token while the weights split 16 "
             "ways, an eighth to a sixteenth per GPU, so the budget grows 3x; sessions should "
             "reach 58 -> 174 per job, and the measured 87 is scheduler overhead.")
    assert anchor_score(drill, rubric, STEP, wrong) <= \
        anchor_score(drill, rubric, STEP, anchors["junior"])


def test_the_model_answer_makes_no_wrong_claim_and_raises_no_flag(run: Run,
                                                                 tmp_path: Path) -> None:
    out = grade(run, tmp_path, find_drill(DRILL)[0].step(STEP).model_answer or "")
    assert out["rubric"]["wrong_claims"] == []
    assert out["rubric"]["red_flags"] == []


def test_more_room_for_the_kv_is_not_headroom_for_activations() -> None:
    concept = load_rubric("kv-capacity").concept("activation-headroom")
    assert concept is not None
    assert concept_credit(concept, "fp8 weights leave more room for kv, so more sessions")[0] \
        == 0
    assert concept_credit(concept, "leave room for activations and cuda graphs, ~4 GB")[0] == 1


def edited_drill(tmp_path: Path, change: Callable[[dict], None]) -> Path:
    data = yaml.safe_load(find_drill(DRILL)[1].read_text(encoding="utf-8"))
    change(next(s for s in data["steps"] if s["id"] == STEP))
    path = tmp_path / f"{DRILL}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def test_lint_fails_a_claim_that_a_right_anchor_makes(run: Run, tmp_path: Path) -> None:
    def widen(step: dict) -> None:
        claim = next(c for c in step["wrong_claims"] if c["id"] == HALVES)
        claim["parts"] = [["tp=16"], ["head"]]

    result = run("lint", str(edited_drill(tmp_path, widen)), ok=False)
    assert result.exit_code == 1
    assert f"makes the wrong claim {HALVES!r}" in result.output


def test_lint_fails_a_wrong_anchor_that_makes_no_claim(run: Run, tmp_path: Path) -> None:
    def blunt(step: dict) -> None:
        step["anchors"]["wrong"] = "Sessions depend on many things; it is hard to say."

    result = run("lint", str(edited_drill(tmp_path, blunt)), ok=False)
    assert "the wrong anchor makes none of the step's wrong claims" in result.output


def test_lint_wants_a_wrong_anchor(run: Run, tmp_path: Path) -> None:
    def drop(step: dict) -> None:
        del step["anchors"]["wrong"]

    result = run("lint", str(edited_drill(tmp_path, drop)), ok=False)
    assert "no wrong anchor" in result.output


def test_wrong_claims_on_a_numeric_step_are_refused_in_one_line(run: Run,
                                                               tmp_path: Path) -> None:
    data = yaml.safe_load(find_drill(DRILL)[1].read_text(encoding="utf-8"))
    numeric = next(s for s in data["steps"] if s.get("kind", "numeric") == "numeric")
    numeric["wrong_claims"] = [{"id": "x", "says": "no", "parts": [["a"]]}]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    result = run("lint", str(path), ok=False)
    assert result.exit_code in (1, 2)
    assert "`wrong_claims` belong to text steps" in result.output
    assert "Traceback" not in result.output


def test_a_counterfactual_claims_nothing() -> None:
    assert claimed("If the model had 16 KV heads it were different: TP=16 halves the KV per "
                   "GPU then.") == []


def test_a_subject_set_up_before_a_comma_still_makes_the_claim() -> None:
    # Two claims: the subject set up before the comma halves the KV, and the heads split.
    assert claimed("At TP=16 each of the 8 KV heads is split across two GPUs, 64 of its 128 "
                   "dims each, so per GPU the KV per token halves.") == [
                       HALVES, "head-split-across-gpus"]


def test_a_subject_before_and_does_not_reach_the_next_statement() -> None:
    assert claimed("We moved to TP=16 last week and, for the record, half the KV heads stay "
                   "replicated on each GPU.") == []


def test_two_statements_joined_by_and_are_two_spans() -> None:
    assert claimed("TP=16 adds GPUs and half the KV heads stay replicated on each.") == []


def test_a_not_equal_sign_negates() -> None:
    assert claimed("TP=16 != half the KV heads per GPU; each still holds one.") == []


def test_a_sentence_that_supposes_claims_nothing() -> None:
    assert claimed("Ignore the replication and TP=16 halves the KV heads per GPU; it cannot.") \
        == []


def test_nothing_negates_like_not() -> None:
    concept = load_rubric("kv-capacity").concept("prefix-caching")
    assert concept is not None
    assert concept_credit(concept, "nothing is shared by prefix caching here")[0] == 0


def claimed_in(drill: str, step: str, text: str) -> list[str]:
    return [made.claim.id for made in claims_made(find_drill(drill)[0].step(step), text)]


def test_tensor_parallelism_said_to_shrink_a_session_is_a_claim_unless_negated() -> None:
    # Splitting a session's KV over two cards is not making it smaller.
    said = "Sharding the KV across a pair of cards doubles the sessions the pool holds."
    denied = ("TP=2 does not make a session cheaper: it still needs 16 GiB, 8 GiB on each of "
              "two cards.")
    assert "tp-halves-the-session" in claimed_in("long-context-tier", "pool-policy", said)
    assert "tp-halves-the-session" not in claimed_in("long-context-tier", "pool-policy", denied)


def test_every_token_through_all_experts_is_a_claim_a_batch_touching_them_is_not() -> None:
    made = claimed_in("deepseek-v3-mla-h200", "experts-and-levers",
                      "The gate is soft, so each token is processed by all 256 experts with "
                      "small weights.")
    batch = claimed_in("deepseek-v3-mla-h200", "experts-and-levers",
                       "Across a batch the tokens touch all 256 experts, so every expert must "
                       "stay resident.")
    assert "every-token-uses-all-experts" in made
    assert "every-token-uses-all-experts" not in batch


def test_what_tied_embedding_models_do_describes_other_models() -> None:
    text = ("The LM head (untied here) is a real GEMV, so it stays in; for tied-embedding "
            "models the matrix is read anyway as the LM head.")
    assert "lm-head-tied" not in claimed_in("decode-roofline-vs-measured", "embedding-why", text)
    assert "lm-head-tied" in claimed_in("decode-roofline-vs-measured", "embedding-why",
                                        "The LM head is tied to the embedding, so it is one "
                                        "row per token too.")


def test_the_kv_said_to_be_shared_by_the_batch_is_a_claim_unless_reported() -> None:
    said = ("As the batch grows the KV cache is amortized across the batch just like the "
            "weights, so intensity rises linearly.")
    reported = ("People think the KV cache is amortized across the batch like the weights; "
                "each sequence reads its own.")
    assert "kv-shared-across-the-batch" in claimed_in("prefill-vs-decode", "why-two-regimes",
                                                      said)
    assert "kv-shared-across-the-batch" not in claimed_in("prefill-vs-decode",
                                                          "why-two-regimes", reported)


def test_a_partial_block_said_shared_on_write_is_a_claim_unless_negated() -> None:
    said = ("The leftover block of 208 tokens is still shared until a session writes past "
            "it.")
    denied = ("The partial block is never shared; copy-on-write only applies to forks like "
              "beam search.")
    assert "partial-block-shared-on-write" in claimed_in("prefix-caching", "block-size-why", said)
    assert claimed_in("prefix-caching", "block-size-why", denied) == []


def test_an_equation_that_ends_a_longer_one_is_not_claimed_alone() -> None:
    # "n_kv x d_head = 1,024" states the KV width, not that d_head is 1,024.
    step = find_drill("llama2-70b-mi300x")[0].step("1b")
    right = "d_kv = n_kv x d_head = 1,024, not hidden 8,192."
    wrong = "each head is narrow here: d_head = 1,024 / 8 heads of KV."
    assert "head-dim-from-kv-heads" not in [m.claim.id for m in claims_made(step, right)]
    assert "head-dim-from-kv-heads" in [m.claim.id for m in claims_made(step, wrong)]


def test_moving_toward_compute_bound_is_no_claim_that_decode_is() -> None:
    step = find_drill("prefill-vs-decode")[0].step("why-two-regimes")
    said = "a bigger decode batch moves it toward compute bound"
    assert "decode-compute-bound" not in [m.claim.id for m in claims_made(step, said)]


def test_an_excuse_the_sentence_denies_excuses_nothing() -> None:
    # "the mean" excuses a p99 plan that keeps the mean as its base; "not the mean" rejects it.
    said = "Capacity has to be planned on the p99 context, not the mean, since any slot may " \
           "get a 32k request."
    excused = "Plan capacity on the mean context plus headroom; the p99 sets max_model_len."
    assert "size-every-request-at-p99" in claimed_in("littles-law-capacity", "plan", said)
    assert "size-every-request-at-p99" not in claimed_in("littles-law-capacity", "plan",
                                                         excused)


def test_vllm_said_to_reserve_max_model_len_per_request_is_a_claim_unless_negated() -> None:
    said = ("Leave the cap at 128k and vLLM preallocates the full context for each request it "
            "admits, so only a handful of chats run at once.")
    denied = ("vLLM does not reserve max_model_len for each request: blocks are handed out as "
              "tokens arrive, so the cap matters only when long requests come.")
    assert "max-model-len-reserved-per-request" in claimed_in("llama31-8b-h100", "policy", said)
    assert "max-model-len-reserved-per-request" not in claimed_in("llama31-8b-h100", "policy",
                                                                  denied)


def test_fp8_kv_said_to_stream_at_fp16_width_is_a_claim_unless_reported() -> None:
    said = ("The step gets slower: the kernel has to widen fp8 to fp16 first, so the cache is "
            "effectively read at fp16 width.")
    reported = ("A common misconception is that the cache is read at fp16 width; it is widened "
                "in registers after the load.")
    assert "fp8-kv-read-at-fp16-width" in claimed_in("llama2-70b-mi300x", "5a", said)
    assert "fp8-kv-read-at-fp16-width" not in claimed_in("llama2-70b-mi300x", "5a", reported)


def test_a_second_card_said_to_double_the_kv_budget_is_a_claim_unless_negated() -> None:
    said = "Keep it MHA on two MI300X with TP=2: the budget doubles, so a 32k user fits."
    denied = ("A second card does not just double the budget: the weights are split, so 226 "
              "GB is left for KV.")
    assert "tp2-doubles-kv-budget" in claimed_in("llama2-70b-mi300x", "2d", said)
    assert "tp2-doubles-kv-budget" not in claimed_in("llama2-70b-mi300x", "2d", denied)
