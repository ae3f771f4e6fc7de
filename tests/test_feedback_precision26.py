"""Stop 74: what the tool said wrongly of the blind sets BN (plain shared-doc answers) and BO
(verbose mids, terse code-review seniors), measured unread. The texts here are written for the
tests, not copied from a corpus. Each test of a fix failed before; each guard beside it
passes on both."""

from __future__ import annotations

from feedback_probes import claimed, evidence

from trainer.drills.loader import find_drill, load_rubric
from trainer.marking.prose import concept_credit

ROOFLINE = "decode-roofline-vs-measured"
LITTLE = "littles-law-capacity"
MIXTRAL = "mixtral-moe-decode"
MULTI = "multi-turn-growth"


# --- a counterfactual told with "had" ------------------------------------------------------

def test_a_counterfactual_with_had_claims_nothing_of_this_model() -> None:
    text = ("The step reads 15.01 GB. If the model had tied embeddings you'd still read that "
            "matrix because of the LM head.")
    assert "lm-head-tied" not in claimed(ROOFLINE, "embedding-why", text)


def test_the_head_said_to_be_tied_is_still_named() -> None:
    text = "The LM head is tied to the embedding, so that 1.05 GB is not read."
    assert "lm-head-tied" in claimed(ROOFLINE, "embedding-why", text)


# --- what another team is assuming ---------------------------------------------------------

def test_what_a_team_is_assuming_and_the_answer_turns_down_is_theirs() -> None:
    text = ("Product is working from the team's view: the team is assuming that 2,000 users "
            "online means 2,000 concurrent slots, but most of them are reading, not decoding.")
    assert "online-users-as-slots" not in claimed(LITTLE, "plan", text)


def test_the_slots_said_as_ones_own_are_still_named() -> None:
    text = "2,000 users online means 2,000 concurrent slots, so we buy about 22 GPUs."
    assert "online-users-as-slots" in claimed(LITTLE, "plan", text)


def test_a_claim_beside_what_the_team_assumed_is_still_the_answers_own() -> None:
    text = ("Each conversation keeps its KV resident between turns, while the team assumed "
            "about 309 chats per card.")
    assert claimed(MULTI, "why-overstated", text) != []


# --- a pitch put forward ---------------------------------------------------------------------

def test_a_pitch_named_and_judged_half_true_is_not_the_answers_claim() -> None:
    text = "The pitch that Mixtral is a 13B model at inference time is only half true."
    assert "active-size-at-inference" not in claimed(MIXTRAL, "what-moe-saves", text)


def test_the_pitch_said_plainly_is_still_named() -> None:
    text = "Mixtral is a 13B model at inference time, so it serves like one."
    assert "active-size-at-inference" in claimed(MIXTRAL, "what-moe-saves", text)


# --- claims whose words a right answer uses of something else ------------------------------

def test_a_transfer_fully_exposed_is_not_said_to_be_hidden() -> None:
    text = ("The decode side pulls the blocks after prefill completes, so the 10.7 ms is fully "
            "exposed unless a layer-wise connector overlaps it.")
    assert "transfer-fully-hidden" not in claimed("disaggregated-prefill", "when-it-pays", text)


def test_a_transfer_fully_overlapped_is_still_named() -> None:
    text = "The KV transfer is fully overlapped with the decode, so it costs nothing."
    assert "transfer-fully-hidden" in claimed("disaggregated-prefill", "when-it-pays", text)


def test_the_system_prompt_stored_once_is_no_history_shared() -> None:
    text = ("Turn on prefix caching so the 1,024-token system prompt is stored once and "
            "shared: about 77 chats instead of 64.")
    assert "prefix-caching-shares-history" not in claimed(MULTI, "policy", text)


def test_the_history_stored_once_and_shared_is_still_named() -> None:
    text = "With prefix caching each chat's history is stored once and shared across chats."
    assert "prefix-caching-shares-history" in claimed(MULTI, "policy", text)


def test_sharded_mha_beside_the_latents_figure_is_no_split_latent() -> None:
    text = ("Per GPU the advantage over sharded MHA drops from ~71x to ~9x (624,640 vs 70,272 "
            "B), and a GQA-8 model sharded 8 ways would beat it.")
    assert "latent-split-under-tp" not in claimed("deepseek-v3-mla-h200", "why-mla", text)


def test_the_latent_sharded_is_still_named() -> None:
    text = "Under TP=8 the 70,272 B latent is sharded 8 ways, about 8.8 KB per GPU."
    assert "latent-split-under-tp" in claimed("deepseek-v3-mla-h200", "why-mla", text)


# --- what an answer credits ----------------------------------------------------------------

def _credit(drill_id: str, concept_id: str, text: str) -> float:
    concept = load_rubric(find_drill(drill_id)[0].rubric).concept(concept_id)
    assert concept is not None
    return float(concept_credit(concept, text)[0])


def test_ttft_cut_by_skipping_the_prefill_is_the_saving_said() -> None:
    text = "Hits still cut TTFT by skipping the shared prefill."
    assert _credit("prefix-caching", "prefix-saves-prefill", text) > 0


def test_a_means_that_skips_does_not_undo_a_dismissal_before_it() -> None:
    text = "It is not the TTFT that drops, by skipping nothing."
    assert _credit("prefix-caching", "prefix-saves-prefill", text) == 0


def test_a_share_of_roofline_without_the_article_is_the_floor_said() -> None:
    text = ("Plain decode attention leaves half the SMs idle, so a single 32k sequence runs at "
            "22% of roofline, 17.91 vs 4.0 ms.")
    assert "of roofline" in evidence(ROOFLINE, {"long-why": text}, "limits")


