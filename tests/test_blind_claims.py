"""Issue 34 on answers written blind to the scorer: tests/corpus/blind_claims_{a,b,c,d}.yaml each
hold, for all 43 text steps, a junior, mid, senior, buzzword-list and fluent wrong answer by a
writer who read only `kvdrill show`, `kvdrill solution`, the seeds and the reference notes; A
was used to develop the matcher and the claims, B was looked at in aggregate while doing so, C
was written last and measured once. blind_text_answers_all.yaml (issue 22) has the first four
kinds. Each answer is graded alone (`tests/claims_report.py` prints every figure and miss).

The thresholds below are the figures measured (ordered, buzzwords held, wrong held, right
answers said to make a wrong claim), not targets. C, measured the first time: 35, 39, 26 and 4
false claims; the four were general faults (a sentence that supposes, "nothing" not read as a
negation, "lets" and billing words in two claims) and their fixes give the figures below. C was
then looked at, and its wrong-held figure rose with the claims written afterwards.

D was written in a later session by a helper who read only show, solution, the seeds and the
references, before 115 more wrong claims were written by another who never opened it: at the
commit before them D measured 29, 43, 20, 0; after them 29, 43, 22, 0 (claims caught 16 → 19 of
43). D is the honest figure for answers nobody here has read: wrong answers held on half the
steps. A claim's subject may open its sentence before a comma ("At TP=16 each head is split,
so per GPU the KV halves"), though not across an "and" that starts another statement:
B 34 → 34, D 22 → 23.

E was written blind in the next session (read only list, show, solution, the seeds and the
references; no scorer run) and measured at its first run: 39, 43, 29, 1 before that rule, 39,
43, 30, 1 with it.

D was then worked on (its wrong answers and its senior < mid failures read, each fixed for
the misconception or the senior form in general, never D's words; A, B, C and
blind_text_answers_all as the precision check, no right answer said to claim wrongly):
ordered A 41 → 42, B 32 → 35, C 39 → 42, D 29 → 40, blind_text_answers_all 42 → 43; wrong
held B 34 → 42, C 36 → 42, D 23 → 41. Causes: claims for the misconceptions D's wrong answers
hold (and B's and C's, the same ones said other ways), over-broad `unless` phrases narrowed;
precise senior forms ("8.72 MB, constant", "min(T, 4096)", "one read serves every user",
"layer-wise push (LMCache)", "non-KV memory"); accidental off-step credits removed ("memory
is", "kv memory", "generation tokens", "6 turns"); a dismissal no longer read past its own
clause; "breaks" is a verb of effect; a terse item that states a figure and what happens to
it ("32 chat sessions displaced") is a claim, not a listed term. E, not opened while this was
done and measured once after it: 39, 43, 30, 1 → 38, 43, 32, 1. That is the honest figure of
the round: what D's fixes carried to answers nobody here had read is two wrong answers held,
and one more senior below its mid.

E has been read since, for its one right answer said to claim wrongly: a sentence that states
what a global cap does ("means any request can grow into that and start preempting chat") was
read as recommending it; preemption now reports the harm, as displacing does: 39, 43, 32, 0.

F (stop 45), written blind by another helper from list/show/solution/seeds/references alone,
measured once before anyone here read it: 33, 43, 35, and 5 right answers said to claim
wrongly (3.9% of 129, every one a senior: "no replication", "the latent has no head axis",
"compute per step doubles", "only KV-efficient up to 8 ranks", "raising max_model_len
globally turns every chat replica into a victim"). Read since: those five fixed by narrowing
their claims ("forgot" tried as a report word and dropped: "you both forgot to multiply"
accuses while it claims), claims for F's misconceptions in general terms (a GEMV on "a single
row", "compute-latency bound", sizing "on the tail", the utilisation applied after the
weights, top-k cut at inference, swaps "run on the SMs"), over-broad `unless` words narrowed
("serve", "pool", "fit", "208", "overlapped" excused wrong claims), seniors' precise forms
("1 head/GPU", "61.6 TFLOP ÷ 550 TFLOP/s"): 40, 43, 43, 0.

G (stop 45, after F's work), written blind by a third helper asked for subtler misconceptions
(a per-request limit read as a per-card one, a transfer "hidden by default", the first chunk
the costliest, intensity growing with context), measured once unread: 34, 43, 24, and 2 of
129 right answers said to claim wrongly (1.6%). That is this round's honest figure: F's claims
carried to 24 of G's 43 wrong answers. Read since: the two false claims narrowed ("while the
real constraint", "increasing … or decreasing"), a wrong claim holds every concept of its step
to a quarter of one at most (not to whatever the drill's junior anchor earns), claims for G's
misconceptions in general terms: 36, 43, 34, 0; A-F unchanged but D's wrong held 41 → 42.

H (stop 46), written blind by a fourth helper asked for misconceptions real candidates hold,
measured once unread: 29, 43, 27, and 2 of 129 right answers said to claim wrongly (1.6%), both
seniors: "(… far below the ridge.) So aggregate doubles" read as one sentence (a sentence now
ends at a full stop inside brackets or quotes: F's ordered 40 → 39, the one senior whose aside
was split), and a sentence about other, tied-embedding models. A long reasoned clause is no
longer swept into the list of terse terms after it (H ordered 29 → 30). Then another helper,
who never opened I, wrote claims for H's sixteen unheld misconceptions in general terms:
31, 43, 43, 0, A-G unchanged.

I (stop 46), written blind by a fifth helper (one central wrong claim per answer, phrased as a
number, a cause or a recommendation), measured unread at the commit before H's claims: 37, 43,
22, 2; after them, still unread: 37, 43, 23, 2. That is the round's honest figure: H's claims
carried to one of I's wrong answers, and half of a new corpus's fluent wrong answers still
earn their vocabulary's credit. I's two false claims were then read and fixed in general: an
equation that ends a longer one ("n_kv x d_head = 1,024") is not its last name's equation, and
a batch moving "toward" compute-bound is not decode being compute-bound: 37, 43, 23, 0.
Another helper, who never opened J, then wrote claims for I's twenty unheld misconceptions:
I 37, 43, 43, 0.

J (stop 46), written blind by a sixth helper asked for subtle misconceptions (a mechanism in
the wrong regime, a factor misplaced, a feature credited with an effect it lacks), measured
unread: 37, 43, 17, 1 at the commit before I's claims; 37, 43, 19, 1 after them. Its false
claim (expert parallelism "across 2+ nodes" read as within the node) fixed: 38, 43, 19, 0.

A review of the feedback a candidate reads (/tmp/feedback1.md: 456 sentences, 9.6% wrong or
misleading; text claims and credits 19%) found a bare "page" crediting the alerting concept
for "vLLM pages anyway": it now needs "page on", "page the" …; D's ordered 40 → 39, the senior
whose ranking rested on that false credit."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from tests.claims_report import report

# corpus: (ordered, buzzwords held, wrong held) of 43 steps at least, wrong claims said of
# right answers (of 129) at most.
MEASURED = {
    # (stop 51: depth became half of a text dimension, full at sixteen clauses and figures,
    # and every floor below that moved was raised to what it measured after) (stop 68: 41, its
    # hypotheses senior no longer credited "measure the live context" for naming the live
    # context as the cause: expert pass 63, C3)
    "blind_claims_a.yaml": (41, 43, 43, 0),
    "blind_claims_b.yaml": (36, 42, 42, 0),
    "blind_claims_c.yaml": (43, 42, 42, 0),
    # (stop 58: D and K 40 and 34 ordered, R 11: "2×" alone stopped earning the KV formula's
    # factor of K and V, which had lifted seniors saying "fp8 at 2×B" above mids saying the
    # same in words; R's mid now earns the KV transfer it states as "transfer: IB …")
    "blind_claims_d.yaml": (40, 43, 43, 0),
    # (stop 70: E, O and Y one fewer ordered, AT one fewer wrong held: their seniors' credit for
    # "States the cache dtype" came from "70.6 GB of fp8 weights", for what MLA caches from "an
    # FP8 latent cache", for TP's all-reduces from PP's "1 inter-node hop/step", all false
    # credit by expert pass 71 (C4-C6, C13, C16-C18); what is left below is a senior's "what it
    # buys: (1) memory — …" that names no phrase of the idea)
    "blind_claims_e.yaml": (41, 43, 38, 0),
    "blind_claims_f.yaml": (43, 43, 43, 0),
    "blind_claims_g.yaml": (40, 43, 38, 0),
    # (stop 73: H one fewer ordered, blind_text_answers_all one fewer buzzword list held, when a
    # spaced slash between figures came to read as a division ("136 GB / 6.7 TB/s = 20.2 ms"
    # is one item that computes, not two terms): H's tp-trade senior 5.13 against its mid
    # 5.17, and "64 / 8 = 8x" in a list now computes; over all 63 corpora ordered 2,443 →
    # 2,455, buzzword lists held 2,660 → 2,659, and every floor that rose was raised)
    "blind_claims_h.yaml": (38, 43, 43, 0),
    "blind_claims_i.yaml": (42, 43, 43, 0),
    "blind_claims_j.yaml": (41, 43, 43, 0),
    # K and N lost one each when "the state is fixed" came to read as "fixed state": a right
    # junior answer ("half of layers are windowed") now earns what its mid did
    # (stop 64: its embedding-why senior, "use 15.01 for the roofline", had earned "the
    # roofline is a floor" for the word alone, the drill's own name: 34 → 33)
    "blind_claims_k.yaml": (34, 43, 43, 0),
    # (stop 70: L one fewer ordered, BB one fewer buzzword list held: their long-context
    # pricing mid and senior no longer earn "a separate pool" for naming the product's "long
    # tier", expert pass 71's C21; the senior's "pins 16GiB vs 512MiB (32x)" names no phrase
    # of the idea it states)
    "blind_claims_l.yaml": (35, 43, 42, 0),
    # corpus M, measured unread: 28 / 43 / 36 / 6 (six right answers said to claim wrongly)
    "blind_claims_m.yaml": (36, 43, 39, 0),
    # corpus N, measured unread: 37 / 41 / 29 / 0
    # (and one wrong held less, 29 → 28, when "2 GPUs" stopped earning the TP-cost concept:
    # the junior it lifted had said "copied on two GPUs" of a KV head, no cost at all)
    # (and one ordered less, 37 → 36, in stop 54: its mid answer's rejected hypothesis
    # "max_model_len reserved per request" no longer earns the KV-levers concept of the action)
    # (and two more, 36 → 34, when numbers said in words were read as figures: N's spoken
    # mids are as quantified as its typed seniors, "five twelve latent … seventy K bytes",
    # and now count so; its buzzword lists held one more, 41 → 42)
    "blind_claims_n.yaml": (35, 42, 43, 0),
    # corpus O (stop 49), measured unread: 33 / 42 / 33 / 0; then a helper who never opened P
    # wrote claims for the unheld wrong answers of L, N and O in general terms
    "blind_claims_o.yaml": (36, 43, 43, 0),
    # corpus P (stop 49), written blind and measured unread after every change of the stop:
    # the honest figure of the round
    "blind_claims_p.yaml": (42, 43, 39, 0),
    # corpus Q (stop 50), spoken interview transcripts, written blind; measured unread:
    # 27 / 40 / 39 / 3. Then the three right answers said to claim wrongly were read, and a
    # claim's excuse in a "while" clause about something else stopped excusing it
    # then claims for its wrong answers left unheld, in general terms (40 → 42)
    "blind_claims_q.yaml": (30, 41, 43, 0),
    # corpus R (stop 50), team-chat answers written blind; measured unread: 12 / 41 / 36 / 3.
    # Its seniors are mostly shorter than its mids and match fewer concepts: ordering is the
    # weak figure. The three right answers said to claim wrongly were then read and fixed,
    # and a terse "saves: FLOPs" came to read as "saves flops" (12 → 13 ordered).
    # Then claims for its wrong answers left unheld, in general terms (36 → 39).
    # (stop 57: 13 ordered, its 2c-why mid now credited for the statement that opens its list
    # of unchanged terms, above its four-word senior)
    # (stop 74: 11 → 10, its 4f senior's "int8 weights as next headroom" no longer earns the
    # activation headroom: "headroom" alone is also spare room for KV, expert pass 86, A053)
    "blind_claims_r.yaml": (10, 43, 41, 0),
    # corpus S (stop 51), a shared doc typed by candidates whose first language is not
    # English, written blind; measured unread at the start of the stop: 37 / 42 / 36 / 2 (41 /
    # 42 / 35 / 2 after depth became half of a text dimension). Then a helper narrowed the two
    # claims that fired on right seniors and wrote claims, in general terms, for its eight
    # wrong answers left unheld
    "blind_claims_s.yaml": (43, 42, 43, 0),
    # corpus T (stop 51), a 600-character assessment form by engineers of adjacent fields who
    # reason by analogy, written blind; measured unread at the end of the stop's marking
    # changes: 33 / 43 / 34 / 2. Then a helper narrowed the two claims that fired on right
    # answers and wrote claims, in general terms, for its nine wrong answers left unheld
    "blind_claims_t.yaml": (40, 43, 43, 0),
    # corpus U (stop 52), mock-interview answers spoken aloud and captured by speech-to-text
    # (numbers spelled out), written blind; measured unread: 38 / 28 / 34 / 4. Then the four
    # right answers said to claim wrongly were read and their claims narrowed ("batch one",
    # "doesn't show up", a bare "memory usage", "draft tokens"), and a word of reporting
    # after "got" ("the tokens the draft got wrong") stopped excusing a claim. Its bare
    # lists of terms are mostly equations with their figures (14 held above the mid): left
    # (stop 54: numbers said in words read as figures, "forty percent", "five twelve": its
    # buzzword lists held 29 → 35, wrong answers held 35 → 38)
    "blind_claims_u.yaml": (42, 40, 38, 0),
    # corpus V (stop 52), answers polished like a chat assistant's (bold, bullets, "In short"),
    # written blind; measured unread: 39 / 42 / 40 / 6. Then the five right answers said to
    # claim wrongly were read: a hedged "might" with heavier quantisation, a risk listed,
    # "monitor GPU memory" (watching it is the claim, not monitoring), "Here the pitch holds"
    # after its batch-1 figures, "n_kv × d_head (1,024)"; and two wrong answers left unheld got
    # claims in general terms (K and V fused under GQA; preemptions as a target)
    "blind_claims_v.yaml": (43, 43, 43, 1),
    # corpus W (stop 53), candidates who name a belief to reject it ("people assume X, but",
    # "not A, it's B"), written blind; measured unread: 38 / 42 / 34 / 5. Markdown emphasis
    # read as the word it marks (V rose to 43 / 43 / 43 with it); a belief given to others,
    # the condition of a denied value, a figure sized against the budget and a verdict said
    # of the claim's own subject ("KV usage gauges are misleading") read as such; wrong
    # answers left unheld got phrases in general terms. Left: a senior answer that denies the
    # p99 "either:" before it sizes it, and "watch gpu memory" in a junior answer (vLLM's
    # memory reads full whatever the load: the claim is right to flag it)
    "blind_claims_w.yaml": (42, 43, 42, 2),
    # corpus X (stop 53), whiteboard notes typed into a doc: Markdown tables, "Why:" lines,
    # arrows, inline equations; written blind; measured unread: 36 / 41 / 34 / 4. Then its
    # false claims were read: a figure spaced "38.4 / 4" read as two side by side (as a
    # table's cells are), "vs 3 needed" beside the 2,000-slot figure, "the MoE version of
    # forgot-weights". Left: "watch gpu memory" in a junior answer (the claim is right)
    # (stop 59: two wrong answers held once a table's rows were read apart and "both are
    # bandwidth-bound" said of prefill and decode was claimed)
    "blind_claims_x.yaml": (40, 42, 40, 1),
    # corpus Y (stop 54), terse experts and wordy juniors: seniors in one to four dense lines,
    # juniors long and hedged; written blind; measured unread: 13 / 43 / 40 / 8. Its seniors
    # match fewer concept phrases than its mids (as R's do): ordering is the weak figure. Of
    # its false claims, two were questions ("maybe you could offload some experts to the
    # CPU?"), now not read as said; the six left are junior answers that do say, hedged, what
    # the claim says (fragmentation "could be a big one", K and V "for the 64 heads")
    # (stop 64: its 3c-explain mid, "read the whole 138 GB model", came to earn the memory-bound
    # concept a figure had interrupted, and ties its one-line senior: 14 → 13)
    # (stop 64, again: a working that names another lever, "DP attention -> 16 -> ~88 seqs",
    # no longer quantifies the lever beside it; its experts-and-levers senior ties its mid)
    # (stop 68: 11, its hypotheses senior as corpus A's, expert pass 63, C3)
    # (stop 76: 42 held; a junior who reads nvidia-smi's memory and would buy GPUs "if memory
    # is full" is now said to, once "something else is wrong" later in its sentence stopped
    # reporting it: the claim is right to flag it, as in W and X)
    "blind_claims_y.yaml": (10, 43, 42, 7),
    # corpus Z (stop 54), answers that argue with numbers (if/then, conversions, a senior
    # checking a figure two ways, self-corrections); written blind; measured unread: 34 / 43 /
    # 38 / 2. Of its two right answers said to claim wrongly, one named a 70B on one H200 (it
    # fits: "one H200" left the one-card claim); the other is a bare term, "single-GPU fit"
    "blind_claims_z.yaml": (37, 43, 43, 1),
    # corpus AA (stop 55), seniors dictating in long run-on sentences ("so", "which means",
    # asides, "bw", "ctx", "→"); written blind; measured unread: 41 / 43 / 38 / 2. Both right
    # answers said to claim wrongly are juniors that do make the claim (max_num_seqs set to
    # the chunk; 64 heads in the KV formula); of the wrong answers left unheld, three were
    # excused by a word of another clause ("far from" the roofline, "instead of" a sentence
    # before) or said a phrase a little longer ("k + 1 full forward passes")
    "blind_claims_aa.yaml": (41, 43, 42, 2),
    # corpus AB (stop 56), terse bullet points typed under time pressure ("→", "w/", "b/c",
    # typos); written blind; measured unread: 40 / 43 / 41 / 1. Its senior < mid failures were
    # a union-of-experts argument for residency and a mid earning tensor-parallel credit from a
    # quoted "KV cache memory:" log line; its unheld wrong answers, the hidden width as the
    # cache width and "TP is the only option that improves both". The one right answer said to
    # claim wrongly is a junior that does watch "gpu memory usage"
    "blind_claims_ab.yaml": (42, 43, 43, 1),
    # corpus AC (stop 56), thinking aloud in the first person, hedged and self-correcting;
    # written blind, its wrong answers chosen off the solutions' headline misconceptions;
    # measured unread: 40 / 42 / 30 / 3. Its wrong answers are the weak figure: misconceptions
    # no claim listed (TP sequential across cards, the whole conversation prefix-cached, CUDA
    # graphs eating 20 GB) or listed but said another way ("won't run more than X", whose own
    # "not" read as a denial of the X); a right mid said to blame the system prompt ("I'd
    # explain it") was the false claim that went. Stop 65: 42 → 41, a lone word ("mamba")
    # no longer quantified by a figure of the drill's beside it, which tied AC's hybrid senior
    # with its mid (and ordered AE's and Y's DeepSeek steps, whose mids had "the latent (16 ->
    # 88 sessions)" quantify MLA's compression)
    # (stop 74: 41 → 40, its 4f senior's "if we need the headroom" no longer earns the
    # activation reserve: spare room for KV, as expert pass 86's A053 said it)
    "blind_claims_ac.yaml": (40, 43, 36, 2),
    # corpus AD (stop 57), candidates whose first language is not English (short sentences,
    # missing articles, glued units), a third of the wrong answers wrong in a figure said in
    # prose; written blind; measured unread: 40 / 41 / 37 / 4. A mistake named in an earlier
    # sentence joined by "Both …" excused the claim after it ("the colleague is wrong. Both
    # lines are per GPU"); a statement opening a list of unchanged terms was read as a term;
    # its unheld wrong answers got claims in general terms (90% of the datasheet, decode gone
    # compute-bound in a stall, chunking making the stall worse, a latency multiple as the
    # price). The right answer left said to claim wrongly is a junior that watches GPU memory
    "blind_claims_ad.yaml": (43, 43, 43, 1),
    # corpus AE (stop 57), transcribed speech ("um", numbers spoken as words), its wrong
    # answers right in every word but one reversed claim (a direction, a mechanism, a lever);
    # written blind; measured unread (after AD's fixes): 39 / 43 / 22 / 3. The honest figure
    # of the stop: a reversal said in the right vocabulary is what the claims catch least.
    # Its three right seniors said to claim wrongly were narrowed ("would be half a head,
    # but … replicated", "heads wider than", "planning on the datasheet promises 1.6×");
    # ten of its 21 unheld wrong answers got claims in general terms
    # (stop 58: six more, each said within one clause: TP keeping "its own copy of the
    # weights", KV "a much bigger share" at batch 1, "serve it on one card", the peak as "the
    # number to size on", the scheduler preempting the oldest, the partial block "included")
    "blind_claims_ae.yaml": (42, 42, 39, 0),
    # corpus AF (stop 58), whiteboard notes of a research background (formulas, ≈ × → ⇒,
    # Greek letters, "2·L·n_kv·d·b"); written blind; measured unread: 33 / 38 / 27 / 6. Its
    # right answers said to claim wrongly were excuses in other words ("would be a ~636 GB
    # overstatement", "12.5% low … overestimates sessions"); a middle dot read as nothing
    # ("8·5.37" as "8 5.37") and Greek letters dropped ("k·α + 1") hid both precise seniors'
    # figures and a wrong answer's formula; a number ending the sentence before ("(2×).") was
    # read as the operand of the next sentence's "batch 1"; "keys and values" split a clause.
    # Left: an activation-memory claim whose "that's the ~40% by itself" is an item away
    "blind_claims_af.yaml": (41, 43, 42, 0),
    # corpus AG (stop 58), SRE and platform engineers (engine flags, metric names, YAML and
    # shell fragments, postmortem phrasing); written blind; measured unread: 39 / 43 / 30 / 3.
    # Two right seniors' claims were excused in other words ("it also assumes you stay below
    # the ridge", "which is why the cap matters"); a third stays: a table row "EP/TP over 4
    # GPUs | … 93.4 GB | ~half" read as one clause (a table's cells as items cost 28 ordered
    # steps over the other corpora, so they stay one). Seven misconceptions said within one
    # clause got phrases
    "blind_claims_ag.yaml": (42, 43, 38, 1),
    # corpus AH (stop 59), GPU-kernel and hardware engineers (bytes moved, FLOP/B, ridge
    # points, CTAs, tables, scientific notation, British spelling); written blind; measured
    # unread: 36 / 43 / 40 / 7, the first new corpus whose wrong answers were held unread on
    # over 90% of its steps. Its false claims were precision faults: five right seniors, a
    # product "≈5 × 1.4e11 FLOP" read as a "5×" speed-up, one table row's label read with the
    # next row's figure (a table's rows are now spans of their own for claims, its cells
    # still clauses), "fractionally slower", "per block per layer" as a size, "capacity held
    # idle", "per-token under-prices it"; then three unheld wrong answers got phrases ("the
    # one that improves both", fragmentation "the biggest contributor", a paged cache that
    # "keeps a session's blocks", which an over-broad "cached" had excused). The right answer
    # left said to claim wrongly is a junior that watches GPU memory
    "blind_claims_ah.yaml": (43, 43, 43, 1),
    # corpus AI (stop 59, measured after AH's fixes), staff engineers' design-review comments
    # ("Decision:", "Why:", "Risks:", numbered lists); written blind; measured unread: 39 / 43
    # / 33 / 6, the honest figure of the stop. Its false claims: a term of a bare buzzword list
    # ("expert offload"), a proposal rejected, a lever "not recommended", a reserving server
    # described, four users who each "lose a quarter", fragmentation as a second possibility.
    # Then: a term of a list of three or more names and claims nothing unless it has a figure,
    # a negation or a direction ("no separate pool", "shorter step" still claim); "and" before
    # a short noun phrase ending the item, or before "makes", "keeps", "drives" …, goes on with
    # the subject; ten misconceptions got phrases; and an answer that makes a wrong claim earns
    # nothing of its step's concepts (a quarter had kept nine caught wrong answers over all
    # corpora above juniors that earned nothing: AD, AG, P, R, Y and Z rose by one each)
    "blind_claims_ai.yaml": (43, 43, 43, 0),
    # corpus AJ (stop 59, measured after AH's and AI's fixes), code-first answers (short
    # Python snippets with comments, flags and metric names inline); written blind; measured
    # unread: 38 / 43 / 36 / 3. Its three false claims were right seniors' excuses in other
    # words ("ignores the decode tokens … blows TPOT", "each user's KV is private", prompt
    # tokens watched "under the chat cap"); four of its seven unheld misconceptions got phrases
    "blind_claims_aj.yaml": (42, 43, 40, 0),
    # corpus AK (stop 60), database and OS engineers reasoning by analogy (buffer pools, page
    # tables, copy-on-write, thrashing); written blind; measured unread: 38 / 42 / 35 / 3. Its
    # false claims: causes dismissed after they are named ("… probably aren't it"), head_dim
    # derived as "hidden / 64 query heads", the pitch that "holds here" at batch 1. Then:
    # a cause "too small to explain" is denied, a condition closing the sentence (",
    # regardless of batch") goes with the clause before it, ", not the saving" sets its contrast
    # inside the clause before (unless it states a figure of its own), "doesn't cost the chat
    # users anything" calls a lever harmless rather than dismissing it, "zero users fit" and
    # "with any room" under a negation deny; seven misconceptions got phrases
    "blind_claims_ak.yaml": (42, 43, 43, 0),
    # corpus AL (stop 60, measured after AK's fixes), chat replies with the verdict first
    # ("TL;DR:", bold, "~", missing apostrophes); written blind; measured unread: 41 / 42 / 35 /
    # 2. Then: a verdict's label ("TL;DR:") names no subject, "didnt" and "doesnt" deny as
    # "didn't" does, a report word ("… is wrong, but …") judges the clause before its "but",
    # not the claim after; Little's law inverted for open chats is a claim of its own. Left: a
    # cause and its consequence in two items ("head_dim 256 … — so the window saves a smaller
    # share"): read as one, it claimed right answers' unrelated "so" clauses. Stop 68: 40, its
    # junior's "wastes at most part of one block (<1%)" now credited as the tail waste it is,
    # above a mid whose worst case goes uncredited
    "blind_claims_al.yaml": (40, 43, 42, 0),
    # corpus AM (stop 60, measured after AK's and AL's fixes), engineering managers and
    # product-minded staff engineers (cost per session, SLOs, rollout plans, "what I'd tell
    # the VP"); written blind; measured unread: 38 / 40 / 31 / 4. Its false claims were right
    # answers' excuses in other words (a GQA-8 cache "split 8 ways" beside the whole latent,
    # dequantisation "invisible while bandwidth-bound", a colleague "reading a per-GPU memory
    # figure correctly", a cap for everyone that "turns a chat SLO problem into a fleet-wide
    # one"). Then: a claim's own denial said before its subject ("I wouldn't alert on
    # preemptions") still makes it, a rule said with its subject in an "if" clause before the
    # main clause is a claim, a token-rate quota said to bound the KV is a claim of its own,
    # "paged on-demand" is no alert and KV "split between the two GPUs" no cost of TP; ten
    # misconceptions got phrases. Left: a p99 plan whose sentences also say "average" and
    # "only", and a recompute whose subject is cut from "effectively free" by "by contrast"
    "blind_claims_am.yaml": (42, 42, 41, 0),
    # corpus AN (stop 60, measured after AK's, AL's and AM's fixes), recent graduates with
    # textbook framing ("Recall that…", "The key insight is…", numbered steps, careful units);
    # written blind; measured unread: 26 / 43 / 38 / 10, the worst precision of the stop: ten
    # long, careful seniors said to claim wrongly ("one request must fit", "Counting a factor 2
    # gives 140,544 B", "subject to max_num_seqs", "The hypotheses are: …", "d_head = 128
    # (8,192 ÷ 64)" read as 64 heads). Each was narrowed in the claim's own terms (a bare
    # "heads" no longer names the query heads); then four misconceptions got phrases
    "blind_claims_an.yaml": (35, 43, 41, 0),
    # corpus AO (stop 60, measured after AK's to AN's fixes), blunt candidates speaking in
    # absolutes ("Never.", "That's a myth.", "Don't: …"), whose right answers name a wrong
    # idea to reject it; written blind; measured unread: 38 / 43 / 38 / 4. Its false claims
    # were rejections in its own forms ("Don't: 'offload cold experts' — nothing is cold",
    # "Raise it globally and one user can pin 16 GiB", "PCIe on the critical path")
    "blind_claims_ao.yaml": (41, 43, 38, 0),
    # corpus AP (stop 61), markdown notes pasted in (headings, bold labels, tables, inline
    # code, ✅/❌ marks); written blind; measured unread: 28 / 34 / 39 / 17, the worst
    # precision yet: a cross before a wrong idea ("❌ fragmentation: …") was read as saying it,
    # a heading ("### Paging vs reserving max_model_len") as a claim. A cross now reports the
    # idea beside it, a heading claims nothing, and "… as decode gets." no longer turns the
    # next sentence's "wrong" into what a draft "got wrong"; a Mamba state said to grow in
    # fp32 grows by its dtype. Left: "hot experts" in a caveat, a junior watching GPU memory
    "blind_claims_ap.yaml": (40, 43, 39, 2),
    # corpus AQ (stop 61, after AP's fixes), "it depends" reasoning (cases, hypotheticals,
    # rules stated with their conditions); written blind; measured unread: 32 / 42 / 40 / 7.
    # A rule's condition denied in itself ("refuses to start if one request doesn't fit") now
    # still excuses, a what-if judged "too much" is reported; an engine flag typed with its
    # dashes ("--max-model-len") is read as the flag. Left: a counterfactual under a label
    # ("Counterfactuals: 4 sequences in fp8 → 30 ms"), the reservation scheme described as the
    # alternative, a junior listing reservation as possible
    "blind_claims_aq.yaml": (35, 43, 41, 3),
    # corpus AR (stop 61, after AP's and AQ's fixes), Socratic self-questioning: the premise
    # restated, questions posed and answered ("Is it fp8 KV? No: …"); written blind; measured
    # unread: 31 / 42 / 38 / 11. A sentence that opens with what others put forward ("The
    # proposal was "TP=16 to double it"", "The intuition people voice is …") and "you said"
    # report it. Left: an answer after "No:" that restates the question's figures, a question's
    # subject carried into its answer (recall: "Does batch 64 change it? No, each token still
    # reads its 2 experts"), options described before they are weighed
    "blind_claims_ar.yaml": (36, 42, 41, 5),
    # corpus AS (stop 61, after AP's to AR's fixes), answers edited before they were sent:
    # "~~TP=16 halves the KV~~ EDIT: …", "I first wrote …", "Scratch that"; the wrong answers
    # strike out the right idea; written blind; measured unread: 27 / 37 / 38 / 22, the worst
    # precision yet: every struck-out first thought was read as said. Struck-through text is
    # now retracted, and one's own first thought reported ("I first wrote", "my first draft",
    # "Red flags: …") is no claim. Left: a junior watching GPU memory, a p99 plan that also
    # says "every request at 32k" to reject it, the reservation scheme described to compare
    "blind_claims_as.yaml": (37, 43, 43, 3),
    # corpus AT (stop 62), a practice dialogue pasted whole: "Interviewer:"/"Q:"/"them:" lines
    # float wrong ideas ("Product says raise it to 128k for everyone"), "Me:"/"A:" replies
    # reject them, the wrong answers accept one; written blind; measured unread: 31 / 38 / 41 /
    # 11. The interviewer's lines are no words of the candidate (neither claims nor credit).
    # Left: a mid that named fp8 only in the interviewer's question now lacks it (right), a
    # senior's imperative what-if ("Subtract only the 37 GB and you'd plan on 946 GB")
    "blind_claims_at.yaml": (38, 40, 41, 2),
    # corpus AU (stop 62), answers that cite and quote docs, configs and papers ("> …", `field`,
    # "per the vLLM docs"), the wrong ones citing a source for a wrong claim; written blind;
    # measured unread: 32 / 34 / 39 / 11. Claims narrowed where a right answer used the claim's
    # words of another case (a tied model, a reserving server, "only if" the prefix stays, a
    # queue with low usage read as another limit). Left: a junior whose "mostly buys memory" is
    # followed by "It also gives more bandwidth", a slip's result reported in quotes
    "blind_claims_au.yaml": (40, 39, 40, 2),
    # corpus AV (stop 62, after AT's and AU's fixes), explained by example first: a toy case or
    # another model worked with its own numbers, then the drill's; written blind; measured
    # unread: 34 / 39 / 40 / 6. A toy's head_dim of 64 is no 64 KV heads, "a 3× fiction"
    # reports, MHA split 8 ways is no latent split. Left: a quoted claim that "fails on both
    # counts" ("fails" as a report word cost two wrong answers held elsewhere), the 8B's
    # "buys only bandwidth" given as the other model's case. Stop 68: 36, its mid's "reserve
    # 8,192" in why-paging no longer credited as the refusal step's start-up fix (expert pass
    # 61, C8-C10), which had held it above its junior
    "blind_claims_av.yaml": (36, 41, 41, 2),
    # corpus AW (stop 62, after AT's to AV's fixes), rebuttals of a teammate's quoted Slack
    # message ("> @dana: TP=16 should halve the KV again" then "Not quite: …" or "+1"); the
    # wrong answers agree with a wrong quote or correct a right one; written blind; measured
    # unread: 39 / 40 / 29 / 10, the quoted claims read as the candidate's (and a right quote
    # earned a wrong answer its credit). A quoted message is now the teammate's words unless the
    # reply opens by agreeing; "the one I'd avoid" rejects an option. Left: a junior under its
    # mid where the quote had carried the mid's terms
    "blind_claims_aw.yaml": (42, 42, 39, 0),
    # corpus AX (stop 63), European engineers' number conventions: decimal commas ("31,5 KiB"),
    # spaced thousands ("1 479 GB"), "ca."; written blind; measured unread: 39 / 34 / 38 / 4.
    # "n_kv × d_head drops" says the product drops, not d_head. Left: rich buzzword lists
    # ("58 → 87 sessions (1,5×)") above thin mids on eight steps, the decimal-comma figures read
    # as no figure at all (the reader refuses "31,5" by name rather than guess)
    "blind_claims_ax.yaml": (41, 37, 41, 0),
    # corpus AY (stop 63), casual chat typed fast: lowercase, "tbh", "ngl", "dont", "~52gb";
    # written blind; measured unread: 39 / 39 / 38 / 5. "a fake ~946gb budget" reports, "i
    # wouldnt just raise it" denies, "capacity stops growing" is no growing state, "only partly
    # captures" is no "captures". Left: a junior's "watch gpu memory usage i guess"
    "blind_claims_ay.yaml": (43, 43, 39, 1),
    # corpus AZ (stop 63, after AX's and AY's fixes), production war stories ("at my last job
    # we ran …", "in prod we saw …"), the wrong answers citing an experience for a wrong claim;
    # written blind; measured unread: 39 / 39 / 40 / 2. "Halving the sessions mixes a per-GPU
    # budget with …" names the mix-up, not a split by tokens. Left: a capacity sheet that
    # "treated Gemma-2 as sliding window, like Mistral" before a load test proved it wrong
    "blind_claims_az.yaml": (40, 42, 42, 1),
    # corpus BA (stop 63, after AX's to AZ's fixes), second-person coaching ("you'd think …,
    # but …", "the trap here is …"), the wrong answers coaching a wrong idea; written blind;
    # measured unread: 42 / 40 / 35 / 1. Watching KV usage "to see if we're running out" is no
    # alert at 100%. Left: eight coached wrong answers above their junior, among them one
    # whose "if you want more" in the sentence after excuses "vLLM guarantees each admitted
    # request room to reach max_model_len"
    "blind_claims_ba.yaml": (43, 42, 36, 0),
    # corpus BB (stop 64), memos and emails to a manager ("Summary:", "Recommendation:",
    # passive voice, "it is recommended that"), the wrong memos recommending a wrong course;
    # written blind; measured unread: 40 / 38 / 35 / 2. A proposal "is not recommended",
    # "should be avoided" or "is discouraged" is not made. Left: a tier "healthy when its
    # preemption rate falls" (preemptions said healthy). Then a helper wrote claims, in
    # general terms, for its eight wrong memos left unheld (35 → 43)
    "blind_claims_bb.yaml": (42, 41, 43, 1),
    # corpus BC (stop 64), candidates from another serving stack (TensorRT-LLM's in-flight
    # batching and free_gpu_memory_fraction, SGLang's RadixAttention and --mem-fraction-static,
    # TGI's max_total_tokens); written blind; measured unread: 37 / 37 / 36 / 4. Three right
    # answers' excuses had other words ("does double the FLOPs, but", "3 H100s", "Gemma-2 uses
    # 256"). Left: a claim quoted to be rebutted ('"TP=16 doubles capacity" doubles the GPUs,
    # not the capacity'): the reader keeps no quotation marks. Then a helper wrote claims, in
    # general terms, for its seven wrong answers left unheld (36 → 43)
    "blind_claims_bc.yaml": (42, 39, 43, 1),
    # corpus BD (stop 64, after BB's and BC's fixes), typed on a phone between meetings:
    # lowercase, no apostrophes, typos a reader still understands ("cash", "memroy",
    # "bandwith"); written blind; measured unread: 40 / 38 / 36 / 2. "3x off" and "would give"
    # report the active-only subtraction. Left: a senior's notes with no full stops, whose "mha
    # same budget" and "hence dp attention" on two lines read as one clause. Then a helper
    # wrote claims, in general terms, for its seven wrong answers left unheld (36 → 43): a
    # reply with no full stops is one sentence, so each claim's excuses had to be words its
    # other lines do not say
    "blind_claims_bd.yaml": (41, 40, 43, 1),
    # corpus BE (stop 64, after BB's and BC's fixes), numbers as ranges and estimates
    # ("between 40 and 50 GB", "roughly 2-3x", "give or take 10%"); written blind; measured
    # unread: 40 / 36 / 42 / 3. KV reads that "grow with context" are no intensity that does;
    # "No." answering a question ends its sentence. Left: its "buzzword" lists carry the whole
    # working ("W ≈ 7.9 s (400 × ~20 ms), ~238 in flight"), read as terse answers; a junior
    # that watches GPU memory makes that claim. Then a helper wrote the claim of its one
    # wrong answer left unheld, "its own pass through the MLPs" (42 → 43)
    "blind_claims_be.yaml": (42, 40, 43, 1),
    # corpus BF (stop 71), spoken and transcribed: fillers, arithmetic said in words,
    # self-corrections ("it's 8 — no, 16 KV heads... sorry, 8"); written blind; measured
    # unread: 40 / 39 / 42 / 1. A wish turned down by a "but" ("you'd like half a head each,
    # but a head can't be split") is no claim; an excuse ("in full") the LM-head claim took
    # from the sentence after it is now the head's own. Left: buzzword lists that carry the
    # whole working; a mid that states the KV transfer by its figures alone (512 MiB, 10.7 ms)
    # under a junior that names it
    "blind_claims_bf.yaml": (41, 42, 43, 0),
    # corpus BG (stop 71), non-native English under time pressure: dropped articles ("at end
    # of generation"), literal translations, numbered steps; written blind; measured unread:
    # 41 / 40 / 41 / 1. A what-if told without "would" ("If we sized 2,000 slots we buy ~22
    # GPUs instead of 3") is no claim; "like SGLang for DeepSeek" is an analogy, no excuse.
    # Tried and taken back: matching every claim phrase without its articles (right answers
    # claimed wrongly 45 → 74 over the other corpora)
    "blind_claims_bg.yaml": (42, 42, 43, 0),
    # (stop 72: a sentence of items that only compute by arrows, "budget 496 → 1,479 GB",
    # in an answer that reasons in words nowhere else, is a list: buzzwords held 2,495 →
    # 2,534 of 2,580 over A to BG and the first blind set, 22 corpora up, no step's order
    # lost; the floors above were raised with it)
    # corpus BH (stop 72), typed live in a video interview's chat: lowercase, arrows, "~",
    # "b1", "gen + history"; seniors compact and dense with figures, mids plain and longer;
    # written blind; measured unread: 31 / 41 / 41 / 1. An arrow before a verb of advice
    # ("per-user content first -> put static text first") opens a statement of its own;
    # "gen" and "b64" are spelled out. Left: ten seniors whose notes carry the ideas as
    # figures and formulas ("(6/8)^64 ~ 1e-8 -> reads all 93.4 GB") the rubric's phrases do
    # not name, scored at or under the plainer mid
    "blind_claims_bh.yaml": (33, 42, 41, 0),
    # corpus BI (stop 72), take-home answers in full paragraphs, buzzword lists that carry
    # their figures; written blind; measured unread: 40 / 41 / 40 / 5. Right answers claimed
    # wrongly by a proposal said to fall short ("… doesn't cover their cost"), a cause "less
    # likely", head_dim worked from the query heads, experts resident because any token can
    # reach any. Left: one junior that watches GPU memory (the claim is right to name it)
    "blind_claims_bi.yaml": (41, 41, 41, 1),
    # corpus BJ (stop 72), mock interviews of engineers from adjacent fields (backend, ML
    # research, GPU kernels); written blind; measured unread: 35 / 42 / 43 / 3. Right answers
    # claimed wrongly by "paging experts over PCIe per step is hopeless on latency", "KV-
    # dominated (each user costs linear latency)", "a global max_model_len bump turns that
    # into a risk"; now none; "all 96 chat slots" names the chat sessions a long one pins
    # (36 → 37). Left: five steps whose senior scores at or under a plainer mid
    # by under a point, and a mid that states the KV transfer by its figures alone
    # ("over 400 Gb/s IB that's ~10.7 ms"; taking "over 400 Gb/s" as the transfer cost six
    # steps' order in other corpora, where juniors say it too)
    "blind_claims_bj.yaml": (37, 43, 43, 0),
    # corpus BK (stop 73), phone-screen answers transcribed: fillers, self-corrections ("80 —
    # no, 160 all-reduces"), numbers said in words ("ninety-three gig", "batch one"), the
    # question restated; written blind; measured unread: 39 / 40 / 41 / 3. "batch one" is
    # batch 1, and a question said without its mark ("so the pitch, is it as cheap as a
    # thirteen B.") claims nothing. Left: a junior that watches GPU memory usage for
    # staleness (the claim is right to name it)
    "blind_claims_bk.yaml": (40, 41, 41, 1),
    # corpus BL (stop 73), teaching a junior colleague in the second person ("you'd think …,
    # but", "where you'll trip up is …", rhetorical questions answered at once); written
    # blind; measured unread: 36 / 37 / 41 / 8. A pitfall named ("where you'll trip up is"),
    # a wish inside the claim's clause that a "but" turns down ("at TP=16 you'd hope for half
    # a head, but …"), and excuses its seniors gave in their own words (open conversations
    # from the requests in flight, documents under the window, latency that scales with the
    # batch, all-reduces that cost TPOT). Left: a senior's "you've quadrupled throughput"
    # (it is 3×) and two juniors whose claims are right to be named
    "blind_claims_bl.yaml": (41, 38, 41, 3),
    # corpus BM (stop 73), compare and contrast ("rather than", "unlike", "whereas", inline
    # two-column tables "bf16: 97 | fp8: 194"); written blind; measured unread: 41 / 41 / 39
    # / 1. A list of when it buys little ("… 12 → 12. It buys little or nothing when:") no
    # claim of the sessions before it; a wrong answer's "with no retraining" its own reason,
    # no excuse. Left: three wrong answers whose claims sit across a "whereas" or a "not the
    # embedding" the claims read as excuses
    "blind_claims_bm.yaml": (42, 41, 41, 0),
    # corpus BN (stop 74), plain written answers of working engineers in a shared-doc screen,
    # the form the hidden corpus took; written blind; measured unread: 40 / 43 / 42 /
    # 3. A counterfactual told with "had" ("if the model had tied embeddings you'd still
    # read it") claims nothing; "sharded MHA" beside the latent's figure is no split latent.
    # Left: a junior that watches GPU memory usage (the claim is right to name it)
    "blind_claims_bn.yaml": (42, 43, 42, 1),
    # corpus BO (stop 74), verbose tutorial-like mids against terse code-review seniors (35
    # to 150 words, a third of the mids' length); written blind; measured unread: 7 / 40 /
    # 41 / 4. What a team "is assuming", a pitch put forward, a transfer "fully exposed", a
    # system prompt stored once and a TTFT cut "by skipping" the prefill are read as said.
    # Left: 36 seniors under their mids. 21 name fewer of the ideas asked than the mid does
    # (the 8B policy senior leaves out the long-context pool, the dtype and the generated
    # tokens) and score below it on the ideas alone; 15 lose on depth, which counts reasoned
    # clauses and figures. Raising depth's cap from 16 to 20 gained 19 ordered steps over 66
    # corpora but cost the plain ones (B, C, D, H, L, N) and left BO at 7, so depth was kept
    "blind_claims_bo.yaml": (7, 43, 42, 0),
    # corpus BP (stop 74), live-interview answer boxes from mixed backgrounds (first person,
    # impersonal notes, verdict first; prose and bullets), written blind; measured unread on
    # fdf3424: 43 / 43 / 40 / 0. Its three wrong answers left unheld are named: MQA set in
    # config.json with the KV heads averaged at load time, a prefix cache that "dedupes" each
    # history across users, and vLLM budgeting max_model_len per sequence (no longer excused
    # by a "whether" elsewhere in the sentence)
    "blind_claims_bp.yaml": (43, 43, 43, 0),
    # corpus BQ (stop 74), compact answers typed at the end of a long interview loop, seniors
    # barely longer than mids; written blind; measured unread on c0756d6: 36 / 41 / 40 / 1.
    # A junior's "a multiplier over the chat price" no longer prices it like chat, and "with
    # prefix caching on, the history is shared across turns" is named. Left: seven seniors at
    # or under mids that name every idea the mid does in fewer, longer clauses (a terse
    # "X would give 12, an 88% gap, too big, and …" read as a list of terms)
    "blind_claims_bq.yaml": (36, 41, 41, 0),
    # corpus BR (stop 74), plain take-home paragraphs, about five minutes a question; written
    # blind; measured unread on 98e7c5a: 43 / 43 / 41 / 1. A junior watching KV usage "to see
    # when we're running out" no longer alerts at 100%; "the LM head only runs when a token is
    # sampled" and attention "only a small slice … copying its weights is cheap" are named
    "blind_claims_br.yaml": (43, 43, 43, 0),
    # corpus BS (stop 75), notes typed into a shared interview-prep notebook (bullets, arrows,
    # abbreviations, a typo or two); written blind; measured unread on 4b13f76: 37 / 41 / 39 /
    # 7. All seven flags were on right answers: a caveat "if a model ties embedding and LM
    # head", "would wildly over-count", a "linear:" label beside the crossover, "8 heads'
    # worth of K/V per layer", a weight slice that halved, "promising 16 GiB … to anyone who
    # asks", and GB and GiB "mixing them is a 7% error". "recompute, always" is named (a
    # phrase written across a comma crosses it). Left: three wrong answers whose claims sit
    # across a list's commas or under an excuse the step needs ("prefill", "park")
    "blind_claims_bs.yaml": (43, 43, 40, 0),
    # corpus BT (stop 75), second-language English in a timed online assessment (plain direct
    # sentences, articles dropped); written blind; measured unread on 83f453b: 39 / 42 / 39 /
    # 2. "sizing on it gives 22 GPUs, 7 times too much" judges the claim before it; "With
    # reservation, each request takes max_model_len up front" sets up the scheme paging
    # replaces; "the 8 times comes from the query heads" and a history that "becomes almost
    # free" are named. Left: a 2c-why mid no higher than its junior (both name the KV heads), a
    # 405B fix mid under its junior, "I would run DP attention" excused by its own "would", and
    # "The X value in the log, 53.05, is how many users …" (a bare figure between a subject and
    # its verb joined them; the review of the stop found it joined "the query heads, 64, are
    # not …" too, and it was taken back)
    "blind_claims_bt.yaml": (41, 43, 42, 0),
    # corpus BU (stop 75), answers spoken in a video interview and transcribed (fillers,
    # self-corrections, run-on sentences, numbers as said); written blind; measured unread on
    # e0f606b: 36 / 42 / 38 / 5. A value taken back at once ("sixty-four, no wait, that's the
    # query heads") is not claimed; NVLink's "basically free", "a quality question, not the
    # cache" and "'free' only holds in the memory-bound regime" are no claims; a latent sharded
    # "the way you'd shard the KV heads", compute "shared four ways" and disaggregation that
    # "pays whenever you have any prefill load" are named. Left: one senior's chunk that comes
    # "almost for free inside the decode step" (flagged, as the expert passes flag it), and
    # four seniors at or under their mids
    "blind_claims_bu.yaml": (39, 43, 40, 1),
    # corpus BV (stop 75, the last set), plain written answers in a shared document during a
    # remote screen, each level a different person (the hidden corpus's form); written
    # blind; measured unread on 3a14108: 40 / 42 / 35 / 6. "I don't think X" gives X away;
    # fragmentation that "could also be" eating space, "the two classic slips are …", "points
    # at a per-user prefix" and eviction that "also reduces it" are no claims. Left: a junior
    # who watches GPU memory, and eight wrong answers unheld: their wrong idea said across a
    # "but" or an "and" from its subject ("… includes both …, but since Llama uses the same
    # matrix for both"), inside "a common trap" ("The colleague is right, and it's a common
    # trap"), or with figures no claim names (a 128k session sized with 32 query heads)
    "blind_claims_bv.yaml": (42, 43, 35, 1),
    # corpus BW (stop 76), answers typed into a live interview's shared coding pad, plain
    # prose; written blind; measured unread on 2be072f: 40 / 43 / 39 / 2. Then: "X rather than
    # Y" after a claim chooses X (raising max_model_len for everyone "rather than build a
    # second fleet"); the words of vLLM's quoted start-up line ("Maximum concurrency for 8,192
    # tokens per request") excuse nothing; chunked prefill "doesn't help because …", a stall
    # blamed on bandwidth contention and a re-prefill priced as one 3.4 ms weight read are
    # claims; a senior's fp8 KV "helper, not a fix" and its dequant "a bit of compute" that
    # hides under the memory time are not.
    "blind_claims_bw.yaml": (41, 43, 43, 0),
    # corpus BX (stop 76), formal written answers to a take-home assessment ("therefore", "it
    # follows that", passive voice, "one"); written blind; measured unread on 31f6327, after
    # BW's, pass 91's and the review's fixes: 40 / 41 / 33 / 4. Then: "the claim conflates"
    # reports; "wherever that share is small" is no position-free match; "expert parallelism
    # across more than one node" and "would suggest" excuse; "I would", "one would" and
    # "…, which would indicate" are the answer's own, not a what-if; a "rather than" before a
    # colon sets aside only what it names there. Nine wrong answers left unheld, most of
    # them argued across sentences that open "It follows that", "Thus" or "Since": read as
    # one sentence, the excuses of one reach the claim of another
    "blind_claims_bx.yaml": (43, 43, 34, 0),
    # corpus BY (stop 76, the last set), plain answers typed into an online screening form;
    # written blind; measured unread on 356d533, after every other fix of the stop: 40 / 43 /
    # 34 / 3. Then: "One full-context sequence holds 85.9 GB of KV" states a size, no count
    # of users; per-token billing that "already charges for the longer prompt" is no
    # double-count of KV-seconds; "With contiguous reservation …" sets up the scheme paging
    # replaces; "the engine keeps that conversation's KV resident the whole time" is named.
    # Eight wrong answers left unheld, four of them where the junior answer scores 0
    "blind_claims_by.yaml": (43, 43, 35, 0),
    # corpus BZ (stop 77), plain answers typed into a hiring platform's timed text boxes,
    # reasoning chained in short sentences; written blind; measured unread on 6c045c2: 39 /
    # 43 / 40 / 3. Then: "Whatever we set as max_model_len is memory we're committing to every
    # user who asks for it" argues against raising it; "larger chunks give the new request a
    # better TTFT" weighs chunk sizes; weights that "won't buy many sessions" and a history
    # that "stops mattering once it's cached" are named. The one right answer flagged is a
    # junior who sized the KV with the 64 query heads, a true flag. Left: a verification
    # priced as "5 target steps' worth" across an "and since" from its subject
    "blind_claims_bz.yaml": (41, 43, 41, 1),
    # corpus CA (stop 77), plain prose in a written interview: each answer says the question
    # back first ("So the question is whether …", "What's being asked is …") and wraps up in a
    # line; written blind; measured unread on 0e6f776: 37 / 40 / 39 / 10. Six of the ten flags
    # were claims read in the restated question: a sentence that opens by saying the question
    # back is asked, not said, and a claim whose predicate lies only in it is no claim (what
    # the answer then says of the question's subject still is). "Larger gives the long
    # request a better TTFT" weighs chunk sizes; a hit's first-token latency, "the bigger win
    # at long context", is no capacity claim. Left: a junior who watches GPU memory (a true
    # flag) and "That costs the long request a bit more time", whose "more" joins the chunk
    # budget of the sentence before
    "blind_claims_ca.yaml": (40, 42, 39, 2),
    # corpus CB (stop 77, the last set), take-home prose by engineers who check their own
    # work ("Let me double-check: …", "actually no, …"); written blind; measured unread on
    # 7862ab8, after every other fix of the stop: 39 / 43 / 33 / 5. Then: "It is not a compute
    # story" denies the GPU-power reason; 'put a number on "just raise it"' weighs the
    # proposal; fragmentation that "might also add to it but I'm not sure they're big enough"
    # and a cost weighed, "22 GPUs to serve what 3 handle", are no claims; "raising
    # max_model_len is close to free" and prefix caching that "makes the history nearly free"
    # are named. Left: eight wrong answers unheld, most argued across a "so …" item from
    # their subject or excused by a word of another proposal in their sentence ("skip … a
    # second pool"); one junior flagged who blames the interconnect for the sessions
    "blind_claims_cb.yaml": (42, 43, 35, 1),
    "blind_text_answers_all.yaml": (43, 41, 0, 0),
}


# A corpus's four tests run on one worker (pytest-xdist's loadgroup), which reads it once.
_ONE_WORKER_EACH = [pytest.param(name, marks=pytest.mark.xdist_group(name))
                    for name in sorted(MEASURED)]


@cache
def rows(name: str) -> tuple[dict[str, Any], ...]:
    return tuple(report([name]))


@pytest.mark.parametrize("name", _ONE_WORKER_EACH)
def test_junior_mid_senior_are_ordered(name: str) -> None:
    ordered = [r for r in rows(name) if r["ordered"]]
    assert len(ordered) >= MEASURED[name][0], [
        (r["drill"], r["step"]) for r in rows(name) if not r["ordered"]]


@pytest.mark.parametrize("name", _ONE_WORKER_EACH)
def test_a_bare_list_of_terms_stays_below_the_mid_answer(name: str) -> None:
    held = [r for r in rows(name) if r["buzzwords_held"]]
    assert len(held) >= MEASURED[name][1]


@pytest.mark.parametrize("name", [p for p in _ONE_WORKER_EACH if MEASURED[p.values[0]][2]])
def test_a_fluent_wrong_answer_scores_at_most_the_junior_one(name: str) -> None:
    held = [r for r in rows(name) if r["wrong_held"]]
    assert len(held) >= MEASURED[name][2], [
        (r["drill"], r["step"]) for r in rows(name) if not r["wrong_held"]]


@pytest.mark.parametrize("name", _ONE_WORKER_EACH)
def test_right_answers_are_seldom_said_to_make_a_wrong_claim(name: str) -> None:
    said = [(r["drill"], r["step"], level) for r in rows(name)
            for level in ("junior", "mid", "senior") if r["claimed"].get(level)]
    assert len(said) <= MEASURED[name][3], said
