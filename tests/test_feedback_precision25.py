"""Stop 73: what the tool said wrongly of answers typed tired, at 80 columns, in a practice
run from a fresh install, and of the blind sets measured this stop. The texts here are written
for the tests, not copied from a corpus. Each test of a fix failed before; the guards beside
them pass on both."""

from __future__ import annotations

from feedback_probes import evidence

B8 = "llama31-8b-h100"


# --- a lever set, typed short ------------------------------------------------------------------

def test_a_cap_typed_short_is_a_setting_explained() -> None:
    text = ("cap max_model_len near real p99 ctx, long ctx in a separate pool. fp8 kv -> ~2x "
            "sessions (194).")
    said = evidence(B8, {"policy": text}, "levers")
    assert "'max_model_len' with 'p99'" in said and "listed, not explained" not in said


def test_a_cap_among_bare_terms_is_still_a_term_listed() -> None:
    said = evidence(B8, {"policy": "max_model_len cap, separate pool, fp8 kv, quotas"}, "levers")
    assert "listed, not explained" in said
