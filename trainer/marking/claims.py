"""What a text answer claims that an interviewer would flag.

Each text step lists its wrong claims (from the seeds' red flags and the drill's wrong paths):
"TP=16 halves the KV per GPU" is three parts, the subject (TP=16), the direction (halves) and
the object (the KV per GPU), each any one of its phrases. A claim is made when every part is
said in one item of one sentence (commas, semicolons and dashes end an item, and "and",
"but", "while" join two statements: a claim is a clause, not a paragraph), none of them
negated in its clause ("does not halve", "instead of doubling", "unlike GQA"), and the
sentence does not report the claim to refute it ("the classic mistake is to think fp8 weights
double the sessions", "if the head were tied", or a phrase of the claim's own `unless`).
Precision before recall: a claim half-said is not a claim.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from functools import lru_cache

from trainer.drills.model import Step, WrongClaim
from trainer.marking.prose import (
    NEGATION_WINDOW,
    Reading,
    given_up,
    is_negator,
    is_number,
    negated,
    occurrences,
    occurrences_of,
    opens_with_belief,
    phrase_words,
    read_text,
)
from trainer.reading.patterns import lazy
from trainer.records import record

# A sentence holding one of these reports a claim to refute it, it does not make it.
_REPORTED = ("mistake mistaken myth wrong wrongly trap naive naively misconception fallacy "
             "incorrect incorrectly tempting false falsely misleading misread fooled forget "
             "forgetting illusion untrue fantasy fiction fake bogus bad premise "
             # ("The claim conflates users who are online with requests in flight": corpus BX)
             "conflate conflates conflating conflated conflation")


_GOT = "got gets get guessed guesses guess predicted predicts"
_INTENSIFIERS = "so too very really pretty"
# "nothing goes wrong", "what could go wrong": a verdict on what happens, not a claim reported
_GOES = "go goes went going gone"

_SPEECH_TAGS = ("he says", "she says", "they say", "he claims", "she claims", "they claim",
                "he thinks", "she thinks", "in his view", "in her view", "in their view",
                "according to him", "according to her", "according to them",
                "according to the colleague", "you said", "you say", "he said", "she said",
                "they said", "colleague said", "colleague says", "team said", "team says",
                # ("The product team is assuming that 2,000 users online means 2,000 slots,
                # but …": blind corpus BO)
                "team is assuming", "they are assuming", "they're assuming",
                "people are assuming", "everyone is assuming",
                # ("One could argue that only the ~37B active parameters need HBM … That
                # fails": expert pass 86)
                "one could argue", "you could argue", "one might argue", "some would argue",
                "some might argue", "could be argued",
                # ("A colleague told me the missing 1.05 GB is the LM head …", "If you believed
                # '…' you'd expect …", "The colleague's claim — '…' — is half right", "Some
                # teams … conclude the window is free": expert pass 87)
                "told me", "if you believed", "if you believe", "colleague's claim",
                "their claim", "his claim", "her claim", "some teams", "teams conclude",

                # one's own first thought, reported to correct it
                "i first wrote", "i first said", "i first thought", "i initially wrote",
                "i initially said", "i initially thought", "my first draft", "i had written",
                "red flag", "red flags")

# a blame put on a cause by others, said after its subject: "Stalls are often blamed on KV
# eviction" (within a few words of the claim's first)
_BLAMED = ("often blamed on", "usually blamed on", "commonly blamed on", "often get blamed on",
           "often gets blamed on", "typically blamed on")
_BLAMED_REACH = 4

# A thought given to someone else, or to the candidate's past self, that the sentence then sets
# out: it covers only a claim after it, in its own clause (no ":", "now", "then" or "until"
# between), and not one the sentence goes on to endorse ("…, and they'd be right", "My first
# guess was right: …"). ("A junior might say only the ~37B active parameters need HBM …",
# "I used to think recompute always beats swapping, until …": expert pass 88; "On a first
# read you'd conclude …", "My manager's first guess was '…'": expert pass 89; the limits:
# review of stop 75.)
_THOUGHT_TAGS = ("might say", "might think", "might assume", "might claim", "might conclude",
                 "used to think", "used to believe", "i once thought", "you'd conclude",
                 "you would conclude", "first guess was", "first instinct was",
                 # ("Strike the idea that prefix caching makes long histories free: …":
                 # expert pass 90)
                 "strike the idea", "forget the idea", "drop the idea", "scrap the idea",
                 "discard the idea",
                 # ("I don't think 2,000 users online means 2,000 slots": corpus BV)
                 "i don't think", "i do not think", "i don't believe", "i do not believe",
                 # ("A junior might hand the chunk the whole 25 ms, but …": expert pass 91)
                 "junior might", "juniors might", "junior would", "juniors would",
                 "juniors often", "junior could", "juniors could", "junior engineer might",
                 "new grad might", "newcomer might", "newcomers might", "beginner might",
                 "beginners might", "a naive",
                 # ("Intuition says four users should split the card four ways", "Stalls are
                 # often blamed on KV eviction": expert pass 94, A052 and A148)
                 "intuition says", "instinct says", "gut says", "common sense says",
                 "conventional wisdom says", *_BLAMED,
                 # ("I used to blame fragmentation for gaps like this", "You'll hear that
                 # raising max_model_len costs nothing", "One might reason that …": pass 95)
                 "used to blame", "used to assume", "used to suspect", "you'll hear",
                 "you will hear", "you often hear", "you hear that", "might reason",
                 "could reason")
# ("…; in fact X" is the answer's own; "…, so I'd …" its reason: review of stop 76)
_THOUGHT_ENDS = ": now then until fact so since because when"
# what a sentence says of the thought it set out, after it: "…, and they'd be right", "…, and
# I still do", "…, and that is exactly what happens" (not "answer": "… are reading the answer")
_ENDORSING = "still exactly agree"  # (and "I'd do the same", "what I'd do": _endorsed_after)

# "If the head were tied, …", "if the model had tied embeddings, you'd still read it": a
# counterfactual describes another model, it claims nothing (_counterfactual_before).
_HAD_REACH = 4  # "if the model had": the "had" a few words after its "if"
# What others put forward, named as the subject a sentence opens with ("The premise is …")
_PUT_TO_ME = "premise proposal intuition suggestion assumption instinct temptation reflex"
# A sentence that opens by naming a first guess: "The intuitive read — … — breaks at the head
# count" (expert pass 83, F1); "intuition" alone is no report ("contrary to intuition, …")
_FIRST_GUESS = "intuitive naive tempting"
_GUESS_TURNED = "breaks break fails fail wrong but however misses"  # (not "… works: …")
_A_READING = "read reading take guess answer assumption"
# ("The premise is right": an endorsement, the candidate's own)
_ENDORSED = "right correct true sound valid fine"
# A sentence that opens with one of these supposes, it does not claim.
_SUPPOSE = "ignore suppose imagine pretend say assume"
# A clause that attributes a belief to others reports it: "people assume TP=16 halves the KV",
# "a common belief is that …", "you might think …". Only the clause it opens: "some say it is
# the heads, but really it is X" still claims X.
_COMMON = "common usual popular conventional standard easy reassuring comforting"
_BELIEF = ("belief assumption wisdom view intuition take worry guess mistake misconception "
           "misreading reading reflex instinct explanation slip story")
# a belief verb this near the clause's start, after its subject ("the colleague makes the
# usual assumption that …": expert pass 74)
_ATTRIBUTION_REACH = 6


@lru_cache(maxsize=128)  # (some 80 word lists are asked for: none should fall out)
def _stems(words: str) -> frozenset[str]:
    """The word stems of a list of words, made when first asked (stemming is paid only by a
    sheet that has text to read)."""
    return frozenset(phrase_words(words))


@record
class ClaimMade:
    claim: WrongClaim
    step_id: str

    @property
    def sentence(self) -> str:
        return f"{self.claim.says} (a wrong claim in {self.step_id})"

    def retargeted_sentence(self, instead: str | None = None) -> str:
        """The correction on a re-targeted drill: its sentences up to the first that states
        a figure (the drill's own: 53 on an H100, 25.8 GB), cut at its colon when what comes
        before holds without it; else `instead` (what the claim contradicts) when it states
        none; the figures are the worked solution's to give."""
        kept = general_part(self.claim.says)
        # a rubric's concept is written for every drill of its kind: only a name would be wrong
        if not kept and instead and not _NAMED.search(instead):
            kept = f"It contradicts this: {instead}."
        # (with nothing general to say, the claim is named at least: a flag that gives no
        # reason cannot be acted on; expert pass 59, M1)
        named = self.claim.id.replace("-", " ")
        shown = kept or f"an interviewer flags the claim '{named}'; the worked solution gives " \
                        "this target's figures"
        return f"{shown} (a wrong claim in {self.step_id})"


_NAMED = lazy(r"\b(?:H100|H200|A100|B200|MI300X|Llama|Mixtral|DeepSeek|Mistral|Gemma|"
              r"Qwen|Jamba)", re.IGNORECASE)
_FIGURE = lazy(r"\d|" + _NAMED.pattern, re.IGNORECASE)


def general_part(says: str) -> str:
    """What a correction says before its first figure or model name: whole sentences, and
    the start of the next up to its colon."""
    kept: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", says.strip()):
        if not _FIGURE.search(sentence):
            kept.append(sentence)
            continue
        head = sentence.split(":", 1)[0]
        if ":" in sentence and not _FIGURE.search(head) and len(head.split()) >= 3:
            kept.append(head + ".")
        break
    return " ".join(kept)


def asserts(text: str, phrase: str) -> bool:
    """Whether the text says the phrase as its own claim: not negated, and not in a sentence
    that reports it as a mistake or supposes it ("raising the cap for everyone would be a
    mistake", "if we raised it for everyone")."""
    reading = read_text(text)
    found = list(occurrences(reading, phrase))
    if not found:
        return False  # (most phrases: no clause spans worked out for them)
    spans = _spans(reading)
    # (nor dismissed or advised against just after: "raising max_model_len globally is not
    # recommended" proposes nothing; the rubric's red flag said it did, stop 64)
    return any(not negated(reading, start, end, phrase)
               and not _reported(reading, reading.sentence[start], ())
               and not _dismissed_after(reading, spans, spans[end - 1], end,
                                        set(range(start, end)))
               and not _set_up_to_be_answered(reading, start)
               for start, end in found)


def _set_up_to_be_answered(reading: Reading, at: int) -> bool:
    """Whether the phrase at `at` sits in a sentence that opens by giving what follows to
    others and turns against it after the phrase: 'People often say "attention is quadratic,
    so long context is compute-bound" - but …' (expert pass 84, F1). Only what the belief
    says: its own item and the items that carry it on ("so …", "and …"), in the sentence as
    written, with no word that endorses it ("and they are right")."""
    tokens, sentence, item = reading.tokens, reading.sentence, reading.item
    written = reading.written or sentence
    first = at
    while first > 0 and sentence[first - 1] == sentence[at] and written[first - 1] == written[at]:
        first -= 1
    if not opens_with_belief(list(tokens[first:first + 6])):
        return False
    end, turned = at, False
    while end < len(tokens) and sentence[end] == sentence[at] and not turned:
        turned = tokens[end] in _stems(_TURNS)
        end += 1
    if not turned or _stems(_ENDORSED).intersection(tokens[first:end]):
        return False
    # every item from the belief's to the phrase's opens by carrying it on
    return all(tokens[p] in _stems(_CARRIES_THE_BELIEF) for p in range(first + 1, at + 1)
               if item[p] != item[p - 1])


_CARRIES_THE_BELIEF = "so and that which then"


# A heading names what follows ("### Paging vs reserving max_model_len", "## Answer to "2,000
# users = 2,000 slots""): a title, not a claim.
_MARKDOWN_HEADING = lazy(r"(?m)^[ \t]*#{1,6}[ \t].*$")


def claims_made(step: Step, text: str) -> tuple[ClaimMade, ...]:
    """The step's wrong claims the text makes, in the step's order."""
    if not step.wrong_claims or not text.strip():
        return ()
    reading = read_text(_MARKDOWN_HEADING.sub("", text))
    spans = _spans(reading)
    return tuple(ClaimMade(claim, step.id) for claim in step.wrong_claims
                 if _made(reading, spans, claim))


def _spans(reading: Reading) -> list[int]:
    """Each token's span: its item, cut again where "and", "but", "while" … join two
    clauses ("97 sessions is right and the colleague double counts" is two statements)."""
    spans, span, fresh, last_item = [], -1, -1, None
    opening: dict[int, int] = {}  # each sentence's first span
    rows = reading.row or (-1,) * len(reading.tokens)
    for position, token in enumerate(reading.tokens):
        # (a table's row is a span of its own: "| shared once | 2,000 |" is no subject of the
        # row after it)
        new_item = reading.item[position] != last_item or (
            position and rows[position] != rows[position - 1])
        verb_at = position + 1 + _pronoun_run(reading.tokens, position + 1)
        # an item of the same sentence that opens with "that" or "which" says it of the
        # item before ("the log says 53x — that's the real number of requests")
        goes_on = new_item and position and (
            (token in _GOES_ON and not (token == "not" and _states_a_figure(reading, position)))
            or _appositive_figure(reading, position)
            or (token == "and" and verb_at < len(reading.tokens)
                                  and verb_at > position + 1
                                  and reading.tokens[verb_at] in _stems(_SHARED_SUBJECT))) \
            and reading.sentence[position] == reading.sentence[position - 1]
        # "and" before a verb of its own shares the clause's subject: "FP8 weights halve the
        # model and double the KV" says both of the weights
        shared = token == "and" and verb_at < len(reading.tokens) \
            and (reading.tokens[verb_at] in _stems(_SHARED_SUBJECT)
                 # "K and V" names one thing, the cache: no second clause
                 or (position and len(reading.tokens[position - 1]) == 1
                     and len(reading.tokens[position + 1]) == 1)
                 # "keys and values" as well
                 or (position and reading.tokens[position - 1] in _stems("key keys")
                     and reading.tokens[position + 1] in _stems("value values"))
                 # "FP8 KV is the winner and the one that improves both": one subject
                 or reading.tokens[position + 1:position + 4] in _THE_ONE_THAT
                 # "ties its input embedding and output LM head," names a second thing
                 or _short_tail(reading, position))
        # "FP8 KV stretches it but only ~1.5x": one statement, qualified by a figure; "its KV
        # stays pinned while they read": a while of time, not of contrast
        shared = shared or _qualified_again(reading, position) or _while_of_time(reading,
                                                                                position)
        # "X → put static text first": an arrow before a verb of advice opens what to do about
        # X, a statement of its own (BH corpus); "TP=16 → halves the KV" stays one claim
        advised = position > 0 and reading.tokens[position - 1] == "→" \
            and token in _stems(_ADVICE)
        if (new_item and not goes_on) or (token in _stems(_JOINS) and not shared) or advised:
            fresh += 1
            span = fresh
        opening.setdefault(reading.sentence[position], span)
        if (goes_on and token == "and") or (
                new_item and token == "it" and position
                and reading.sentence[position] == reading.sentence[position - 1]):
            # a list's last item "and it also cuts …", or an item that opens with "it", says it
            # of the sentence's subject, not of the item before ("a big block buys less
            # hashing, bigger tiles, and it also cuts tail waste"; "FP8 KV: since K and V
            # shrink to a byte, it quadruples the sessions")
            span = opening[reading.sentence[position]]
        if new_item:
            last_item = reading.item[position]
        spans.append(span)
    return spans


def _appositive_figure(reading: Reading, position: int) -> bool:
    """Whether the item opening at `position` is a short hedged figure that sizes the item
    before it: "fragmentation can eat a decent chunk, maybe 10-20%", "paged-block
    fragmentation, typically ~40% waste" (expert passes 76 and 77)."""
    tokens = reading.tokens
    at = position + (tokens[position] in _stems(_HEDGES))
    if at >= len(tokens) or not is_number(tokens[at]) or at == position:
        return False
    item = reading.item[position]
    length = sum(1 for p in range(position, min(len(tokens), position + _APPOSITIVE_WORDS + 1))
                 if reading.item[p] == item)
    return length <= _APPOSITIVE_WORDS


_HEDGES = "maybe typically roughly about around approximately perhaps probably usually often"
_APPOSITIVE_WORDS = 6




def _qualified_again(reading: Reading, position: int) -> bool:
    """Whether a "but" only qualifies the clause before it by a figure: "FP8 KV stretches it
    but only ~1.5x" is one statement of FP8 KV (expert pass 69), where "… but only the
    weights are split" opens another."""
    tokens = reading.tokens
    return tokens[position] == "but" and position + 2 < len(tokens) \
        and tokens[position + 1] in _stems("only just merely barely") \
        and (is_number(tokens[position + 2]) or (
            tokens[position + 2] in _stems("by about around roughly some") and position + 3
            < len(tokens) and (is_number(tokens[position + 3])
                               or tokens[position + 3] in _stems("about around roughly"))))


# (", not the saving" sets a contrast inside the clause before it; ", not query heads (64)"
# with a figure of its own is a statement of its own)
_GOES_ON = frozenset({"that", "which", "not"})


def _states_a_figure(reading: Reading, position: int) -> bool:
    """Whether the item opening at `position` holds a number, or the one after it does (a
    figure in brackets: "not query heads (64)")."""
    item = reading.item[position]
    return any(is_number(t) for t, i in zip(reading.tokens[position:position + 12],
                                             reading.item[position:position + 12],
                                             strict=False) if i in (item, item + 1))


# "and it also halves", "and also cuts": the clause's subject again, before its verb; or an
# adverb of degree between them ("and it roughly halves the batch-1 step too": expert pass
# 61, M5)
_SUBJECT_AGAIN = frozenset({"it", "also", "they"})
_DEGREE = ("roughly nearly almost about approximately basically effectively actually even then "
           "really probably likely typically usually")
_SUBJECT_RUN = 3


def _pronoun_run(tokens: tuple[str, ...], start: int) -> int:
    run = 0
    while start + run < len(tokens) and run < _SUBJECT_RUN \
            and (tokens[start + run] in _SUBJECT_AGAIN
                 or tokens[start + run] in _stems(_DEGREE)):
        run += 1
    return run
_SHARED_SUBJECT = ("halves doubles cuts reduces increases raises lowers shrinks grows frees "
                   "wastes saves makes puts pushes keeps turns drives")


_JOINS = "and but while whereas although though however yet"
_ADVICE = "put use move place keep set turn enable disable add raise check watch alert buy"

# "… and the one that …", "… and the only one which …": the same subject, said again
_THE_ONE_THAT = (("the", "one", "that"), ("the", "one", "which"), ("the", "onli", "one"))

# A direction is said many ways: a claim written "the KV drops" is made by "the KV shrinks",
# "falls", "decreases". Each word of a claim's phrase in one of these families matches any
# other of its family (verbs with verbs, comparatives with comparatives).
_FAMILIES = (
    "drop drops fall falls shrink shrinks decrease decreases reduce reduces decline declines",
    "increase increases grow grows rise rises climb climbs boost boosts",
    "halve halves halved half",
    "double doubles doubled twice",
    "less fewer smaller",
    "more greater larger bigger higher",
)
MAX_VARIANTS = 64
# verbs of change whose subject a product's last factor is not ("n_kv × d_head drops")
_CHANGE_VERBS = " ".join(_FAMILIES[:4]) + " compress compresses narrow narrows"


@lru_cache(maxsize=65536)  # (every drill's claim phrases: some 30,000)
def _variants(phrase: str) -> tuple[tuple[str, ...], ...]:
    """The phrase's tokens with each word of direction replaced by the others of its family."""
    choices = []
    for token in phrase_words(phrase):
        family = next((_stems(f) for f in _FAMILIES if token in _stems(f)), None)
        choices.append(sorted(family) if family else [token])
    return tuple(itertools.islice(itertools.product(*choices), MAX_VARIANTS))


@lru_cache(maxsize=1024)
def _part_heads(claim: WrongClaim) -> tuple[tuple[frozenset[str], bool], ...]:
    """For each part, the first words its phrases (every variant) can start with, and whether
    one starts with a figure: a part none of whose words starts anywhere in a text is not said
    there, and so neither is the claim."""
    heads = []
    for part in claim.parts:
        words = {variant[0] for phrase in part for variant in _variants(phrase) if variant}
        heads.append((frozenset(w for w in words if not is_number(w)),
                      any(is_number(w) for w in words)))
    return tuple(heads)


def _made(reading: Reading, spans: list[int], claim: WrongClaim) -> bool:
    starts = reading.starts
    if any(not figure and starts.keys().isdisjoint(words)
           for words, figure in _part_heads(claim)):
        return False  # a part with no word of its phrases in the text (most claims, most texts)
    # Every unnegated occurrence of each part, by the span it sits in.
    by_part: list[dict[int, list[tuple[int, int]]]] = []
    # positions of the negators a part's own phrases hold ("wouldn't alert on"), before or
    # after the part they deny in the text: "I wouldn't alert on preemptions" says it
    denials: set[int] = {p for part, denial in zip(claim.parts, _denial_parts(claim),
                                                   strict=True) if denial
                         for phrase in part for variant in _variants(phrase)
                         for start, end in occurrences_of(reading, variant)
                         for p in range(start, end) if is_negator(reading.tokens[p])}
    for part, denied_later in zip(claim.parts, _denied_later(claim), strict=True):
        found: dict[int, list[tuple[int, int]]] = {}
        for phrase in part:
            for variant in _variants(phrase):
                for start, end in occurrences_of(reading, variant):
                    # (an earlier part that is itself a denial, "won't run more than", is the
                    # claim's predicate: its "not" does not negate the X after it)
                    if (not negated(reading, start, end, phrase, after=not denied_later)
                            or _negated_only_by(reading, start, denials)) \
                            and not given_up(reading, start, end) \
                            and (spans[start] == spans[end - 1] or "and" in variant
                                 or "/" in phrase
                                 # (a phrase written across a comma crosses it where it ends
                                 # its item: "Recompute, always.", corpus BS; not "swap or
                                 # recompute, always do the arithmetic": review of stop 75)
                                 or ("," in phrase and _ends_its_item(reading, end))) \
                            and not _operand(reading, start, variant):
                        found.setdefault(spans[start], []).append((start, end))
        by_part.append(found)
    if _said_in_one_span(reading, spans, claim, by_part, lead=None):
        return True
    # A claim's first part is its subject or condition, and a sentence may set it up before a
    # comma: "At TP=16 each head is split across two GPUs, so per GPU the KV halves". The other
    # parts still make one clause after the subject, in the same sentence, with no "and" or
    # "but" between them that would start another statement.
    if len(by_part) > 2:
        return _said_in_one_span(reading, spans, claim, by_part[1:], lead=by_part[0])
    # A two-part claim said as a rule: its subject in an "if" or "when" clause, its other part
    # in the main clause just after ("If requests are queueing at peak, the card has run out
    # of room"); the subject's clause is that condition, not another statement.
    ruled = {span: places for span, places in by_part[-1].items()
             if _after_condition(reading, spans, span, by_part[0])}
    return len(by_part) == 2 and bool(ruled) and _said_in_one_span(
        reading, spans, claim, [ruled], lead=by_part[0])


def _ends_its_item(reading: Reading, end: int) -> bool:
    return end >= len(reading.tokens) or reading.item[end] != reading.item[end - 1] \
        or reading.tokens[end] == ":"  # "Choose recompute, always: decode is memory-bound"


def _after_condition(reading: Reading, spans: list[int], span: int,
                     lead: dict[int, list[tuple[int, int]]]) -> bool:
    """Whether the span follows, in the same sentence, an item that opens with "if", "when",
    "once" or "even with" (on, at ...) and holds the lead part."""
    first = spans.index(span)
    if not first or reading.sentence[first - 1] != reading.sentence[first]:
        return False
    item = reading.item[first - 1]
    opens = next(p for p in range(first) if reading.item[p] == item)
    # ("even with hits, TTFT doesn't change": a condition conceded, expert pass 73)
    conceded = reading.tokens[opens] == "even" and opens + 1 < first \
        and reading.tokens[opens + 1] in _stems(_CONCEDED)
    return (reading.tokens[opens] in _stems(_CONDITIONS) or conceded) and any(
        reading.item[p] == item for places in lead.values() for p, _ in places)


_CONDITIONS = "if when whenever once"
_CONCEDED = "with on at for after"


@lru_cache(maxsize=1024)
def _denial_parts(claim: WrongClaim) -> tuple[bool, ...]:
    """For each part, whether one of its phrases is itself a denial ("wouldn't alert")."""
    return tuple(any(is_negator(token) for phrase in part for token in phrase_words(phrase))
                 for part in claim.parts)


@lru_cache(maxsize=1024)
def _denied_later(claim: WrongClaim) -> tuple[bool, ...]:
    """For each part, whether a later part is itself a denial ("doesn't help the step"): that
    part's "not" after this one is the claim's predicate, not a dismissal of it."""
    denials = _denial_parts(claim)
    return tuple(any(denials[index + 1:]) for index in range(len(denials)))


def _negated_only_by(reading: Reading, start: int, denials: set[int]) -> bool:
    """Whether every negator just before `start` (within the negation window) belongs to an
    earlier part's phrase: the claim's own "won't", no dismissal of this part."""
    window = range(max(0, start - NEGATION_WINDOW), start)
    before = [p for p in window if is_negator(reading.tokens[p])]
    return bool(before) and all(p in denials for p in before)


_OPERATORS = frozenset("×x÷/+-")


def _operand(reading: Reading, start: int, phrase: tuple[str, ...]) -> bool:
    """Whether an equation the phrase states ("d_head = 1,024", "d_head 1,024") is only the
    end of a longer one the text states ("n_kv × d_head = 1,024", "n_kv × d_head (1,024)"):
    its first name is an operand, not the subject of the equality; or whether a factor the
    phrase states ("5×") is a product's first operand ("5 × 1.4e11")."""
    end = start + len(phrase)
    if phrase[-1] == "×" and end < len(reading.tokens) and is_number(reading.tokens[end]) \
            and reading.sentence[end] == reading.sentence[start]:
        return True  # "5 × 1.4e11 FLOP" multiplies: no "5×" speed-up or ratio
    if start > 0 and reading.tokens[start - 1] == "×" and end < len(reading.tokens) \
            and reading.tokens[end] in _stems(_CHANGE_VERBS) \
            and not any(is_number(t) or t in _OPERATORS for t in phrase) \
            and reading.sentence[start - 1] == reading.sentence[end] == reading.sentence[start]:
        return True  # "n_kv × d_head drops": the product changes, not d_head
    if is_number(phrase[0]) and start > 1 and reading.tokens[start - 1] == "+" \
            and is_number(reading.tokens[start - 2]) \
            and reading.sentence[start - 2] == reading.sentence[start]:
        # (a sum only: a product's factor may be the claim, "2 × 576")
        return True  # "a 512+64 latent": 64 is a term of the sum, not 64 latent channels
    return ("=" in phrase or (len(phrase) > 1 and is_number(phrase[-1]))) and start > 0 \
        and reading.tokens[start - 1] in _OPERATORS \
        and reading.sentence[start - 1] == reading.sentence[start]  # "(2×). Batch-1 …" no



def _said_in_one_span(reading: Reading, spans: list[int], claim: WrongClaim,
                      parts: list[dict[int, list[tuple[int, int]]]],
                      lead: dict[int, list[tuple[int, int]]] | None) -> bool:
    shared = set(parts[0])
    for found in parts[1:]:
        shared &= set(found)
    for span in sorted(shared):
        sentence = reading.sentence[parts[0][span][0][0]]
        first = min(start for found in parts for start, _ in found[span])
        if lead is not None and not any(
                (reading.sentence[p] == sentence and p <= first
                 and not _stems(_JOINS).intersection(reading.tokens[p:first]))
                or _trailing_condition(reading, span, spans, p, end)
                for places in lead.values() for p, end in places):
            continue
        if _attributed(reading, spans, span, first) or _condition_of_denial(reading, spans,
                                                                           span, first):
            continue
        claimed = {p for found in parts for start, end in found[span] for p in range(start, end)}
        if _supposed(reading, spans, span, claimed):
            continue
        if any(_dismissed_after(reading, spans, span, end, claimed, _of_over_counting(claim))
               for found in parts for _, end in found[span]):
            continue
        if any(all(reading.item[start] in reading.questions for start, _ in found[span])
               for found in parts[1:] or parts):
            # asked, not said: "maybe you could offload some experts to the CPU?"; not a
            # question's subject the answer goes on to say something of ("The question is what
            # happens to the step time. It roughly doubles …": corpus CA), only what the
            # question itself says ("… when we double the batch. It doesn't move")
            continue
        if any(_rebutted_after(reading, p) for p in claimed):
            # quoted to be answered: '"TP=16 doubles capacity" - no.'; or answered where it
            # is set up, its correction after ("a factor 2 on the latent -- don't, it's one
            # 576-wide vector")
            continue
        said = _predicated(reading, parts[0][span] if lead is None else lead.get(span, []),
                           [place for found in parts[1:] for place in found[span]])
        items = frozenset(reading.item[start] for found in parts for start, _ in found[span])
        if len(items) == 1 and items <= reading.listed_items and _bare_term(reading, items):
            continue  # a term of a bare list ("…, expert offload, context caps") names it
        if not _reported(reading, sentence, claim.unless, _contrasted(reading, spans, span),
                         said, items, first, frozenset(claimed)):
            return True
    return False


def _supposed(reading: Reading, spans: list[int], span: int, claimed: set[int]) -> bool:
    """Whether part of the claim is the condition of a "would … if" in its span: "2,000 slots
    would be right if the server kept each conversation's KV between turns" supposes it
    (expert pass 74, F3)."""
    tokens = reading.tokens
    would = next((p for p in range(len(tokens)) if spans[p] == span and tokens[p] == "would"),
                 None)
    return would is not None and any(
        would < p < max(claimed) and spans[p] == span and tokens[p] == "if"
        for p in range(would + 1, len(tokens)))


def _trailing_condition(reading: Reading, span: int, spans: list[int], start: int,
                        end: int) -> bool:
    """Whether a claim's subject or condition closes the sentence of its other parts, in a
    short item of its own just after their span: "… reads just the 25.8 GB of active
    weights, regardless of batch."."""
    sentence = reading.sentence[start]
    if end < len(reading.tokens) and reading.sentence[end] == sentence:
        return False  # the sentence goes on after it
    opened = [p for p in range(start) if reading.sentence[p] == sentence and spans[p] == span]
    between = range(opened[-1] + 1 if opened else start, start)
    # (the whole item short: "recompute only on slow links or MHA" after "so swap wins" is a
    # clause of its own, not a condition of the claim: expert pass 78)
    return bool(opened) and end - opened[-1] - 1 <= _TRAILING_WORDS and all(
        reading.item[p] == reading.item[start] for p in between) \
        and not _stems(_JOINS).intersection(reading.tokens[p] for p in between)


_TRAILING_WORDS = 5


@lru_cache(maxsize=1024)
def _of_over_counting(claim: WrongClaim) -> bool:
    """Whether the claim is itself about counting or charging too much ("KV-seconds would
    double-charge"): "… would over-count" then says it, it dismisses nothing."""
    return any(word in phrase for part in claim.parts for phrase in part
               for word in ("double", "twice", "overcount", "over-count", "overstat"))


def _dismissed_after(reading: Reading, spans: list[int], span: int, end: int,
                     claimed: set[int], over_counting: bool = False) -> bool:
    """Whether the words just after one of the claim's parts dismiss what it named:
    "fragmentation or reserving max_model_len probably aren't it (with vLLM's paging)",
    "… is not the cause", "… isn't the bottleneck here"."""
    reach = [p for p in range(end, min(len(reading.tokens), end + _DISMISSAL_REACH))
             if spans[p] == span]
    while reach and reading.tokens[reach[0]] in _stems(_HEDGES_BEFORE_DISMISSAL):
        reach = reach[1:]
    if reach and reading.tokens[reach[0]] in _stems(_CONFUSES):
        # '"2,000 users = 2,000 slots" confuses conversations with requests', whatever of the
        # claim's words the confusion names
        return True
    if claimed.intersection(reach[:4]):
        return False  # the claim's own words ("the history isn't the problem")
    after = [reading.tokens[p] for p in reach]
    if len(after) > 3 and after[0] in _stems("per each every"):
        after = after[2:]  # "paging experts over PCIe per step is hopeless": the verdict
    if len(after) >= 3 and after[0] in _stems(_ADVISED) and after[1] == "be" and \
            after[2] in _stems(_REJECTED):
        return True  # "… should be avoided", "… must be rejected"
    if len(after) >= 2 and after[0] in _COPULAS and after[1] in _stems(_REJECTED):
        return True  # "… is discouraged", "… was rejected"
    if len(after) >= 4 and after[0] in _COPULAS and after[1] == "what" and \
            _stems(_EXPECTS).intersection(after[2:5]):
        return True  # "'Just buy 40% more GPUs' is what product expects; not before …"
    if len(after) >= 2 and after[0] in _COPULAS and (
            after[1] == "unlik" or after[1:3] == ["less", "like"]):
        return True  # "fragmentation and reserving max length are less likely with vLLM"
    if len(after) >= 3 and after[0] in _stems("does do will would can") \
            and is_negator(after[1]) and after[2] in _stems(_FALLS_SHORT):
        return True  # "charging per token like chat doesn't cover their cost"
    harm = [word for word in after[1:4] if word not in _stems(_HEDGES_OF_HARM)]
    overshoots = harm and (harm[0] in _stems(_OVERSHOOTING) or (
        harm[0] == "over" and len(harm) > 1 and harm[1] in _stems(_OVER)))
    if len(after) >= 2 and after[0] in _stems("would will could") and harm and (
            (harm[0] in _stems(_HARMS) and not overshoots)
            or (overshoots and not over_counting)):
        return True  # "raising max_model_len globally would directly cut chat capacity"
    if len(after) >= 3 and after[0] in _COPULAS and after[1] in _stems("a an the") and \
            _stems(_MISTAKE) & set(after[2:4]):
        return True  # "… is a common mistake", "… is the classic trap"
    return len(after) >= 3 and after[0] in _COPULAS and is_negator(after[1]) and bool(
        _stems(_DISMISSED_AS) & set(after[2:4]) or _stems(_VERDICTS) & set(after[2:5]))


_DISMISSAL_REACH = 7


def _rebutted_after(reading: Reading, last: int) -> bool:
    """Whether the item after the one that holds the claim's last word answers it with a bare
    rejection, as a candidate sets up a claim to knock down: '"TP=16 doubles capacity" - no.',
    "… . No, …", "… - wrong.", "… - that can't happen;", "… -- don't, …"."""
    start = _item_after(reading, last)
    if start is None:
        return False
    item = reading.item[start]
    after = _item_after(reading, start)  # what follows the answer: "…, no wait, yes, 64"
    opens = None if after is None else reading.tokens[after]
    words = [reading.tokens[p] for p in range(start, len(reading.tokens))
             if reading.item[p] == item]
    if ":" in words and words[0] in _stems("that this it"):
        # the rejection before the colon that gives the reason: "… sounds harmless — it isn't:
        # it's a promise of up to 16 GiB" (expert pass 79); not a ❌'s "wrong:"
        words = words[:words.index(":")]
    if words == ["do", "not"]:
        return True  # "people put a factor 2 on the latent -- don't, it's one vector"
    if len(words) == 2 and words[0] in _stems(_TAKING_BACK) and \
            words[1] in _stems(_TAKEN_BACK) and words[0] != words[1] and \
            opens not in _stems(_REASSERTED):
        return True  # said aloud and taken back: "… which is sixty-four, no wait, that's the
        # query heads" (corpus BU); not a bare "actually" ("The colleague is right, actually."),
        # "no no", or "no wait, yes, 64" (review of stop 75)
    if words == ["sorri"] and opens is not None and is_number(opens):
        return True  # "… which is sixty-four, sorry, eight": another figure in its place; not
        # "… is skipped, sorry." or "…, sorry, until the sampled token" (review of stop 75)
    if len(words) <= _VERDICT_WORDS and tuple(words[-2:]) in _overshoots() and (
            words[0] in _stems("far way much") or (len(words) > 3 and is_number(words[0])
                                                   and words[1] in _stems(_TIMES))):
        return True  # "… and sizing on it gives 22 GPUs, 7 times too much" (corpus BT); not
        # "…, 31.5 KiB too high", a figure judged (review of stop 75)
    if words[0] in _stems(_REBUTTALS):
        # the word alone ("No.", "- no,", "- wrong."), or "no" before a colon ("No: it does
        # 16 GFLOP"); not "Wrong:", which a ❌ reads as, of what follows it ("❌ FP8 KV")
        return len(words) == 1 or (words[0] in _stems("no nope") and words[1] == ":")
    head = words[:words.index(":")] if ":" in words else words
    written = reading.written or reading.sentence
    if head[:1] == ["not"] and len(head) > 1 and head[1] in _stems(_NOT_WHERE) \
            and len(head) <= _NOT_WHERE_WORDS \
            and (written[start] != written[last]
                 or after is None or written[after] != written[start]) \
            and "but" not in (reading.tokens[p] for p in range(start, len(reading.tokens))
                              if written[p] == written[start]) \
            and _put_up_to_answer(reading, last):
        return True  # a place it does not hold, said alone after a claim quoted or put to the
        # answer: '"attention is quadratic" — not in decode', "A common worry is that … costs
        # 5 steps. Not while it's memory-bound: …" (expert pass 93); not a qualifier the
        # sentence goes on from ("…, not in every decode step, so …": corpus BG), nor one a
        # "but" answers ("Decode is compute-bound. Not at batch 1, but …": review of stop 77)
    if words[0] == "here" and _put_up_to_answer(reading, last, _APPEARING):
        words = words[1:]  # "… sounds like it should lengthen the step; here it doesn't"
    return len(words) <= _REBUTTAL_WORDS and len(words) > 2 and \
        words[0] in _stems("that this it") and is_negator(words[2]) and \
        set(words[3:]) <= _stems(_REBUTTAL_ENDS)


@lru_cache(maxsize=1)
def _overshoots() -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(phrase_words(phrase)) for phrase in _OVERSHOT)


