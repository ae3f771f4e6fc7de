"""Stop 61: what the blind corpora AP (markdown notes: headings, bold labels, tables, ✅/❌
marks) and AQ ("it depends" reasoning: cases, hypotheticals, rules with their conditions)
showed the tool saying wrongly when measured unread. The texts here are written for the tests,
not copied from the corpora."""

from __future__ import annotations

from feedback_probes import claimed


def test_an_idea_crossed_out_in_notes_is_no_claim() -> None:
    text = ("- ❌ max_model_len reservation: vLLM pages the cache in 16-token blocks, nothing "
            "is reserved up front\n- ✅ the 4,096 average left out the generated tokens")
    assert "vllm-reserves-max-model-len" not in claimed("observed-concurrency-lower",
                                                        "hypotheses", text)


def test_an_idea_ticked_in_notes_is_still_claimed() -> None:
    text = ("- ✅ max_model_len reservation: vLLM reserves the whole 32k for every running "
            "request, which easily explains the 40%")
    assert "vllm-reserves-max-model-len" in claimed("observed-concurrency-lower",
                                                    "hypotheses", text)


def test_a_heading_that_names_two_schemes_is_no_claim() -> None:
    text = ("### Paging vs reserving max_model_len\n"
            "Paging hands out 16-token blocks as a sequence grows, so a short request holds "
            "only what it uses.")
    assert "vllm-reserves-max-model-len" not in claimed("paged-blocks-vllm", "why-paging", text)


def test_a_word_closing_the_sentence_before_does_not_void_a_report() -> None:
    # "… as decode gets. Wrong: …" is no "got wrong" (what a draft guessed)
    text = ("At batch 96 the matmuls are as efficient as decode gets.\n"
            "- ❌ \"batch 1 is compute-bound\": its 16 GFLOP take microseconds against a 3 ms "
            "memory floor.")
    assert "decode-compute-bound" not in claimed("decode-roofline-vs-measured", "batch1-why",
                                                 text)


def test_a_rule_stated_with_its_condition_is_no_claim_about_this_case() -> None:
    text = ("It starts, just: X comes to about 1.08. vLLM refuses to start if one request at "
            "max_model_len doesn't fit, but here one does.")
    assert "refuses-here" not in claimed("paged-blocks-vllm", "refusal", text)


def test_the_refusal_said_of_this_case_is_still_claimed() -> None:
    text = "It refuses to start: X = 0.93, not enough memory for one 131,072-token request."
    assert "refuses-here" in claimed("paged-blocks-vllm", "refusal", text)


def test_a_what_if_judged_too_much_is_no_claim() -> None:
    text = ("Every expert stays resident. Subtracting only the 37B active parameters would "
            "leave about 946 GB of budget, three times too much.")
    assert "only-active-experts-resident" not in claimed("deepseek-v3-mla-h200",
                                                         "experts-and-levers", text)


def test_the_active_parameters_subtracted_as_a_plan_are_still_claimed() -> None:
    text = ("Only the 37B active parameters need to be resident, so the budget is about "
            "946 GB and the sessions triple.")
    assert "only-active-experts-resident" in claimed("deepseek-v3-mla-h200",
                                                     "experts-and-levers", text)


def test_a_proposal_quoted_to_weigh_it_is_no_claim() -> None:
    text = ('The proposal was "a second node and TP=16 to double the capacity". Per GPU the '
            "budget doubles but each token's KV does not halve: 8 KV heads are copied.")
    assert "tp16-doubles-sessions" not in claimed("llama31-405b-h200-tp", "why-less", text)


def test_a_proposal_endorsed_is_still_claimed() -> None:
    text = "The proposal is right: a second node at TP=16 doubles the capacity."
    assert "tp16-doubles-sessions" in claimed("llama31-405b-h200-tp", "why-less", text)


def test_what_you_said_is_reported_not_claimed() -> None:
    text = ('You said "2,000 users online, so 2,000 concurrent slots". A user reading the reply '
            "holds no KV: only requests in flight do, L = λ × W ≈ 238.")
    assert "online-users-as-slots" not in claimed("littles-law-capacity", "plan", text)


def test_a_struck_out_first_thought_is_no_claim() -> None:
    text = ("At TP=16 there are 8 KV heads for 16 GPUs, so ~~each GPU gets half a head~~ EDIT: "
            "a head cannot be split, each GPU keeps one and every head is stored twice.")
    assert "tp16-halves-kv-per-gpu" not in claimed("llama31-405b-h200-tp", "why-less", text)


def test_a_right_idea_struck_out_for_a_wrong_one_makes_the_wrong_claim() -> None:
    text = ("~~Each GPU keeps a whole head~~ EDIT: at TP=16 each GPU holds half a KV head, so "
            "the KV per GPU halves.")
    assert "tp16-halves-kv-per-gpu" in claimed("llama31-405b-h200-tp", "why-less", text)


def test_ones_own_first_thought_reported_to_correct_it_is_no_claim() -> None:
    text = ('Only n_kv differs, 64 against 8, so the ratio is 8. (I first wrote "GQA has fewer '
            'query heads". Wrong: both keep 64 query heads.)')
    assert "query-heads-shrink" not in claimed("llama2-70b-mi300x", "2c-why", text)