# --- the forms a terse senior uses ---------------------------------------------------------

def test_a_weight_read_the_whole_batch_shares_is_the_read_amortised() -> None:
    text = ("Each step's cost is dominated by streaming the 138 GB of weights, which the whole "
            "batch shares; an extra user adds only its own 10.7 GB.")
    assert _credit("llama2-70b-mi300x", "weights-amortized", text) > 0


def test_long_context_in_its_own_quota_admitted_pool_is_a_separate_pool() -> None:
    text = ("max_model_len at the p99 real context, not 128k; long context in its own "
            "quota-admitted pool priced by KV-seconds.")
    assert "separate pool" in evidence("llama31-8b-h100", {"policy": text}, "levers").lower()


# --- BP's wrong answers left unheld ----------------------------------------------------------

def test_mqa_set_in_the_config_with_heads_averaged_at_load_is_named() -> None:
    text = ("I'd pick MQA. It gives 32 sequences, 4x the target, and it's just a config "
            "change: put num_key_value_heads=1 in config.json and the server averages the KV "
            "heads into one at load time.")
    assert "mqa-is-a-config-change" in claimed("llama2-70b-mi300x", "4f", text)


def test_a_prefix_cache_that_dedupes_each_history_across_users_is_named() -> None:
    text = ("Every history was already seen, so the prefix cache dedupes it across users and "
            "a session stores only its new message.")
    assert "prefix-caching-shares-history" in claimed(MULTI, "policy", text)


def test_max_model_len_budgeted_per_sequence_is_named_beside_a_whether() -> None:
    text = ("vLLM still budgets max_model_len per sequence at admission. That is what X says: "
            "53 requests at once whether they're 1k or 8k.")
    assert "vllm-reserves-max-model-len" in claimed("paged-blocks-vllm", "why-paging", text)


# --- what expert pass 86 found credited falsely ------------------------------------------------

def test_headroom_meaning_spare_room_earns_no_activation_reserve() -> None:
    text = "Recommend fp8 KV first; add int8 weights later if more headroom is needed."
    assert _credit("llama2-70b-mi300x", "activation-headroom", text) == 0


def test_headroom_said_of_memory_still_earns_it() -> None:
    text = "Keep 4 GB of headroom for activations and CUDA graphs out of the KV budget."
    assert _credit("llama2-70b-mi300x", "activation-headroom", text) > 0


def test_paging_the_cache_is_no_alert() -> None:
    text = "Under paging the only waste is under one block per request, so it cannot be 40%."
    assert _credit("observed-concurrency-lower", "alert-thresholds", text) == 0


# --- BQ's claims ---------------------------------------------------------------------------------

def test_a_multiplier_over_the_chat_price_is_no_chat_price() -> None:
    text = "Long sessions should cost more, maybe a multiplier over the chat price."
    assert "priced-like-chat" not in claimed("long-context-tier", "pricing", text)


def test_the_chat_price_for_long_sessions_is_still_named() -> None:
    text = "Charge long sessions the chat price per token; they send more tokens anyway."
    assert "priced-like-chat" in claimed("long-context-tier", "pricing", text)


def test_a_history_shared_across_turns_by_prefix_caching_is_named() -> None:
    text = ("Keep whole conversations: with prefix caching on, the history is shared across "
            "turns and stored once.")
    assert "prefix-caching-shares-history" in claimed(MULTI, "policy", text)


# --- the review of stop 74: excuses kept to what they excuse -----------------------------------

def test_a_claim_after_the_turn_that_answers_a_speech_tag_is_the_answers_own() -> None:
    text = ("Everyone is assuming the worst, but 2,000 users online means 2,000 concurrent "
            "slots, so we need 22 GPUs.")
    assert "online-users-as-slots" in claimed(LITTLE, "plan", text)


def test_an_if_after_the_claim_is_no_counterfactual() -> None:
    text = "The LM head is tied to the embedding, so that 1.05 GB is not read, if I had to guess."
    assert "lm-head-tied" in claimed(ROOFLINE, "embedding-why", text)


def test_what_the_answer_itself_would_be_tempted_to_do_keeps_its_credit() -> None:
    text = ("I'd be tempted to cap max_model_len per tier at the p99 context, but I'd check "
            "the tail first.")
    assert _credit("llama31-8b-h100", "per-tier-context-cap", text) > 0


def test_what_a_cause_would_come_to_opens_a_statement_not_a_list_of_terms() -> None:
    text = ("max_model_len reservation would give 12, an 88% gap, too big, and vLLM allocates "
            "on demand anyway; fragmentation is ~0.09%, rule it out.")
    said = evidence("observed-concurrency-lower", {"hypotheses": text}, "hypotheses")
    assert "'max_model_len reservation' with '12'" in said


# --- BR's claims ----------------------------------------------------------------------------

def test_kv_usage_watched_to_see_when_it_runs_out_is_no_alert_at_full() -> None:
    text = "Cap the context and turn on FP8 KV; monitor KV cache usage to see when we run out."
    assert "alert-at-full-usage" not in claimed("llama31-8b-h100", "policy", text)


def test_an_lm_head_that_only_runs_when_a_token_is_sampled_is_named() -> None:
    text = "The LM head only runs when a token is sampled, so its 1.05 GB drops out of the step."
    assert "lm-head-skipped" in claimed(ROOFLINE, "embedding-why", text)


def test_attention_copies_called_cheap_for_a_dense_model_are_named() -> None:
    text = ("Switch to DP attention: attention is only a small slice of a dense model, so "
            "copying its weights to every GPU is cheap.")
    assert "attention-copies-negligible" in claimed("llama31-405b-h200-tp", "fix", text)