_VERDICT_WORDS = 4  # "far too many", "7 times too much", "3x too high"
_TIMES = "times time x ×"
# a bare word that answers a claim set up just before it
_REBUTTALS = "no nope wrong false incorrect untrue"
_REBUTTAL_WORDS = 5  # "that is not how it works" is the longest form read
_TAKING_BACK = "no nope sorry actually"  # "no wait", "sorry, no", "actually no"
_TAKEN_BACK = "wait sorry scratch hang hold no"
_REASSERTED = "yes yeah yep right correct"


def _item_after(reading: Reading, position: int) -> int | None:
    """Where the item after the one holding `position` opens (None: the text ends there)."""
    return next((p for p in range(position + 1, len(reading.tokens))
                 if reading.item[p] != reading.item[position]), None)
_REBUTTAL_ENDS = "happen true right so correct work works how it the case"
# "Not while it's memory-bound", "not in decode", "Not before reading the card": the claim
# before denied where it would hold, in an item of a few words (up to a colon)
_NOT_WHERE = "while before in here when at under until"
_NOT_WHERE_WORDS = 6
# a sentence that sets its claim up to be answered: quoted, or named as a belief or a reflex
# ("A common worry is that …", "… is the reflex"), or an appearance ("sounds like …")
_APPEARING = "sound sounds seem seems look looks expect expected"


def _put_up_to_answer(reading: Reading, at: int, words: str = "") -> bool:
    """Whether the written sentence holding `at` is quoted, or holds one of `words` (by
    default a belief word: worry, reflex, assumption …)."""
    written = reading.written or reading.sentence
    if written[at] in reading.quoted:
        return True
    said = {reading.tokens[p] for p in range(len(reading.tokens)) if written[p] == written[at]}
    return bool(said & _stems(words or f"{_BELIEF} {_PUT_TO_ME}"))


_HEDGES_BEFORE_DISMISSAL = "probably likely clearly really certainly definitely almost surely"
# what a named cause is said not to be: "… is not it", "… aren't the problem"
_DISMISSED_AS = "it cause culprit problem issue reason explanation bottleneck blame answer " \
    "factor driver story"
# what a proposal is said not to be, in a memo's register: "… is not recommended", "… is not
# advisable", "… is not a good idea", "… isn't justified"
_VERDICTS = "recommended advisable advised wise idea justified warranted necessary needed " \
    "sensible option"
_ADVISED = "should must would"
# what a claim set up to be knocked down is said to do or be, just after it (expert pass 54)
_CONFUSES = "confuses conflates muddles misreads"
_MISTAKE = "mistake myth trap misconception fallacy error misreading"
_REJECTED = "avoided discouraged rejected declined inadvisable premature unwise wasteful " \
    "hopeless impractical infeasible unworkable pointless futile"
# what a proposal is said not to do, just after it (corpus BI): "… doesn't cover the cost"
_FALLS_SHORT = "cover capture reflect work suffice"
# what others are said to want, of a claim quoted just before (expert pass 80)
_EXPECTS = "expect expects want wants say says think thinks assume assumes suggest suggests"
# what a proposal is said to do harm by, just after it (expert pass 79): "… would cut chat
# capacity", "… will starve the chat pool"
_HARMS = "cut hurt reduce break starve crush evict preempt slash kill"
_OVERSHOOTING = "overcount overstate overestimate overbook inflate"
_HEDGES_OF_HARM = "directly just immediately also quickly badly wildly grossly"
# "… would over-count" is read "over count": the verb's second half (corpus BS)
_OVER = "count state estimate book"


def _short_tail(reading: Reading, position: int) -> bool:
    """Whether the "and" at `position` joins a short noun phrase that ends its item ("its
    input embedding and output LM head,"): the words before it go on, no second clause."""
    item = reading.item[position]
    tail = [p for p in range(position + 1, min(len(reading.tokens), position + 5))
            if reading.item[p] == item]
    ends = position + len(tail) + 1 >= len(reading.tokens) or \
        reading.item[position + len(tail) + 1] != item
    return 0 < len(tail) <= _SHORT_TAIL and ends and not any(
        is_number(reading.tokens[p]) or is_negator(reading.tokens[p]) for p in tail)


_SHORT_TAIL = 3


def _bare_term(reading: Reading, items: frozenset[int]) -> bool:
    """Whether the item is a term of a few words, in a list of them, with no figure, negation
    or direction: named, not claimed ("no separate pool" and "shorter step" claim)."""
    words = [t for t, i in zip(reading.tokens, reading.item, strict=True) if i in items]
    sentence = {s for s, i in zip(reading.sentence, reading.item, strict=True) if i in items}
    listed = {i for s, i in zip(reading.sentence, reading.item, strict=True) if s in sentence}
    return len(listed) >= _LIST_TERMS and len(words) <= _BARE_TERM_WORDS and not any(
        is_number(word) or is_negator(word) or word in _stems(_DIRECTIONS) for word in words)


_BARE_TERM_WORDS = 3
_LIST_TERMS = 3  # items of a sentence that make it a list ("It's fragmentation." is none)
# words that say which way something goes: a term with one states a change ("shorter step")
_DIRECTIONS = " ".join(_FAMILIES) + " shorter longer faster slower lower cheaper costlier " \
    "worse better"
_COPULAS = frozenset({"is", "are", "was", "were", "be", "seem", "seems", "look", "looks"})
_SUBJECT_REACH = 2  # words between a subject and its copula ("KV usage gauges are")


def _predicated(reading: Reading, subjects: list[tuple[int, int]],
                predicates: list[tuple[int, int]]) -> frozenset[int]:
    """The report words that are the claim's own predicate, said of its subject ("KV usage
    gauges are misleading"): the candidate's verdict, not a claim reported as a mistake ("the
    idea that KV usage is meaningless is misleading" says it of the idea; "raising it for
    everyone is bad" of the proposal, in no words of the claim)."""
    tokens, found = reading.tokens, set()
    for _, end in subjects:
        for j in range(end, min(end + _SUBJECT_REACH + 1, len(tokens) - 1)):
            if tokens[j] in _COPULAS:
                if tokens[j + 1] in _stems(_REPORTED) and any(
                        start <= j + 1 < stop for start, stop in predicates):
                    found.add(j + 1)
                break
    return frozenset(found)


def _while_of_time(reading: Reading, position: int) -> bool:
    """Whether "while" at `position` says when ("while they read", "while typing", "while the
    user thinks"), not what holds of something else (expert pass 82, A035)."""
    if reading.tokens[position] != "while":
        return False
    after = reading.tokens[position + 1:position + 4]
    if after[:1] and after[0] in _stems(_PASSING_TIME):
        return True
    subject = 2 if after[:1] == ("the",) else 1
    return len(after) > subject and after[subject - 1] in _stems(_WAITERS) and \
        after[subject] in _stems(_PASSING_TIME)


_PASSING_TIME = "reading typing thinking waiting idling read type think wait idle"
_WAITERS = "they he she users user people you"


def _span_before(reading: Reading, spans: list[int], span: int, first: int) -> list[str]:
    """The tokens of the claim's span before its first word, the span's joining word left
    out ("but people assume …")."""
    before = [reading.tokens[p] for p in range(first) if spans[p] == span]
    return before[1:] if before and before[0] in _stems(_JOINS) else before


def _attributed(reading: Reading, spans: list[int], span: int, first: int) -> bool:
    """Whether the claim's clause opens by giving it to others: "people (often) assume",
    "you might think", "the common belief is", "contrary to"."""
    before = _span_before(reading, spans, span, first)
    head = before[:_ATTRIBUTION_REACH + 1]
    # the belief word just after its "common" ("a common take", "the usual assumption"): not
    # "standard practice is to take …"
    if any(word in _stems(_COMMON) and _stems(_BELIEF).intersection(head[at + 1:at + 3])
           for at, word in enumerate(head)):
        return True
    if head[:2] == ["contrari", "to"]:
        return True  # "contrary to what the chat price sheet suggests, …": set against
    if _tempting(_without_its_subject(head)):
        return True
    if any(head[at:at + 3] in (["trip", "up", "is"], ["trip", "up", "are"])
           and not any(is_negator(word) for word in head[:at]) for at in range(len(head))):
        return True  # a pitfall named: "where you'll trip up is sizing it as if …"
    return opens_with_belief(head)


def _without_its_subject(head: list[str]) -> list[str]:
    """The clause after its "it is", "it would be" or "it" ("it's" is read as "it"; "it would
    be natural to think …": expert pass 89)."""
    for opening in (["it", "would", "be"], ["it", "is"], ["it"]):
        if head[:len(opening)] == opening:
            return head[len(opening):]
    return head


def _tempting(head: list[str]) -> bool:
    """Whether a clause opens by calling what follows tempting: "It's tempting to map 2,000
    online to 2,000 slots -- but …", "Easy to assume any shared text gets reused -- it must be
    a prefix" (expert pass 82, F1 and F2). "Easy" and "natural" only before a verb of belief:
    "it's easy to double capacity" is a claim."""
    if len(head) < 2 or head[1] != "to":
        return False
    return head[0] == "tempt" or (head[0] in _stems(_NATURAL_TO)
                                  and len(head) > 2 and head[2] in _stems(_BELIEVING_VERBS))


_NATURAL_TO = "easy natural"
_BELIEVING_VERBS = "assume think believe read expect say suppose"


def _condition_of_denial(reading: Reading, spans: list[int], span: int, first: int) -> bool:
    """Whether the claim sits in an "if" that gives the condition of a value just denied:
    "C ≈ 320, … and not 630 if you give the chunk the whole 25 ms"."""
    before = _span_before(reading, spans, span, first)
    if "if" not in before:
        return False
    denial = before[: len(before) - 1 - before[::-1].index("if")]
    return bool(denial) and is_negator(denial[0])


_CONTRASTS = "while whereas"


def _contrasted(reading: Reading, spans: list[int], span: int) -> frozenset[int]:
    """The positions of the clauses after the claim's that a "while" or "whereas" opens: they
    say what holds of something else ("batch 1 is compute-bound, while at 96 you're
    memory-bound"), so an excuse there does not excuse the claim."""
    opened, cut = set(), False
    for position, token in enumerate(reading.tokens):
        if spans[position] > span and (position == 0 or spans[position - 1] != spans[position]):
            cut = cut or token in _stems(_CONTRASTS)
        if cut and spans[position] > span:
            opened.add(position)
    return frozenset(opened)


def _reported(reading: Reading, sentence: int, unless: Iterable[str],
              elsewhere: frozenset[int] = frozenset(), said: frozenset[int] = frozenset(),
              items: frozenset[int] = frozenset(), at: int | None = None,
              claimed: frozenset[int] = frozenset()) -> bool:
    positions = [p for p, s in enumerate(reading.sentence) if s == sentence]
    words = {reading.tokens[p] for p in positions}
    # A mistake named in a sentence written before the claim's ("the colleague is wrong. Both
    # lines are per GPU") is another's: the claim's own sentence, and those after it, report.
    own = -1 if at is None or not reading.written else reading.written[at]
    # "the tokens the draft got wrong" says what was guessed, not that a claim is a mistake
    reports = {reading.tokens[p] for p in positions
               if p not in said and not (p and reading.tokens[p - 1] in _stems(_GOT)
                                         and reading.sentence[p - 1] == sentence)
               and not (p and reading.tokens[p - 1] in _stems(_GOES)
                        and reading.tokens[p] == "wrong")
               # "beats GQA so badly": how much, no verdict on a claim (expert pass 71, M23)
               and not (p and reading.tokens[p] == "bad"
                        and reading.tokens[p - 1] in _stems(_INTENSIFIERS))
               and (own < 0 or reading.written[p] >= own)
               and not _said_of_what_came_before(reading, p, at)
               and not _judges_its_own_subject(reading, p, at, items)
               } & _stems(_REPORTED)
    if reports or (_counterfactual_before(reading, positions, at)
                   and _in_the_supposition(reading, positions, at)):
        return True
    # "raising it everywhere would seem harmless because vLLM pages - it isn't": an
    # appearance set up to be knocked down, not the candidate's view (expert pass 59, W1)
    if words & _stems("would might may could") and words & _stems("seem seems"):
        return True
    # "raising max_model_len fleet-wide looks harmless with paging, but each 128k session is
    # 16 GiB": the claim's clause is an appearance, and the "but" after it answers it
    if at is not None and _appearance_answered(reading, positions, at):
        return True
    # "subtracting only the active 37B would give 946 GB, 3× too much": a what-if, judged
    if "would" in words and any(reading.sentence[start] == sentence
                                for phrase in _OVERSHOT for start, _ in occurrences(reading,
                                                                                   phrase)):
        return True
    # "both lines are per GPU, he says, but …": a claim given to someone by a speech tag, with
    # no turn between the two ("one could argue it's memory-bound, but at batch 1 it is
    # compute-bound" gives the claim after the "but" to the answer: review of stop 74)
    if any(reading.sentence[start] == sentence and (at is None or not _stems(_TURNS).intersection(
               reading.tokens[min(start, at):max(start, at)]))
           for phrase in _SPEECH_TAGS for start, _ in occurrences(reading, phrase)):
        return True
    if at is not None and any(
            reading.sentence[start] == sentence
            and (start < at or (phrase in _BLAMED and start - at <= _BLAMED_REACH))
            and not _thought_breaks().intersection(reading.tokens[min(start, at):at])
            and not _endorsed_after(reading, positions, min(start, at), at)
            for phrase in _THOUGHT_TAGS for start, _ in occurrences(reading, phrase)):
        return True
    if positions and reading.tokens[positions[0]] in _stems(_SUPPOSE):
        return True  # "ignore the chunk's attention and you get 417": a what-if
    opening = [reading.tokens[p] for p in positions[:5]]
    if len(opening) > 2 and opening[0] in _stems("the your their") \
            and opening[1] in _stems(_PUT_TO_ME) and _stems("is was").intersection(opening[2:]) \
            and not _stems(_ENDORSED).intersection(reading.tokens[p] for p in positions[:7]):
        return True  # "The proposal was "TP=16 to double it"": another's, quoted to weigh
    if len(opening) > 2 and opening[0] in _stems("the a an") \
            and opening[1] in _stems(_FIRST_GUESS) and opening[2] in _stems(_A_READING) \
            and not _stems(_ENDORSED).intersection(words) \
            and _stems(_GUESS_TURNED).intersection(words):
        return True  # "The intuitive read — 16 GPUs halve each one's slice — breaks at …"
    # An excuse the sentence itself denies excuses nothing: "plan on the p99, not the mean"
    # makes the claim its `unless` ("the mean") would have excused.
    # (an excuse written with its own "while", "while the real constraint", is that clause)
    # "instead of" and "rather than" set one thing against another in their own item: "Instead
    # of a separate pool, prefix caching. Then raise it for everyone" excuses nothing after it
    return any(reading.sentence[start] == sentence
               # (a condition's own denial is its content: "refuses to start if one request
               # doesn't fit" is still a rule, not this case)
               and (phrase in _CONDITION_WORDS or not negated(reading, start, end, phrase))
               and (start not in elsewhere or _stems(_CONTRASTS) & set(phrase_words(phrase)))
               and not (items and phrase in _SET_AGAINST and reading.item[start] not in items)
               and not _chosen_over(reading, start, claimed)
               and not _in_the_engine_line(reading, start)
               and not (phrase == "would" and _the_answer_s_own_would(reading, start, at))
               # a condition in an item after the claim's is that item's own ("raise it for
               # everyone - …, and the scheduler preempts fairly if needed": expert pass 69)
               and not (items and at is not None and phrase in _LATER_CONDITIONS
                        and start > at and reading.item[start] not in items)
               # "it looks like 240 ms on paper, but the recompute is free": the appearance
               # is the clause before the "but", the claim is the candidate's (only an
               # appearance: "… because it's untied …, but the input embedding is a gather"
               # keeps its excuse)
               and not (phrase in _APPEARANCES and _said_of_what_came_before(reading, start, at))
               for phrase in unless for start, end in occurrences(reading, phrase))


def _in_the_engine_line(reading: Reading, start: int) -> bool:
    """Whether a would-be excuse is a word of vLLM's start-up line, quoted: in "'Maximum
    concurrency for 32,768 tokens per request: X' is the number of sessions the card will
    carry" the "32,768" and "per request" are the log's, not a worst case the answer names
    (expert pass 91, A126; corpus BW)."""
    tokens = reading.tokens
    # (as printed: "… tokens per request: X", not a paraphrase of it: review of stop 76)
    return any(tuple(tokens[p:p + 3]) == _ENGINE_LINE and start < p + 7
               and ("request", ":") in zip(tokens[p:p + 8], tokens[p + 1:p + 9], strict=False)
               for p in range(max(0, start - 6), start + 1))


_ENGINE_LINE = ("maximum", "concurr", "for")


def _the_answer_s_own_would(reading: Reading, start: int, at: int | None) -> bool:
    """Whether a "would" is the answer's own proposal or the consequence it draws, not a
    what-if: "The first change I would make is …", "one would therefore watch …", "…, which
    would indicate that the card is saturated" (corpus BX, written in a formal register)."""
    tokens = reading.tokens
    before = tokens[start - 1] if start else ""
    after = tokens[start + 1] if start + 1 < len(tokens) else ""
    if before in ("i", "we", "one"):
        return not is_negator(after)  # ("What I would not do: offload …" sets it aside)
    # a signal read, after the claim ("…, which would indicate …"); not a what-if's price
    # ("that would buy 21 GPUs", "that would only be right under …")
    return at is not None and start > at and before in ("which", "that") \
        and after in _stems(_SIGNALS)


_SIGNALS = "indicate indicates mean means show shows signal signals suggest suggests tell tells"


def _chosen_over(reading: Reading, start: int, claimed: frozenset[int]) -> bool:
    """Whether an excuse is the "rather than" or "instead of" that follows the whole claim,
    with no turn between: the claim is what is chosen over the other ("raising max_model_len
    for everyone is fine, and I'd do that rather than build a second fleet": corpus BW); one
    before the claim's last word sets that part aside ("come back by a copy rather than
    paying 240 ms to re-prefill them": review of stop 76)."""
    tokens = reading.tokens
    if not claimed or tokens[start] not in _stems("rather instead") \
            or start + 1 >= len(tokens) or tokens[start + 1] not in ("than", "of"):
        return False
    first, later = min(claimed), [p for p in claimed if p > start]
    if start < first:
        # "TP compounds the saving rather than eroding it: … the latent is sharded eight
        # ways" sets aside what it names before the colon, not the claim after it (corpus BX)
        return ":" in tokens[start:first]
    if _stems(_TURNS).intersection(tokens[first:start]):
        return False
    # what it sets aside is what follows it, up to a colon ("TP helps rather than hurts here:
    # just like GQA heads, …" keeps the claim after the colon: corpus BO)
    return not later or ":" in tokens[start:min(later)]


@lru_cache(maxsize=1)
def _thought_breaks() -> frozenset[str]:
    """What ends the clause a thought tag sets out: a turn, a colon, "now", "then" …"""
    return _stems(_TURNS) | _stems(_THOUGHT_ENDS)


@lru_cache(maxsize=1)
def _endorsing() -> frozenset[str]:
    return _stems(_ENDORSED) | _stems(_ENDORSING)


def _endorsed_after(reading: Reading, positions: list[int], start: int, at: int) -> bool:
    """Whether the sentence calls right what it sets out after `start` ("…, and they'd be
    right", "which is correct", "My first guess was right: …"), not denied ("not right"),
    before a colon or a turn after the claim ("Strike the idea that X: … still …")."""
    tokens = reading.tokens
    stop = next((p for p in positions if p > at and tokens[p] in _thought_breaks()),
                len(tokens))
    return any(start < p < stop and (tokens[p] in _endorsing() or any(
                   tuple(tokens[p:p + len(words)]) == words for words in _DOING_THE_SAME))
               and not any(is_negator(tokens[q]) for q in range(max(start, p - 2), p))
               for p in positions)


# "…; I'd do the same", "…, and that's what I'd do too" ("I'd" reads as "i")
_DOING_THE_SAME = (("do", "the", "same"), ("what", "i", "do"), ("what", "i", "would", "do"))


def _counterfactual_before(reading: Reading, positions: list[int], at: int | None) -> bool:
    """Whether an "if" at or before the claim opens a counterfactual: "if … were", or "if"
    with a "had" just after it ("if the model had tied embeddings"); not "the LM head is
    tied, if I had to guess", whose "if" comes after the claim (review of stop 74)."""
    tokens, last = reading.tokens, positions[-1] if positions else -1
    were = [q for q in positions if tokens[q] == "were"]
    return any(tokens[p] == "if" and (at is None or p <= at) and (
        (were and were[-1] > p) or "had" in tokens[p + 1:min(p + _HAD_REACH, last) + 1])
        for p in positions)


def _in_the_supposition(reading: Reading, positions: list[int], at: int | None) -> bool:
    """Whether the claim at `at` is said in a counterfactual's "if … were" clause, or after it
    as what would follow ("if TP were 16, each GPU would hold half a head"): not what a main
    clause states outright after it ("if it were below 1, vLLM starts anyway": expert pass 74,
    M19)."""
    if at is None:
        return True
    ifs = [p for p in positions if reading.tokens[p] == "if" and p <= at]
    if not ifs or reading.item[ifs[-1]] == reading.item[at]:
        return True
    after = [reading.tokens[p] for p in positions if p > ifs[-1]]
    return bool(_stems("would could might") & set(after))


def _appearance_answered(reading: Reading, positions: list[int], at: int) -> bool:
    """Whether the claim at `at` sits in a clause that says how something looks ("looks
    harmless", "seems free", "sounds cheap", "in theory") or is wished for, and a "but", "yet"
    or "however" later in the sentence turns against it."""
    tokens = reading.tokens
    seems = [p for p in positions if tokens[p] in _stems(_APPEARS)]
    # a wish, said before what is wished or inside its clause: "you'd like half a head each,
    # but a head can't be split", "at TP=16 you'd hope for half a head, but …" (no turn
    # between the wish, the claim and the "but" that answers them)
    wishes = [p for p in positions if tokens[p] in _stems(_WISHED)
              and p and tokens[p - 1] in _stems(_WISHERS)]
    turns = [p for p in positions if tokens[p] in _stems(_TURNS)]
    return any(at < turn and (any(
        wish < turn and (wish < at or reading.clause[wish] == reading.clause[at])
        and not _stems(_TURNS).intersection(tokens[min(wish, at):turn])
        for wish in wishes) or any(at < seen < turn for seen in seems)) for turn in turns)


_APPEARS = "look looks seem seems sound sounds appear appears ideally theory"
_WISHED = "like want wish hope love"
_WISHERS = "would you we i"  # ("you'd like" reads "you like")


def _said_of_what_came_before(reading: Reading, report: int, at: int | None) -> bool:
    """Whether a report word ("wrong") judges an earlier statement that a "but" closes before
    the claim: "2,000 slots is wrong, but you can't plan on the average: size every slot for
    the p99" says the claim, it does not report it."""
    return at is not None and report < at and bool(
        _stems(_TURNS).intersection(reading.tokens[report + 1:at]))


def _judges_its_own_subject(reading: Reading, report: int, at: int | None,
                            items: frozenset[int]) -> bool:
    """Whether a report word after the claim, in an item of its own, judges that item's own
    subject: "…, since both have a 4,096 window; …, and using 256 from the config is the
    actual mistake" (expert pass 91, A159) calls the 256 a mistake, not the claim; "…, and
    that's a mistake", "… - a classic trap", "this mistake" still judge the claim."""
    if at is None or not items or report < at or reading.item[report] in items:
        return False
    tokens, item = reading.tokens, reading.item
    opening = report
    while opening > 0 and item[opening - 1] == item[report]:
        opening -= 1
    subject = tokens[opening:report]
    # "and that assumption is a mistake", "and believing that is the classic mistake": the
    # claim, pointed at or named as a belief just before the verdict (review of stop 76);
    # not "comparing it with a bandwidth floor is the wrong comparison"
    just_before = []
    for token in reversed(tokens[max(opening, report - 4):report]):
        if token == "and" or token in _stems(_TURNS):
            break
        just_before.append(token)
    if _naming_the_claim().intersection(just_before):
        return False
    # (a figure is no subject: "…, a 3× fiction")
    return any(token not in _stems(_FILLERS) and not is_number(token) and token.isalpha()
               for token in subject)


@lru_cache(maxsize=1)
def _naming_the_claim() -> frozenset[str]:
    """Words that, just before a report word, make the claim its subject: "that", "this
    assumption", "believing that"."""
    return _stems(_POINTING) | _stems(_BELIEF) | _stems(_BELIEVING)


_POINTING = "this that these those such it which what"
_BELIEVING = ("believing thinking assuming reading treating idea reasoning number claim "
              "figure logic argument notion")
_FILLERS = ("and so a an the is are was were be been s its classic common typical real actual "
            "big huge the usual all too easy very clear obvious total complete also again "
            "just exactly precisely one another")
_TURNS = "but however yet"
_OVERSHOT = ("too much", "too many", "too high", "too big", "too large", "too optimistic",
             "too low", "too few", "too small")
_CONDITION_WORDS = frozenset({"if", "when", "whenever", "unless", "once", "only when",
                              "would", "could", "otherwise"})
_APPEARANCES = frozenset({"people assume", "people think", "people expect", "one might",
                          "you might", "might think", "might expect", "would think",
                          "some think", "some say", "at first glance", "on paper",
                          "intuitively", "common belief", "the intuition", "people voice"})
_SET_AGAINST = frozenset({"instead of", "rather than"})
_LATER_CONDITIONS = frozenset(_CONDITIONS.split())  # an unless phrase that is one of them
