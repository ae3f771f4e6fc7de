"""Reading a text answer for what it says: sentences, items and clauses; rubric phrases found
on word stems; negation; a concept's mentions and the credit each earns.

Text answers are read for reasoning, not keywords. An answer is cut into sentences (a bullet, a
blank line, `.`, `!`, `?` or `;` ends one; a sentence that opens with "it", "this", "so"... carries
on the one before) and each sentence into items (commas, parentheses, dashes, short lines). Rubric
phrases match on word stems (snowball, English). A mention earns a concept unless it is negated
in its clause ("no need for FP8", "without prefix caching", "rather than", "unlike"); a generic
phrase needs one of the concept's `about` terms in its sentence, and is never a single word
("own", "same"); a figure quantifies a mention only in the same sentence (the same item when
listed). A mention whose sentence is a bare list of terms — no verb, no causal or quantitative
link — is "listed, not explained" and earns half of what it would.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from trainer.drills.model import Concept
from trainer.reading.emphasis import without_emphasis
from trainer.reading.exact import Fraction
from trainer.reading.patterns import lazy
from trainer.records import record

MAX_TEXT_CHARS = 8000  # the answer sheet's cap; anything longer is read up to here

# ---------------------------------------------------------------------------------------------
# Reading a text: tokens with their sentence, item and clause.

_BULLET = lazy(r"^\s*(?:[-*•·▪‣+>]|\d{1,2}[.)]|\(?[a-z]\)|\(?[ivx]{1,4}\))\s+")
# ("No. 5" is a number; "No. The ceiling is …" answers a question and ends its sentence)
_ABBREVIATIONS = lazy(r"\b(e\.g|i\.e|vs|etc|approx|cf|resp|incl|no(?=\.\s+\d))\.(?=\s)")
# A question said aloud and transcribed without its mark ("So the pitch, is it as cheap as a
# thirteen B."): the verb before its subject, at the sentence's start or after a short lead-in
_ASKED_UNMARKED = lazy(r"\s*(?:(?:so|and|ok|okay|well|um|uh)\b[\s,]*)?(?:[^,.;:\n]{1,40},\s*)?"
                       r"(?:(?:is|are|does|can)\s+(?:it|this|that|they|we|you)"
                       r"|do\s+(?:they|we|you))\b")
# (not "do it:", a command, nor "should it run short, …", a condition: review of stop 73)
_SENTENCE_END = lazy(r"""[.!?]+[)\]"'”’]*(?=\s|$)""")  # "ridge.) So" ends one too
_TOKEN = lazy(
    r"(?P<num>\d+(?:[.,]\d+)*)"
    r"|(?P<word>[a-z][a-z0-9]*)"
    r"|(?P<sym>->|=>|~=|>=|<=|>>|<<|[→⇒=≈≥≤≫≪><÷×*+−%^:;/(),\[\]—–|-])"
)
_NAME_EQUALS = lazy(r"(?<=[a-z])=(?=\d)")
# Greek letters name the variables of a derivation ("k·α + 1", "η(B)"): read as their names
_GREEK = str.maketrans({"α": " alpha ", "β": " beta ", "γ": " gamma ", "δ": " delta ",
                        "ε": " epsilon ", "η": " eta ", "θ": " theta ", "λ": " lambda ",
                        "ρ": " rho ", "τ": " tau "})
# a dot between two terms is a product ("8·5.37", "2·L·n_kv"); spaced out it separates a list
_PRODUCT_DOT = lazy(r"(?<=[\w)])[·⋅](?=[\w(])")
_THOUSANDS = lazy(r"(?<=\d),(?=\d{3}(?!\d))")
_BRITISH = lazy(r"(?<=[a-z]{2})is(e|es|ed|ing|ation|ations|er|ers)$")
_SYMBOLS = {"->": "→", "=>": "→", "⇒": "→", "~=": "≈", ">=": "≥", "<=": "≤", ">>": "≫",
            "<<": "≪", "*": "×", "−": "-", "–": "-"}
_CONTRACTIONS = ((lazy(r"\bwon't\b"), "will not"), (lazy(r"\bcan't\b"), "can not"),
                 (lazy(r"\bcannot\b"), "can not"), (lazy(r"n't\b"), " not"),
                 # typed without the apostrophe: "didnt", "doesnt", "isnt", "cant", "wont"
                 (lazy(r"\b(do|does|did|is|are|was|were|has|have|had|could|would|"
                       r"should|must|need)nt\b"), r"\1 not"),
                 (lazy(r"\bcant\b"), "can not"), (lazy(r"\bwont\b"), "will not"),
                 # "capacity stops growing": no longer does (not "the state grows"); only a
                 # change stops so ("stop duplicating KV heads" is a fix, not a denial)
                 (lazy(r"\bstop(?:s|ped)? (?=(?:grow|scal|increas|ris|shrink|fall|drop|climb"
                       r"|declin|decreas)ing\b)"), "does not keep "),
                                  (lazy(r"'(s|re|ve|ll|d|m)\b"), ""))
# "There is …", "There's no …" ("'s" is folded away): "there" as no pointer back
_EXISTENTIAL = frozenset({"is", "are", "was", "were", "isnt", "arent", "wasnt", "no",
                          "nothing", "none", "a", "an"})
# A sentence opening with one of these carries on the sentence before it.
_ANAPHORA = frozenset({"it", "this", "that", "these", "those", "they", "which", "so", "thus",
                       "henc", "therefor", "then", "both", "each", "also", "here", "there"})

_NEGATORS = frozenset({"no", "not", "never", "without", "none", "nor", "neither", "dont",
                       "doesnt", "didnt", "isnt", "arent", "wont", "cant", "wouldnt",
                       "shouldnt", "wasnt", "werent", "avoid", "skip", "unlik", "noth",
                       "nobodi"})
# negative only in the verb: "the LM head is skipped" is still denied by a "not" before it
_NEGATIVE_VERBS = frozenset({"avoid", "skip", "without", "unlik"})
_GRAMMATICAL_NEGATORS = _NEGATORS - _NEGATIVE_VERBS
# "not only", "no matter", "no-op" (a hyphen makes a word of it), "if not it raises …" (otherwise)
_NOT_NEGATING_NEXT = frozenset({"onli", "just", "matter", "longer", "doubt", "more", "less",
                                "-", "it"})
NEGATION_WINDOW = 5
_FIRST = frozenset({"first", "befor", "measur", "check", "instead"})
# ("dropping the 'unused' experts is not a lever": expert pass 91, A112)
_POST_NEGATED = frozenset({"need", "necessari", "requir", "worth", "help", "use", "matter",
                           "option", "applic", "relev", "fix", "solv", "lever", "solut",
                           "remedi", "cure", "an", "the"})
_ARTICLES = frozenset({"an", "the"})
# verbs that, denied, say a thing does no harm ("doesn't cost the users anything")
_HARMLESS = frozenset({"cost", "hurt", "harm", "affect", "slow", "penal", "block", "touch",
                       "eat"})
_ONLY_AFTER = frozenset({"unnecessari", "useless", "pointless", "irrelev", "overkil"})
# Words that end a clause for negation: a negation does not reach past them.
_CLAUSE_WORDS = frozenset({"but", "and", "so", "becaus", "which", "while", "wherea",
                           "instead", "then", "howev", "although", "though", "sinc"})

# Signs of reasoning in an item: connectives, copulas, verbs of effect, relations.
_REASONING_WORDS = frozenset({
    "becaus", "sinc", "so", "therefor", "thus", "henc", "which", "that", "mean", "if", "when",
    "whenev", "until", "unless", "while", "wherea", "otherwis", "instead", "whi", "result",
    "due", "caus", "is", "are", "was", "were", "be", "been", "becom", "stay", "remain", "halv",
    "half", "doubl", "twice", "tripl", "quarter", "cut", "reduc", "save", "free", "fit", "store",
    "hold", "pin", "read", "stream", "grow", "shrink", "drop", "fall", "rise", "increas",
    "decreas", "lower", "need", "requir", "cost", "take", "give", "leav", "let", "allow",
    "avoid", "prevent", "stop", "keep", "evict", "displac", "domin", "scale", "push", "crowd",
    "wast", "spend", "amort", "touch", "lose", "gain", "buy", "improv", "help", "hurt", "slow",
    "shorten", "lengthen", "exceed", "count", "match", "get", "make", "go", "come", "fill",
    "sit", "wait", "reach", "hit", "run", "use", "cover", "assum", "depend", "pay", "charg",
    "carri", "serv", "produc", "compar", "rebuild", "split", "spread", "ship", "transfer",
    "protect", "isol", "queue", "admit", "decid", "tell", "show", "say", "explain", "appear",
    "degrad", "fade", "forget", "attend", "see", "refus", "fail", "rais", "estim", "sum",
    # what an engineer does with a lever: "set max_model_len near the p99", "route long
    # requests to their own pool", "prefix caching shares the system prompt"
    "put", "set", "rout", "send", "move", "enabl", "turn", "share", "dedic", "reserv",
    "bill", "alert", "watch", "monitor", "measur", "check", "break",
})
# verbs that name a lever's setting only when they open the item ("the cap", "a context
# limit" are terms in a list)
_SETS_A_BOUND = frozenset({"cap", "limit"})
_COMPUTATION = frozenset({"=", "≈", "→", "×", "÷", "+"})  # an item that computes is no term
_RELATIONS = frozenset({"→", "=", "≈", "÷", "≥", "≤", "≫", "≪", ">", "<"})
_UNITS = frozenset({"gb", "gib", "kib", "mib", "kb", "mb", "tb", "tib", "byte", "b", "token",
                    "tok", "session", "sequenc", "seq", "user", "chat", "request", "ms", "s",
                    "%", "×", "k", "tflop", "flop", "block", "gpu", "card", "head", "layer"})
# units of a measured figure (not a count of layers or GPUs): "~3.4 TB/s", "0.5 s", "25 seqs"
_MEASURES = frozenset({"gb", "gib", "kib", "mib", "kb", "mb", "tb", "tib", "ms", "s", "%",
                       "tflop", "token", "tok", "sequenc", "seq", "session", "chat", "user",
                       "request", "convers"})
_ITEM_BREAKS = frozenset({",", ";", "—", "/"})
# A spaced slash is a division, not a list's break, after a figure ("136 /", "⌈2,000 /",
# "16.06e9 /"; not "4k /" or "bf16 /"), searched in the few characters before it only (a
# long run of digits and commas scanned from the line's start would cost its square) ...
_A_FIGURE = lazy(r"(?<![\w.])\d[\d.,]*(?:e\d+)?\s*$")
_FIGURE_REACH = 48
# ... or after a unit a figure divided by another ends in ("52 GB / 128 KiB")
_DIVIDED = frozenset({"gb", "gib", "mb", "mib", "kb", "kib", "tb", "b", "byte", "ms", "s"})
_ASIDES = frozenset({"(", ")", "[", "]"})  # a parenthesis is an aside, not a new item
_LONG_ITEM = 9  # tokens: an item this long is a clause, not a term
_STRONG_ITEM = 5  # tokens: a reasoning item shorter than this is a term ("weights read once")
_SHORT_ITEM_WORDS = 4  # words: an item with fewer is a term, whatever numbers it carries
_LONG_LIST = 5  # items in a sentence: with a third or fewer reasoning, it is a list
_LONG_LIST_REASONING = 3
_STATEMENT_WORDS = 5  # words of three letters or more: a list's opening clause that states
_LIST_RUN = 3  # bare items in a row: a list, even inside a sentence that reasons elsewhere
_SHORT_LINE = 6  # words: a line this short ends an item, even without a comma
_QUOTES = "\"'“”«»"
_TAIL = "\x00"  # marks a sentence's first line that is the tail of a longer one


# Stems and phrase tokens worked out in this process or kept from an earlier one
# (kept_readings): a word or rubric phrase found here is not stemmed or folded again, and
# snowballstemmer (all its languages, some 12 ms) is imported only for a word never seen.
STEMS: dict[str, str] = {}
PHRASES: dict[str, tuple[str, ...]] = {}
MAX_REMEMBERED = 60_000  # entries of either; past it the memory starts again


def _stem(word: str) -> str:
    stem = STEMS.get(word)
    if stem is None:
        if len(STEMS) >= MAX_REMEMBERED:
            STEMS.clear()
        stem = STEMS[word] = _snowball_stem(word)
    return stem


def _snowball_stem(word: str) -> str:
    if word in _NOT_THE_SAME:
        return _NOT_THE_SAME[word]
    import snowballstemmer  # type: ignore[import-untyped]  # pure Python, loaded on first use

    stem = str(snowballstemmer.stemmer("english").stemWord(_BRITISH.sub(r"iz\1", word)))
    return _SAME_WORD.get(stem, stem)


# Words the stemmer folds together that a serving answer keeps apart: an MoE's "active"
# parameters are no "activations" (memory the reserve holds), "mostly" is no "most"
_NOT_THE_SAME = {"activation": "activation", "activations": "activation",
                 # a hedge ("the gain mostly disappears") is no superlative ("gains the most")
                 "mostly": "mostly"}


# Words that say the same in every phrase a rubric or a claim lists: "read the entire model",
# "one full read of the model" say what "the whole model" does (phrases are read the same way)
_SAME_WORD = {"entir": "whole", "full": "whole"}


# The shorthand people type under a clock, spelled out before phrases are matched (phrases are
# folded the same way): "live ctx", "w/o prefix caching", "APC", "x2".
_MISSPELLED = {
    "seperate": "separate", "seperately": "separately", "seperated": "separated",
    "seperation": "separation", "bandwith": "bandwidth", "bandwidht": "bandwidth",
    "concurency": "concurrency", "concurrancy": "concurrency", "concurent": "concurrent",
    "preemtion": "preemption", "preemtions": "preemptions", "premption": "preemption",
    "premptions": "preemptions", "preemptoin": "preemption", "throughtput": "throughput",
    "thoughput": "throughput", "througput": "throughput", "memroy": "memory",
    "occured": "occurred", "paramters": "parameters", "paramaters": "parameters",
    "fragmantation": "fragmentation", "fragementation": "fragmentation",
    "latancy": "latency", "latencey": "latency", "capactiy": "capacity", "capcity": "capacity",
    "cacheing": "caching", "chache": "cache", "promt": "prompt", "promts": "prompts",
    "quantizaton": "quantization", "recomupte": "recompute", "recompte": "recompute",
}
_SHORTHAND = tuple((lazy(pattern), replacement) for pattern, replacement in (
    (r"!=|≠|=/=", " is not "), (r"\bw/o\b", "without"), (r"\bw/(?=\s|\w)", "with "),
    (r"\bctx\b", "context"),
    (r"\bseqs\b", "sequences"), (r"\bseq\b", "sequence"), (r"\breqs\b", "requests"),
    (r"\breq\b", "request"), (r"\bmem\b", "memory"), (r"\bbw\b", "bandwidth"),
    (r"\battn\b", "attention"), (r"\butil\b", "utilization"), (r"\bxfer\b", "transfer"),
    (r"\bapc\b", "automatic prefix caching"), (r"\bep\b", "expert parallelism"),
    (r"\bavg\b", "average"), (r"\blambda\b", "λ"),
    (r"\bconc\b", "concurrency"), (r"\btput\b", "throughput"), (r"\bthru\b", "through"),
    (r"\bconst\b", "constant"), (r"\bwts\b", "weights"), (r"\bb/c\b", "because"),
    # said aloud: "at batch one" (not "adds to the batch one token per sequence")
    (r"\b(batch(?: size)?(?: of)?) one\b(?!\s+(?:token|sequence|request|user|more|of|at|by))",
     r"\1 1"),
    (r"\btoks?\b", "tokens"), (r"\bbs(?=\s*[\d=≤<≲~])", "batch "), (r"∝", " proportional to "),
    # "gen + history", "b1 read", "at b64" (not a B200's name, nor PCIe's "Gen 4")
    (r"\bgen\b(?!\s*\d)", "generated"), (r"\bb(?!(?:100|200|300)\b)(\d{1,3})\b", r"batch \1"),
    (r"≲", "≤"), (r"≳", "≥"),
    # the misspellings people type most often in this field ("seperate pool", "bandwith")
    (r"\b(?:" + "|".join(sorted(_MISSPELLED, key=len, reverse=True)) + r")\b",
     lambda match: _MISSPELLED[match.group()]),
    (r"\bx(\d+(?:\.\d+)?)\b", r"\1×"),
    # a formula typed with an x between one-letter terms: "L = lambda x W" is "λ × W"
    (r"(?<![\w])([a-zλα])\s+x\s+([a-zλα])(?![\w])", r"\1 × \2"),
))


# Numbers said rather than typed (a spoken answer, transcribed): "fifty-eight", "six thousand
# eight hundred", "one point three", "forty percent". A lone "one" stays a word ("one card").
_UNIT_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
               "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
               "eighteen", "nineteen")
_TEN_WORDS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_SPOKEN_VALUE = {**{w: n + 1 for n, w in enumerate(_UNIT_WORDS)},
                 **{w: 20 + 10 * n for n, w in enumerate(_TEN_WORDS)}}
_SMALL = (r"(?:(?:" + "|".join(_TEN_WORDS) + r")(?:[- ](?:" + "|".join(_UNIT_WORDS[:9])
          + r"))?|" + "|".join(sorted(_UNIT_WORDS, key=len, reverse=True)) + r")")
_HUNDREDS = rf"(?:(?:{_SMALL}|a) hundred(?: (?:and )?{_SMALL})?)"
_DIGIT_WORD = "(?:zero|" + "|".join(_UNIT_WORDS[:9]) + ")"
# "five twelve", "three ninety-six": hundreds said as two numbers, as people say figures
_TEENS_OR_TENS = (r"(?:(?:" + "|".join(_TEN_WORDS) + r")(?:[- ](?:" + "|".join(_UNIT_WORDS[:9])
                  + r"))?|" + "|".join(_UNIT_WORDS[9:]) + ")")
_SAID_HUNDREDS = rf"(?:(?:{'|'.join(_UNIT_WORDS[:9])}) {_TEENS_OR_TENS})"
_SPOKEN = lazy(
    rf"\b(?P<whole>(?:(?:{_HUNDREDS}|{_SMALL}) thousand(?: (?:and )?(?:{_HUNDREDS}|{_SMALL}))?)"
    rf"|{_HUNDREDS}|{_SAID_HUNDREDS}|{_SMALL})?(?:(?(whole) |(?<!\w))point "
    rf"(?P<point>{_DIGIT_WORD}(?: {_DIGIT_WORD})*))?\b")
_PERCENT = lazy(r"\s*\bper ?cent\b")


def _spoken_value(words: str) -> int:
    parts = words.replace("-", " ").split()
    if len(parts) >= 2 and parts[0] in _UNIT_WORDS[:9] and parts[1] in _SPOKEN_VALUE \
            and _SPOKEN_VALUE[parts[1]] >= 10:
        # "five twelve" is 512, "three ninety-six" 396
        return _SPOKEN_VALUE[parts[0]] * 100 + _spoken_value(" ".join(parts[1:]))
    total, current = 0, 0
    for word in parts:
        if word == "hundred":
            current = (current or 1) * 100
        elif word == "thousand":
            total, current = total + current * 1000, 0
        elif word not in ("and", "a"):
            current += _SPOKEN_VALUE[word]
    return total + current


def _said_as_figure(match: re.Match[str]) -> str:
    whole, point = match.group("whole"), match.group("point")
    if not whole and not point:
        return match.group()
    if whole == "one" and not point:
        return whole
    digits = "".join("0" if w == "zero" else str(_SPOKEN_VALUE[w]) for w in (point or "").split())
    return (str(_spoken_value(whole)) if whole else "0") + (f".{digits}" if digits else "")


# A verdict's label at a line's start ("TL;DR:", "Short answer —") names no subject: the
# words after it open the sentence ("TL;DR: fp8 KV — it improves both" says it of fp8 KV).
_VERDICT_LABEL = lazy(r"(?m)^(\s*(?:[-*>]\s*)?)(?:tl\s?;?\s?dr|short answer|bottom line)"
                      r"\s*[:—–-]\s*")


# Notes mark what they reject with a cross ("❌ fragmentation: under one block a sequence") and
# what they endorse with a tick: a cross reports the idea beside it as wrong, a tick is emphasis.
_CROSS_MARK = lazy(r"[❌✗✘✖❎]\ufe0f?")
_TICK_MARK = lazy(r"[✅✓✔☑]\ufe0f?")


# An engine flag typed as its command-line option ("--max-model-len 32768") is the flag's name
_FLAG_DASHES = lazy(r"(?<![\w-])--(?=[a-z])")


# Struck through ("~~TP=16 halves the KV~~ EDIT: each head is copied"): retracted, not said
_STRUCK = lazy(r"~~[^~\n]{0,400}?~~")


# A practice dialogue pasted whole: the interviewer's lines ("Interviewer: so TP=16 halves it
# again?", "Q: …", "them: …") are not the candidate's words, and the candidate's own label
# ("Me:", "A:") is no word of the answer. The question ends at the line's end, or at the
# answer's own label just after the line's last "?": "Q: does 2,000 online mean 2,000 slots?
# A: no, …" answers on the line it asks (expert pass 89); "Option A: …" inside the question
# is the interviewer's (review of stop 75).
_INTERVIEWER_LINE = lazy(r"(?m)^[ \t]*(?:\*\*)?(?:interviewer|them|q)(?:\*\*)?[ \t]*:(?:"
                         r"[^\n]*\?(?=[ \t]+(?:\*\*)?(?:a|me|candidate)(?:\*\*)?[ \t]*:)|[^\n]*)")
_OWN_LABEL = lazy(r"(?m)^([ \t]*)(?:\*\*)?(?:me|a|candidate)(?:\*\*)?[ \t]*:(?:\*\*)?")


# A teammate's message quoted to answer it ("> @dana: TP=16 should halve the KV again"): their
# words, not the candidate's, unless the reply opens by agreeing ("+1", "Agreed:").
_QUOTED_LINE = lazy(r"^[ \t]*>[ \t]?")
_QUOTE_OPENS = lazy(r"^[ \t]*>[ \t]*(?:\*\*)?@[\w.-]{1,30}(?:\*\*)?[ \t]*:")
_AGREES = lazy(r"^[ \t]*(?:\+1|agreed?\b|yes\b|yep\b|exactly\b|correct\b|true\b)")


def _without_others_quoted(text: str) -> str:
    if ">" not in text:
        return text
    lines = text.split("\n")
    kept: list[str] = []
    at = 0
    while at < len(lines):
        if not _QUOTE_OPENS.match(lines[at]):
            kept.append(lines[at])
            at += 1
            continue
        end = at
        while end < len(lines) and _QUOTED_LINE.match(lines[end]):
            end += 1
        reply = next((line for line in lines[end:] if line.strip()), "")
        if _AGREES.match(reply):
            kept.extend(_QUOTED_LINE.sub("", line) for line in lines[at:end])
        at = end
    return "\n".join(kept)


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text[:MAX_TEXT_CHARS]).lower()
    text = _STRUCK.sub(" ", text)
    text = _OWN_LABEL.sub(r"\1", _INTERVIEWER_LINE.sub("", _without_others_quoted(text)))
    text = _TICK_MARK.sub(" ", _CROSS_MARK.sub(" wrong: ", text))
    text = without_emphasis(text)
    text = _FLAG_DASHES.sub("", text)
    text = _VERDICT_LABEL.sub(r"\1", text)
    text = _NAME_EQUALS.sub(" ", text)  # tp=8 is a name, not an equation
    text = _PRODUCT_DOT.sub("×", text).translate(_GREEK)
    text = text.replace("’", "'").replace("‘", "'")
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    for shorthand, meant in _SHORTHAND:
        text = shorthand.sub(meant, text)
    text = _PERCENT.sub("%", _SPOKEN.sub(_said_as_figure, text))
    return _THOUSANDS.sub("", text)


def _lex(text: str) -> list[str]:
    """Word stems, numbers and symbols of already folded text; hyphens, underscores, slashes
    and colons inside a word are separators ("fp8-kv", "max_model_len", "k/v", "ops:byte")."""
    out: list[str] = []
    for match in _TOKEN.finditer(text):
        kind, value = match.lastgroup, match.group()
        if kind == "num":
            out.append(value.rstrip(".,"))
        elif kind == "word":
            out.append("×" if value == "x" and out and is_number(out[-1]) else _stem(value))
        else:
            start, end = match.start(), match.end()
            before = text[start - 1] if start else " "
            after = text[end] if end < len(text) else " "
            if value in "-/:_" and before.isalnum() and after.isalnum():
                if value == "/" and before.isdigit() and after.isdigit():
                    out.append("÷")
                elif value == "-" and before.isdigit() and after.isdigit():
                    out.append("-")
                continue  # a separator inside a word
            near_before = text[:start].rstrip()[-1:]
            near_after = text[end:].lstrip()[:1]
            if value == "/" and (near_after.isdigit() or near_after == "(") and out and (
                    _A_FIGURE.search(text, max(0, start - _FIGURE_REACH), start)
                    or out[-1] == ")" or out[-1] in _DIVIDED):
                out.append("÷")  # spaced between figures: "136 GB / (2 × 3.35 TB/s)"
                continue
            if value in ("-", "–") and not (near_before.isdigit() or near_after.isdigit()):
                out.append("—")  # a dash between words is a pause, not a minus
                continue
            out.append(_SYMBOLS.get(value, value))
    return out


def is_number(token: str) -> bool:
    return token[:1].isdigit()


@record
class Reading:
    """A text as tokens (content only), each with its sentence, item and clause, plus which
    items carry reasoning and which sentences are bare lists."""

    tokens: tuple[str, ...]
    sentence: tuple[int, ...]
    item: tuple[int, ...]
    clause: tuple[int, ...]
    reasoned_items: frozenset[int]
    listed_items: frozenset[int]
    starts: Mapping[str, tuple[int, ...]]
    numbers: tuple[tuple[int, float], ...]  # (position, value) of every number token
    questions: frozenset[int] = frozenset()  # the items of sentences that end in "?"
    # each token's sentence as written, before one opening with "both", "so" ... was read as
    # carrying on the one before it
    written: tuple[int, ...] = ()
    # each token's row of a table ("| shared once | 2,000 |"), -1 outside one: a row says its
    # own thing, though the table reads as one item
    row: tuple[int, ...] = ()
    # the sentences (as written) that open with a quotation mark: '"Attention is quadratic" —
    # not in decode' quotes what it answers
    quoted: frozenset[int] = frozenset()


@lru_cache(maxsize=256)
def numbers_in(text: str) -> tuple[float, ...]:
    """The figures a text states, without reading its words (no stemming): "128k" is 128,000,
    as _quantity reads it in an answer."""
    matches = list(_TOKEN.finditer(_fold(text)))
    found = []
    for index, match in enumerate(matches):
        if match.lastgroup != "num":
            continue
        value = _as_float(match.group().rstrip(".,"))
        if value is not None:
            following = matches[index + 1].group() if index + 1 < len(matches) else ""
            found.append(value * _THOUSAND if following == "k" else value)
    return tuple(found)


_THOUSAND = 1000.0


def _in_thousands(reading: Reading, position: int) -> bool:
    """Whether a number token has a `k` after it ("128k context")."""
    return position + 1 < len(reading.tokens) and reading.tokens[position + 1] == "k"


def _quantity(reading: Reading, position: int, value: float) -> float:
    """A number token's value as a figure: with a `k` after it, thousands."""
    return value * _THOUSAND if _in_thousands(reading, position) else value


@lru_cache(maxsize=256)
def read_text(text: str) -> Reading:
    tokens: list[str] = []
    sentence: list[int] = []
    item: list[int] = []
    clause: list[int] = []
    written: list[int] = []
    row: list[int] = []  # each token's table row, or -1 outside a table
    rows = -1
    as_written = -1
    state = {"sentence": -1, "item": -1, "clause": -1}
    joined: set[int] = set()

    def new(level: str) -> None:
        for name in ("sentence", "item", "clause")[("sentence", "item", "clause").index(level):]:
            state[name] += 1

    questions: set[int] = set()
    quoted: set[int] = set()
    for block in _sentences(_fold(text)):
        for index, (lines, carries_on, asked) in enumerate(block):
            as_written += 1
            opening = lines[0].removeprefix(_TAIL).lstrip()[:1]
            if opening and opening in _QUOTES:
                quoted.add(as_written)
            if index == 0 or not carries_on:
                new("sentence")
            else:
                new("item")
                joined.add(state["sentence"])  # two sentences read as one (a bullet's)
            first_item = state["item"]
            for line_index, line in enumerate(lines):
                if line_index and not lines[line_index - 1].startswith(_TAIL) \
                        and len(lines[line_index - 1].split()) <= _SHORT_LINE:
                    new("item")
                line = line.removeprefix(_TAIL)
                table_row = line.lstrip().startswith("|")
                rows += table_row
                in_row = rows if table_row else -1
                for token in _lex(line):
                    if token in _ITEM_BREAKS or token == "—":
                        new("item")
                    elif token in _ASIDES or token == "|":  # "|": a table's next cell
                        new("clause")
                    elif token in (":", "→"):  # what follows is a new clause
                        tokens.append(token)
                        sentence.append(state["sentence"])
                        item.append(state["item"])
                        clause.append(state["clause"])
                        written.append(as_written)
                        row.append(in_row)
                        new("clause")
                    else:
                        if token in _CLAUSE_WORDS:
                            new("clause")
                        tokens.append(token)
                        sentence.append(state["sentence"])
                        item.append(state["item"])
                        clause.append(state["clause"])
                        written.append(as_written)
                        row.append(in_row)
            if asked:
                questions.update(range(first_item, state["item"] + 1))
    reasoned, listed = _reasoning(tokens, sentence, item, frozenset(joined))
    starts: dict[str, list[int]] = {}
    for position, token in enumerate(tokens):
        starts.setdefault(token, []).append(position)
    named = _in_model_names(tokens)
    numbers = tuple((position, value) for position, token in enumerate(tokens)
                    if (value := _as_float(token)) is not None and position not in named)
    return Reading(tuple(tokens), tuple(sentence), tuple(item), tuple(clause), reasoned, listed,
                   {k: tuple(v) for k, v in starts.items()}, numbers, frozenset(questions),
                   tuple(written), tuple(row), frozenset(quoted))


# The families whose names carry numbers: "Llama-3.1-8B" states no figure of 3.1 or 8
_MODEL_FAMILIES = ("llama", "qwen", "gemma", "mistral", "mixtral", "phi", "deepseek", "oss",
                   "jamba", "granit", "falcon", "nemotron")


def _in_model_names(tokens: list[str]) -> frozenset[int]:
    """The positions of the numbers that are part of a model's name (the 3.1 and 8 of
    "Llama-3.1-8B", the 30 of "Qwen3-30B-A3B", the 120 of "gpt-oss-120b"), not figures."""
    named: set[int] = set()
    for position, token in enumerate(tokens):
        if _as_float(token) is None:
            continue
        before = position - 1
        while before >= 0 and tokens[before] == "-":
            before -= 1
        if before < 0:
            continue
        family = tokens[before].rstrip("0123456789") in _MODEL_FAMILIES
        if (family or before in named) and _names_a_model(tokens, position):
            named.add(position)
    return frozenset(named)


def _names_a_model(tokens: list[str], position: int) -> bool:
    """Whether the number at `position` goes on naming a model: a size after it ("8 b",
    "8 x7b"), a version with its point ("3.1"), or another number of the name ("3 8 b");
    not "Llama, 80 layers"."""
    after = tokens[position + 1] if position + 1 < len(tokens) else ""
    if after in ("b", "m") or (after.startswith("x") and after.endswith("b")):
        return True
    if "." in tokens[position] and _as_float(after) is None and after not in _QUANTITY_WORDS:
        return True
    nxt = position + 2 if after == "-" else position + 1
    return nxt < len(tokens) and _as_float(tokens[nxt]) is not None and \
        nxt + 1 < len(tokens) and tokens[nxt + 1] in ("b", "m")


# words that make the number before them a quantity, not a version ("Llama 3.1 GB" is none)
_QUANTITY_WORDS = frozenset({"gb", "gib", "mb", "mib", "kb", "kib", "tb", "ms", "s", "layer",
                             "token", "sequenc", "session", "gpu", "card", "head"})


def _sentences(text: str) -> Iterable[list[tuple[list[str], bool, bool]]]:
    """Blocks (a bullet or a paragraph), each a list of sentences; a sentence is its lines,
    whether it carries on the sentence before (it opens with "it", "this", "so" ...) and
    whether it ends in a question mark."""
    block: list[str] = []
    bulleted = False

    def flush() -> list[tuple[list[str], bool, bool]]:
        joined = "\n".join(block)
        joined = _ABBREVIATIONS.sub(r"\1", joined)
        out: list[tuple[list[str], bool, bool]] = []
        ends = list(_SENTENCE_END.finditer(joined))
        starts = [0, *(end.end() for end in ends)]
        for index, start in enumerate(starts):
            stop = ends[index].start() if index < len(ends) else len(joined)
            asked = (index < len(ends) and "?" in ends[index].group()) or \
                _ASKED_UNMARKED.match(joined, start, stop) is not None or \
                _QUESTION_RESTATED.match(joined, start, stop) is not None
            lines = [line for line in joined[start:stop].split("\n") if line.strip()]
            if not lines:
                continue
            first = lines[0].split()
            opener = _stem(re.sub(r"[^a-z]", "", first[0])) if first else ""
            # a sentence that starts inside a line: its first line is that line's tail, and a
            # short tail is no short line ("… does this: it⏎swaps preempted sequences")
            if start and joined[start - 1:start] != "\n" and \
                    joined[start:stop].lstrip(" ")[:1] != "\n":
                lines[0] = _TAIL + lines[0]
            # ("There the pitch holds" points back; "There's nothing to check" does not:
            # expert pass 89)
            existential = opener == "there" and len(first) > 1 and \
                re.sub(r"[^a-z]", "", first[1].lower()) in _EXISTENTIAL
            out.append((lines, bool(out) and (bulleted or (opener in _ANAPHORA
                                                           and not existential)), asked))
        return out

    for raw in text.split("\n"):
        bullet = _BULLET.match(raw)
        if not raw.strip() or bullet:
            if block:
                yield flush()
            block = [raw[bullet.end():]] if bullet else []
            bulleted = bullet is not None
        else:
            block.append(raw)
    if block:
        yield flush()


def _reasoning(tokens: list[str], sentence: list[int], item: list[int],
               joined: frozenset[int] = frozenset()) -> tuple[frozenset[int], frozenset[int]]:
    """Which items reason (a connective, a verb of effect, a relation, a computation, or the
    length of a clause) and which items are listed (their sentence is a bare list)."""
    items: dict[int, list[int]] = {}
    for position, item_id in enumerate(item):
        items.setdefault(item_id, []).append(position)
    reasoned: set[int] = set()
    for item_id, positions in items.items():
        words = [tokens[p] for p in positions]
        if _item_reasons(words):
            reasoned.add(item_id)
    by_sentence: dict[int, list[int]] = {}
    for item_id, positions in items.items():
        by_sentence.setdefault(sentence[positions[0]], []).append(item_id)
    worded_items = {i for i in reasoned if _reasons_in_words([tokens[p] for p in items[i]])}
    worded_elsewhere = {sentence[items[i][0]] for i in worded_items}
    listed: set[int] = set()
    for sentence_id, item_ids in by_sentence.items():
        short = [i for i in item_ids
                 if sum(tokens[p][:1].isalpha() for p in items[i]) < _SHORT_ITEM_WORDS
                 and not any(tokens[p] in _COMPUTATION for p in items[i])
                 and not _quantified_statement([tokens[p] for p in items[i]])]
        strong = [i for i in item_ids if i in reasoned and len(items[i]) >= _STRONG_ITEM]
        if len(item_ids) >= _LIST_RUN and 4 * len(short) >= 3 * len(item_ids):
            # mostly a few words each: a list, whatever symbols it uses; a long clause that
            # reasons among them ("max_model_len ≈ p99 of live context; own pool; quota") is a
            # statement a terse answer strings terms after, not one of the terms
            listed.update(i for i in item_ids if i not in strong or len(items[i]) < _LONG_ITEM)
            continue
        terms = [i for i in item_ids if len(items[i]) > 1 or len(tokens[items[i][0]]) > 1]
        if len(item_ids) == 1 and _a_quantity([tokens[p] for p in items[item_ids[0]]]) \
                and sum(tokens[p][:1].isalpha() for p in items[item_ids[0]]) >= 2:
            continue  # a sentence that states one figure ("Unchanged at ~34.1 ms.") is no list
        if not any(i in reasoned for i in item_ids) or (len(terms) >= _LIST_RUN and not strong):
            listed.update(item_ids)  # a list of terms, perhaps with a verb among them
            continue
        # (in an answer that reasons in words nowhere else, an item that only computes,
        # "budget 496 → 1,479 GB", is a figure listed: a buzzword list with its figures)
        counted = [i for i in item_ids if i in reasoned and (
            i in worded_items or worded_elsewhere - {sentence_id})]
        if sentence_id not in joined and len(item_ids) >= _LONG_LIST and \
                _LONG_LIST_REASONING * len(counted) <= len(item_ids):
            # a long list with a verb in one of its terms; a long clause of words that reasons
            # before it ("only n_kv changes: 64 KV heads vs 8 in GQA, …, everything else
            # (layers, dtype) same") is the statement the list qualifies
            opening = item_ids[0]
            said = [tokens[p] for p in items[opening]]
            stated = opening in strong and (_a_clause(said) or (
                len(said) >= _LONG_ITEM and _shows_working(said)) or _a_would_figure(said))
            # (nor is a long clause that reasons among them a term: "each rank reads half
            # the weights and half of every KV, concurrently: 136 GB / …, ~49 tok/s, …")
            listed.update(i for i in item_ids if not (stated and i == opening)
                          and not (i in strong and _states_in_words(
                              [tokens[p] for p in items[i]])))
            continue
        run: list[int] = []
        for item_id in [*item_ids, -1]:
            if item_id != -1 and item_id not in reasoned:
                run.append(item_id)
                continue
            if len(run) >= _LIST_RUN:
                listed.update(run)  # a list inside a sentence: "levers: a, b, c and d"
            run = []
    return frozenset(reasoned), frozenset(listed)


def _a_would_figure(words: list[str]) -> bool:
    """Whether an item says what something would come to, in a figure: "max_model_len
    reservation would give 12", the statement a terse list of its judgements qualifies ("…,
    an 88% gap, too big, and …": blind corpus BQ)."""
    return any(word in _WOULD and any(is_number(later) for later in words[at + 1:at + 4])
               for at, word in enumerate(words)) and words[0] not in _WOULD


_WOULD = frozenset({"would", "will"})


def _a_clause(words: list[str]) -> bool:
    """Whether an item is a clause of words, long enough to state something ("each rank reads
    half the weights and half of every KV"), not a term or a figure worked out."""
    return len(words) >= _LONG_ITEM and sum(
        len(word) >= 3 and word[:1].isalpha() for word in words) >= _STATEMENT_WORDS


def _states_in_words(words: list[str]) -> bool:
    """A clause that says what happens in words, with a verb or connective of its own ("each
    rank reads half the weights"), not a term labelled with its figures ("DP attention: 71.9B
    attention params per GPU")."""
    return _a_clause(words) and any(word in _REASONING_WORDS for word in words)


def _shows_working(words: list[str]) -> bool:
    """Whether the words take one figure to another ("64 → 8 KV heads", "2 × 80 = 160"): a
    derivation, the statement a list that follows it qualifies."""
    return _between_figures(words, _COMPUTATION)


def _between_figures(words: list[str], operators: frozenset[str]) -> bool:
    """Whether one of `operators` stands between two figures ("2 × 32", "80 - 16")."""
    return any(words[i] in operators and is_number(words[i - 1]) and is_number(words[i + 1])
               for i in range(1, len(words) - 1))


def _quantified_statement(words: list[str]) -> bool:
    """A terse item that states a figure and what happens to it ("32 chat sessions
    displaced", "8 GiB freed"): a claim written short, not a term in a list."""
    return any(is_number(w) for w in words) and any(w in _REASONING_WORDS for w in words)


def _a_quantity(words: list[str]) -> bool:
    """Whether the words state a measured figure ("34.1 ms", "~174 seqs on 1,479 GB")."""
    return any(is_number(words[i]) and words[i + 1] in _MEASURES for i in range(len(words) - 1))


def _reasons_in_words(words: list[str]) -> bool:
    """Whether an item reasons in words or shows its working, not by an arrow alone: "budget
    496 → 1,479 GB" is a figure's change listed; "so the budget triples", "n_kv: 64 for MHA
    against 8", "L = 80" and "64 ÷ 8" say why or show how."""
    if len(words) >= _LONG_ITEM or any(word in _REASONING_WORDS for word in words):
        return True
    return _between_figures(words, _WORKING) or any(
        (word == ":" and len(words) - index > 4) or word == "=" for index, word in enumerate(words))


_WORKING = frozenset({"×", "÷", "+", "=", "-"})


def _item_reasons(words: list[str]) -> bool:
    if len(words) >= _LONG_ITEM:
        return True
    if words and words[0] in _SETS_A_BOUND and len(words) >= _STRONG_ITEM and words[1] != "of":
        return True  # a bound set, said short: "cap max_model_len near real p99 ctx"
    if _between_figures(words, _WORKING):
        return True  # working shown: 2 × 32, 80 - 16
    for index, word in enumerate(words):
        if word in _REASONING_WORDS or word in _RELATIONS:
            return True
        following = words[index + 1] if index + 1 < len(words) else ""
        if word == ":" and len(words) - index > 4:
            return True  # a term, then what it does
        if is_number(word) and following in _UNITS and len(words) >= 6:
            return True  # a quantity inside a clause-sized item
    return False


# ---------------------------------------------------------------------------------------------
# Finding a concept in a reading.

def _phrase_tokens(phrase: str) -> tuple[str, ...]:
    tokens = PHRASES.get(phrase)
    if tokens is None:
        if len(PHRASES) >= MAX_REMEMBERED:
            PHRASES.clear()
        tokens = PHRASES[phrase] = tuple(
            t for t in _lex(_fold(phrase)) if t not in _ITEM_BREAKS and t not in _ASIDES)
    return tokens


def phrase_words(phrase: str) -> tuple[str, ...]:
    """A rubric phrase as the scorer matches it: word stems and figures."""
    return _phrase_tokens(phrase)


def occurrences(reading: Reading, phrase: str,
                figure_inside: bool = False) -> Iterable[tuple[int, int]]:
    return occurrences_of(reading, _phrase_tokens(phrase), figure_inside)


def occurrences_of(reading: Reading, needle: tuple[str, ...],
                   figure_inside: bool = False) -> Iterable[tuple[int, int]]:
    """Where the tokens of a phrase (as `phrase_words` gives them) stand in the reading.
    `figure_inside`: a figure and its unit may interrupt the phrase once ("read the whole 138
    GB model"): for a concept's phrases only; a wrong claim's "like a dense" is not said by
    "like a 12.9B dense model", whose figure is the point."""
    # (most phrases asked of a text are not in it: a word that starts none ends the search
    # before a generator is made; a reading is asked some thousands of times)
    if not needle or (not is_number(needle[0]) and needle[0] not in reading.starts):
        return ()
    return _found(reading, needle, figure_inside)


def _found(reading: Reading, needle: tuple[str, ...],
           figure_inside: bool) -> Iterable[tuple[int, int]]:
    n = len(needle)
    first = _as_float(needle[0])
    starts = reading.starts.get(needle[0], ()) if first is None else [
        # A figure matches the same number written to other precision: "0.79%" in "0.794%".
        position for position, value in reading.numbers
        if abs(value - first) <= FIGURE_TOLERANCE * abs(first)
        and not _distinct_near_a_power_of_two(value, first)]
    tokens = reading.tokens
    for start in starts:
        end = start + n
        if tokens[start + 1:end] == needle[1:] and end <= len(tokens) and \
                reading.sentence[start] == reading.sentence[end - 1]:
            yield start, end
        elif n > 1 and start + 1 < len(tokens) and tokens[start + 1] == ":" \
                and tokens[start + 2:end + 1] == needle[1:] \
                and reading.sentence[start] == reading.sentence[end]:
            # a terse "saves: FLOPs", "costs: memory" says "saves flops"
            yield start, end + 1
        elif figure_inside and n > 2:
            found = _with_a_quantity(reading, start, needle)
            if found:
                yield start, found


# what may follow a figure as its unit ("138 GB", "5.3 TB/s", "8,192-token", "25%")
_FIGURE_UNITS = frozenset({"gb", "gib", "mb", "mib", "kb", "kib", "tb", "tib", "b", "byte",
                           "ms", "s", "%", "k", "token", "tok", "/", "×"})


def _with_a_quantity(reading: Reading, start: int, needle: tuple[str, ...]) -> int:
    """Where a phrase ends that a figure interrupts once inside: "read the whole 138 GB
    model" says "read the whole model", "shares the 15.01 GB weight read" "shares the weight
    read". A precise answer puts its figures where a plain one has none (issue 34: precision is not
    punished). The end, or 0."""
    tokens = reading.tokens
    position, matched, skipped = start + 1, 1, False
    while matched < len(needle):
        if position >= len(tokens):
            return 0
        if tokens[position] == needle[matched]:
            position, matched = position + 1, matched + 1
            continue
        if skipped or is_number(needle[matched]) or not is_number(tokens[position]):
            return 0
        skipped, position = True, position + 1
        # (a unit or two after the figure: "GB", "TB / s")
        for _ in range(3):
            if position < len(tokens) and tokens[position] in _FIGURE_UNITS \
                    and tokens[position] != needle[matched]:
                position += 1
    if not skipped or reading.sentence[start] != reading.sentence[position - 1]:
        return 0
    return position


FIGURE_TOLERANCE = 0.02  # the checker's naming band: 193 sessions is the 190 a rubric lists


def _distinct_near_a_power_of_two(value: float, figure: float) -> bool:
    """256 is a block size and 255 the slots its last block can waste: a power of two is an
    exact structural figure (a block, a head size, a vocabulary), never the rounding of a whole
    number beside it."""
    def power(x: float) -> bool:
        return x >= 16 and x.is_integer() and int(x) & (int(x) - 1) == 0

    return value != figure and value.is_integer() and figure.is_integer() and \
        (power(value) or power(figure))


def _as_float(token: str) -> float | None:
    if not is_number(token):
        return None
    try:
        return float(token.replace(",", ""))
    except ValueError:
        return None


def is_negator(token: str) -> bool:
    """Whether a token of a reading is a negation ("not", "no", "never", "without" …)."""
    return token in _NEGATORS


def negated(reading: Reading, start: int, end: int, phrase: str, after: bool = True) -> bool:
    """A negation in the clause just before the phrase ("no need for FP8 KV", "without prefix
    caching", "instead of raising max_model_len"), reaching across "or"/"nor" ("no FP8 KV or
    prefix caching"), or (with `after`) a dismissal just after it ("prefix caching is not
    needed"). A phrase that is itself negative ("does not fit") is read as is."""
    tokens, clause = reading.tokens, reading.clause
    opening = start
    while opening > 0 and clause[opening - 1] == clause[start]:
        opening -= 1
    if tokens[opening] == "becaus" and opening > 0 and tokens[opening - 1] in _NEGATORS:
        return True  # "not because recompute is cheaper": the reason is denied
    # (a phrase negative in its grammar, "does not fit", is read as is; one negative only in
    # its verb, "the LM head is skipped", is still denied before it: "it's not that the LM
    # head is skipped", expert pass 76)
    if any(t in _GRAMMATICAL_NEGATORS for t in _phrase_tokens(phrase)):
        return False
    if "ani" in tokens[max(0, start - 2):start] and any(
            tokens[p] in _NEGATORS for p in range(max(0, start - 3 * NEGATION_WINDOW), start)
            if clause[p] == clause[start]):
        return True  # "can't fit the model with any room for KV": "any" under a negation
    if _removed(reading, start, end) or _set_up_as_tempting(reading, start, end) \
            or _not_that(tokens, opening, start):
        return True
    window = NEGATION_WINDOW
    position = start - 1
    while position >= 0 and start - position <= window and clause[position] == clause[start]:
        token = tokens[position]
        following = tokens[position + 1]
        if token in ("or", "nor"):
            window = min(window + NEGATION_WINDOW, 3 * NEGATION_WINDOW)
        if token in _NEGATORS and (following not in _NOT_NEGATING_NEXT or (
                # "I wouldn't just raise it"; "Not 'just buy 1.67× the GPUs' — first find …"
                # puts another step first; "not just buy them, I'd turn on FP8 KV as well" adds
                (position + 1 == start and "but" not in tokens[start:start + 12])
                or (following == "just" and _FIRST.intersection(tokens[start:start + 12])))):
            return True
        if (token, following) in (("instead", "of"), ("rather", "than"), ("refus", "to"),
                                  ("declin", "to")):
            return True  # "instead of raising", "refuse to raise the cap for everyone"
        if token == "too" and position + 3 <= start and tokens[position + 2] == "to":
            return True  # "too small to explain 40%", "too dear to recompute"
        if token in ("zero", "0") and start - position <= 2:
            return True  # "zero users fit", "0 sequences fit": none does
        position -= 1
    if not after:
        return False
    last = len(tokens) - 1
    for position in range(end, min(last + 1, end + 4)):
        if clause[position] != clause[end - 1] and tokens[position] not in _CLAUSE_WORDS:
            break
        token = tokens[position]
        if token in _ONLY_AFTER:
            return True
        if token in _NEGATIVE_VERBS and tokens[position - 1] == "by":
            break  # "cut TTFT by skipping the prefill": the means, it denies what it skips
        if token in _NEGATORS and not _no_matter_how(tokens, position):
            # "is not needed", "is not the fix": the dismissal's own clause, not the next
            # item's first words ("capacity doesn't change; the long users …").
            words_after = [tokens[p] for p in range(position + 1, min(last + 1, position + 3))
                           if clause[p] == clause[position]]
            # "is not the fix" dismisses; "doesn't cost the chat users anything" calls it
            # harmless, it does not dismiss it
            article = set() if words_after[:1] and words_after[0] in _HARMLESS else _ARTICLES
            return any(t in _POST_NEGATED - _ARTICLES or t in article for t in words_after)
    return False


def _set_up_as_tempting(reading: Reading, start: int, end: int) -> bool:
    """Whether the phrase sits in what a sentence calls tempting and then turns against: "It's
    tempting to blame the engine (fragmentation, or max_model_len reserved per request), but
    neither holds" proposes no cap (expert pass 85, A092); not the answer's own "I'd be tempted
    to cap it per tier, but I'd check the tail first" (review of stop 74)."""
    if "tempt" not in reading.starts:
        return False
    tokens, sentence = reading.tokens, reading.sentence
    tempting = [p for p in reading.starts["tempt"]
                if p < start - 1 and sentence[p] == sentence[start] and tokens[p + 1] == "to"
                and (p == 0 or sentence[p - 1] != sentence[p] or tokens[p - 1] in _CALLED)]
    if not tempting or _TURNED_AGAINST.intersection(tokens[tempting[-1]:start]):
        return False
    for position in range(end, len(tokens)):
        if sentence[position] != sentence[start]:
            return False
        if tokens[position] in _TURNED_AGAINST:
            return True
    return False


def _not_that(tokens: Sequence[str], opening: int, start: int) -> bool:
    """Whether the phrase's clause opens "It's not that …" or "Not that …": what follows is
    denied however far ("It's not that long-context decode turns compute-bound": expert pass
    91, A016); not "it's not that simple: …", a degree."""
    head = list(tokens[opening:start])
    for lead in (["it", "not", "that"], ["it", "is", "not", "that"], ["it", "isnt", "that"],
                 ["not", "that"]):
        if head[:len(lead)] == lead:
            after = head[len(lead):len(lead) + 2]
            # ("it's not that surprising that …", "not that hard to …": a degree)
            return bool(after) and after[0] not in _DEGREES and after[1:] not in (["that"],
                                                                                  ["to"])
    return False


# "not that simple", "not that much": a degree, no denial
_DEGREES = frozenset({"simpl", "easi", "hard", "bad", "big", "much", "mani", "differ",
                      "straightforward", "clear", "far", "high", "low", "expens", "cheap",
                      "larg", "small", "great", "import", "sever", "obvious",
                      "fast", "slow", "common", "rare", "cost", "tight", "lucki", "surpriz",
                      "weird", "complic", "tricki", "complex", "strang", "unusu", "odd",
                      "interest"})
_TURNED_AGAINST = frozenset({"but", "howev"})  # (not "yet": "not yet" turns nothing)
_CALLED = frozenset({"s", "is", "was", "it", "seem", "sound", "look", "veri", "so", "quit"})


def _removed(reading: Reading, start: int, end: int) -> bool:
    """Whether the phrase names a bound and is the object of a verb that takes it away: "Drop
    the history cap", "remove the quota" (expert pass 82, C: credited as the cap it drops).
    "Drop the cap to 8k" lowers it: a "by" or "to" after it makes "drop" a verb of amount;
    "lift the hit rate", "remove fragmentation" name no bound, and are left as said."""
    if not _BOUNDS.intersection(reading.tokens[start:end]):
        return False
    before = start - 1
    if before > 0 and reading.tokens[before] in _DETERMINERS:
        before -= 1
    if before < 0 or reading.clause[before] != reading.clause[start] or \
            reading.tokens[before] not in _REMOVALS:
        return False
    # advice, not a report: the verb opens its clause or follows a modal or "we"/"I"
    # ("later Mistral releases dropped SWA" says what happened, and is the idea)
    advised = before == 0 or reading.clause[before - 1] != reading.clause[before] or \
        reading.tokens[before - 1] in _ADVISING
    return advised and (reading.tokens[before] != "drop"
                        or reading.tokens[end:end + 1] not in (("by",), ("to",)))


_REMOVALS = frozenset({"drop", "remov", "lift", "ditch", "scrap", "abandon"})
_DETERMINERS = frozenset({"a", "an", "the", "ani", "our", "their", "that", "this"})
# ("we'd", "you'll" are read as "we", "you"; "let us drop the cap")
_ADVISING = frozenset({"to", "would", "should", "can", "could", "must", "we", "i", "you",
                       "us", "just", "simpli", "let"})
_BOUNDS = frozenset({"cap", "limit", "quota", "ceil", "max_model_len", "len"})


def _said_of_another(reading: Reading, start: int, end: int, others: tuple[str, ...]) -> bool:
    """Whether the phrase at start..end is said of one of `others`: one just after it ("fp8
    weights"), or one a few words before its "in" or "at", in its clause ("weights in fp8",
    "the weights are 70.6 GB in fp8")."""
    tokens, clause = reading.tokens, reading.clause
    for other in others:
        words = _phrase_tokens(other)
        after = tokens[end:end + len(words)]
        if after == words and clause[end + len(words) - 1] == clause[start]:
            return True
        if start and tokens[start - 1] in ("in", "at") and any(
                tokens[p:p + len(words)] == words and clause[p] == clause[start]
                for p in range(max(0, start - 1 - _SAID_OF_REACH), start - len(words))):
            return True  # "weights in fp8", "the weights are ~70.6 GB in fp8"
    return False


_SAID_OF_REACH = 8


_DETERMINERS = frozenset({"the", "a", "an", "our", "their", "it", "that", "this", "those",
                          "these", "my", "your"})
_GIVING_UP = {"swap": "for", "trade": "for", "exchang": "for", "replac": "with"}


def given_up(reading: Reading, start: int, end: int) -> bool:
    """What is swapped for something else ("swap the datasheet 4.8 TB/s for the 4,138 GB/s
    copy bandwidth", "replace the bf16 cache with fp8"): given up, not claimed (expert pass
    71, F1); not read for a concept, whose idea may be the swap ("replace old turns with a
    summary"). The phrase within three words after the verb (its object, or a determiner,
    right after it), its "for" or "with" within a unit's few words after it, in one clause:
    "swap the KV out to host for later" swaps nothing for anything."""
    tokens, clause = reading.tokens, reading.clause
    verb = next((p for p in range(start - 1, max(-1, start - 4), -1)
                 if tokens[p] in _GIVING_UP or clause[p] != clause[start]), None)
    if verb is None or clause[verb] != clause[start]:
        return False
    joint = _GIVING_UP[tokens[verb]]
    # (its object right after it, or after a determiner: "swap only pays for MHA" names the
    # swap, it swaps nothing)
    if joint in tokens[verb + 1:start] or (
            verb + 1 < start and tokens[verb + 1] not in _DETERMINERS):
        return False
    return any(tokens[p] == joint and clause[p] == clause[start]
               and not any(tokens[q] in ("out", "to", "in", "into", "back")
                           for q in range(verb + 1, p))
               for p in range(end, min(len(tokens), end + 4)))


def _no_matter_how(tokens: tuple[str, ...], position: int) -> bool:
    """"full speed no matter how many users": a concession, no dismissal of what precedes
    it (as "speed does not matter" is)."""
    return tokens[position] == "no" and tokens[position + 1: position + 2] == ("matter",) \
        and tokens[position + 2: position + 3] in (("how",), ("what",), ("which",),
                                                  ("whether",), ("when",), ("where",))


# What a generic "room for", "margin for", "buffer for" is kept for when it is the cache and
# its users, not the runtime: "more room for KV" is the budget, not a reserve beside it.
_THE_CACHE = "kv cache sessions session tokens sequences users batch"
_FILLERS = "for the a more extra bigger larger"


@lru_cache(maxsize=32)
def _lexed(words: str) -> frozenset[str]:
    return frozenset(_lex(words))


def _for_the_cache(reading: Reading, start: int, end: int) -> bool:
    """A generic term that names the cache's own memory: "memory for the KV cache", or "KV
    cache memory:" as a log line prints it."""
    if start > 0 and reading.tokens[start - 1] in _lexed("cache"):
        return True
    position = end
    # ("room for 10 sequences" is the cache's room too: expert pass 53, W10)
    while position < len(reading.tokens) and (reading.tokens[position] in _lexed(_FILLERS)
                                              or is_number(reading.tokens[position])):
        position += 1
    return position < len(reading.tokens) and reading.tokens[position] in _lexed(_THE_CACHE)


def _in_sentence(reading: Reading, phrase: str, sentence: int,
                 span: tuple[int, int], item: int | None = None) -> bool:
    bare = is_number(phrase) and phrase.replace(",", "").replace(".", "").isdigit()
    for start, end in occurrences(reading, phrase):
        if reading.sentence[start] != sentence or (start < span[1] and end > span[0]):
            continue
        if bare and end < len(reading.tokens) and reading.tokens[end] == "%":
            continue  # "12%" is no "12" of a count (12 sessions)
        if item is None or reading.item[start] == item:
            return True
    return False


def _term_in_a_list(reading: Reading, start: int, end: int) -> bool:
    """In a sentence of several items, an item whose only reasoning is the phrase itself
    ("ValueError refuses to start", "W >> B x kv") is a term in a list."""
    sentence, item = reading.sentence[start], reading.item[start]
    positions = [p for p in range(len(reading.tokens)) if reading.sentence[p] == sentence]
    items = {reading.item[p] for p in positions}
    if len(items) < _LIST_RUN or len(positions) > 4 * _LONG_ITEM * len(items):
        return False
    rest = [reading.tokens[p] for p in positions
            if reading.item[p] == item and not start <= p < end]
    reasoned_elsewhere = sum(1 for i in items if i != item and i in reading.reasoned_items)
    return not _item_reasons(rest) and not reasoned_elsewhere


@record
class Mention:
    phrase: str
    credit: Fraction
    note: str


@lru_cache(maxsize=4096)
def _concept_heads(concept: Concept) -> frozenset[str] | None:
    """The words a mention of the concept can start with: each phrase's first word, and its
    last (the noun said first, "flops saved" for "saves flops"); None when a phrase starts
    with a figure, which matches by value, not by word."""
    words: set[str] = set()
    for phrase in (*concept.phrases, *concept.generic):
        tokens = _phrase_tokens(phrase)
        if not tokens:
            continue
        if is_number(tokens[0]):
            return None
        words.update((tokens[0], tokens[-1]))
    return frozenset(words)


# The question said back before it is answered ("So the question is whether 2,000 users
# online means 2,000 slots.", "What's being asked is …", "So what happens to the step time
# with fp8 …"): its words are the question's, no claim of the answer's (corpus CA)
_QUESTION_RESTATED = lazy(
    r"\s*(?:(?:so|ok|okay|well|alright|right)\b[\s,]*)?"
    r"(?:(?:the|my|your|our|this)\s+(?:real\s+|main\s+|actual\s+|first\s+)?)?"
    r"(?:question\s+(?:here\s+)?(?:is|asks)\s+(?:whether|what|how|why|which|if)\b"
    # (read folded: "what's" is "what", "we're" is "we")
    r"|what(?:'s|\s+is)?\s+being\s+asked\s+is\b"
    r"|what\s+(?:they|you|we)(?:'re|\s+are)?\s+asking\s+is\b"
    r"|(?:we|i)(?:'re|'m|\s+are|\s+am)?\s+(?:being\s+)?asked\s+(?:whether|what|how|why|which|if)\b"
    r"|what\s+happens\s+to\b(?![^\n]*?\b(?:is|are|was)\b))"
    # (a sentence that goes on to answer is no question: "What happens to the step time is
    # that it doubles", "… whether X: it doesn't", "The real question is how to add
    # sessions, and TP=16 doubles the capacity"; review of stop 77)
    r"(?![^\n]*?(?:[:;—]|\s-\s|\bbecause\b"
    r"|,\s*(?:and|but|so)\b(?!\s+(?:whether|what|how|why|which|if)\b)"
    r"|,\s*which\s+is\s+what\b))",
    re.IGNORECASE)


def mentions(concept: Concept, text: str, drill_figures: tuple[float, ...] = (),
             retargeted: bool = False) -> list[Mention]:
    """Every mention of the concept in the text, each with the credit it earns and why.
    `drill_figures`: the drill's own figures (its keys, the numbers of its model answers); one
    of them in the mention's item quantifies it as a listed figure does, so a senior's
    exact figure counts where the rubric lists a rounder one. `retargeted`: the drill was
    marked against another model or card, whose figures are `drill_figures`: a rubric's
    figure written for the drill's own (the H100's "6" sessions) quantifies nothing there."""
    reading = read_text(text)
    found: list[Mention] = []
    listed_figures = tuple(f for f in concept.figures if _holds_on_target(f, drill_figures)) \
        if retargeted else concept.figures
    heads = _concept_heads(concept)
    if heads is not None and reading.starts.keys().isdisjoint(heads):
        return found  # no phrase of the concept can start anywhere in the text
    for phrase, generic in [*((p, False) for p in concept.phrases),
                            *((p, True) for p in concept.generic)]:
        if generic and len(_phrase_tokens(phrase)) < 2:
            continue  # one generic word ("own", "same") never carries a concept
        owns = phrase.split()[0].lower() == "owns"
        for start, end in _occurrences_either_way(reading, phrase):
            if owns and start and reading.tokens[start - 1] in _POSSESSIVES:
                continue  # "its own max_model_len" is no one owning it
            if owns and (start == 0 or reading.item[start - 1] != reading.item[start]) and \
                    (_typed(text, tuple(reading.tokens[start:end])) or "").lower()[:4] == "own ":
                continue  # "own pool, own max_model_len": a note's adjective, no owner named
            if concept.not_of and _said_of_another(reading, start, end, concept.not_of):
                continue  # "70.6 GB of FP8 weights" states no cache dtype (expert pass 71)
            sentence = reading.sentence[start]
            # the feedback quotes what was typed, not the rubric's words: said the other way
            # round ("FLOPs saved" for "saves flops") or in another form of its words
            # ("breaks the hash" for "hashing": expert pass 54, N1)
            typed = _typed(text, tuple(reading.tokens[start:end]))
            said = phrase if typed is None or typed.lower() == phrase.lower() else typed
            if generic and (not any(_in_sentence(reading, term, sentence, (start, end))
                                    for term in concept.about)
                            or _for_the_cache(reading, start, end)):
                continue
            # (a cause the drill rules out is said when denied, "nor is it a max_model_len
            # reservation, which would leave 12 sessions", or set up to be denied, "someone
            # will say fragmentation. It isn't": expert pass 54, M2)
            if negated(reading, start, end, phrase) and not concept.ruled_out:
                found.append(Mention(phrase, Fraction(0), f"'{said}' negated, no credit"))
                continue
            if (_believed_by_others(reading, start) or _blamed_then_answered(reading, start)) \
                    and not concept.ruled_out:
                continue  # "people often assume vLLM reserves max_model_len, but …": theirs
            item = reading.item[start]
            listed = item in reading.listed_items or _term_in_a_list(reading, start, end)
            figure = next((f for f in listed_figures if _in_sentence(
                reading, f, sentence, (start, end), item if listed else None)), None)
            if figure is None and phrase in concept.quantified_only:
                continue  # "an FP8 latent" names the latent, not what MLA caches (pass 71)
            if figure is not None:
                figure = _as_typed(reading, figure, sentence)
            if figure is None and concept.figures and drill_figures \
                    and len(_phrase_tokens(phrase)) > 1:
                # (a lone word, "latent", beside a figure of the drill's, "16 -> 88
                # sessions", quantifies nothing of the idea: expert pass 53, W8)
                figure = _drill_figure(reading, item, drill_figures)
            if listed:
                # A figure beside a listed term ("chunked prefill 512-2048") quantifies
                # nothing: a list earns half of an unquantified mention at most.
                credit = Fraction(1, 4) if concept.figures else Fraction(1, 2)
                found.append(Mention(phrase, credit, f"'{said}', listed, not explained"))
                continue
            credit = Fraction(1) if not concept.figures or figure else Fraction(1, 2)
            # a figure of its own in the sentence is no figure of the drill's: said as such,
            # not as "not quantified" ("~3.4 TB/s" where the drill measured 3.5)
            # (of the kind the concept's figures are: "48 sessions" is no threshold of 85%)
            kinds = _figure_measures(concept.figures)
            written = reading.written or reading.sentence
            own = concept.figures and not figure and any(
                written[p] == written[start] and is_number(reading.tokens[p])
                # (in the mention's own item or the one after it, "bandwidth, e.g. ~3.4
                # TB/s": "if usage sits at 100%" two items on is no figure given to "the
                # preemption counter": expert pass 54)
                and 0 <= reading.item[p] - reading.item[start] <= 1
                and reading.tokens[p + 1] in (kinds or _MEASURES)
                # (a small count of the drill's own, "8 sequences", is the drill's: said
                # "not quantified", never "the rubric does not list")
                and not _a_drill_count(reading, p, drill_figures)
                for p in range(len(reading.tokens) - 1))
            other = _other_factor(reading, start, sentence, concept.factor)
            if other is not None:
                # "FP8 KV gives around 1.5x more sessions": the idea said with another factor
                # is another idea (expert passes 69 and 70)
                found.append(Mention(phrase, Fraction(0),
                                     f"'{said}' with '{other}', not the idea's "
                                     f"{concept.factor:g}×, no credit"))
                continue
            note = f"'{said}'" + (f" with '{figure}'" if figure else
                                    " with figures the rubric does not list" if own else
                                    " but not quantified" if concept.figures else "")
            if credit < 1 and (elsewhere := _figure_elsewhere(reading, listed_figures) or (
                    _drill_figure_beside(reading, sentence, item, start, drill_figures)
                    if concept.figures else None)):
                # Quantified in another sentence of the same answer ("8.72 MB of state …
                # the Mamba state is fixed"), or by a figure of the drill set beside it
                # ("stay resident, 61 GB" of a re-targeted MoE, whose figures the rubric
                # cannot list): the figure is there, not in the mention's own clause.
                credit = QUANTIFIED_ELSEWHERE
                note = f"'{said}', quantified elsewhere ('{elsewhere}')" if any(
                    ch.isdigit() for ch in elsewhere) else \
                    f"'{said}', with '{elsewhere}' in another clause"
            found.append(Mention(phrase, credit, note))
    return found


def _other_factor(reading: Reading, start: int, sentence: int,
                  factor: float | None) -> str | None:
    """The factor said just after a mention (its item or the next, a few words on), where
    every factor said there is another than the idea's ("1.5×", "quadrupl", "a quarter"), as
    shown; None where none is said, or one is the idea's (within a fifth: "~1.9×" of 2). A
    factor further on is another lever's ("…, and KV-second pricing at 32× a chat session")."""
    if factor is None:
        return None
    tokens = reading.tokens
    said: list[tuple[float, str]] = []
    for p in range(start, min(len(tokens), start + FACTOR_REACH)):
        if reading.sentence[p] != sentence or reading.item[p] - reading.item[start] > 1:
            break
        token = tokens[p]
        if token in _FACTOR_WORDS:
            said.append((_FACTOR_WORDS[token], token))
        elif is_number(token) and p + 1 < len(tokens) and tokens[p + 1] in _TIMES \
                and (p == 0 or tokens[p - 1] != "×") \
                and not (p + 2 < len(tokens) and is_number(tokens[p + 2])):
            try:
                value = float(token.replace(",", ""))
            except ValueError:
                continue
            if value > 0:  # ("a 4 × 2 product" multiplies: skipped above)
                times = "×" if tokens[p + 1] == "×" else f" {tokens[p + 1]}"
                said.append((max(value, 1 / value), f"{token}{times}"))
    # (a factor far from the idea's is of something else: "FP8 pool = 16×" prices the pool
    # against a chat session, "GQA's 8×" is another saving)
    said = [(value, shown) for value, shown in said if factor / FACTOR_NEAR <= value
            <= factor * FACTOR_NEAR]
    if not said or any(abs(value / factor - 1) <= FACTOR_AGREES for value, _ in said):
        return None
    return said[0][1]


FACTOR_AGREES = 0.2
FACTOR_NEAR = 3  # a factor this near the idea's says the idea another way
FACTOR_REACH = 16  # words after the mention's first
_TIMES = frozenset({"×", "time", "fold"})
# (stems, as read_text gives them)
_FACTOR_WORDS = {"doubl": 2.0, "twice": 2.0, "halv": 2.0, "half": 2.0, "tripl": 3.0,
                 "third": 3.0, "quadrupl": 4.0, "quarter": 4.0}



def _believed_by_others(reading: Reading, position: int) -> bool:
    """Whether the token sits in a sentence that opens by giving what follows to others
    ("People often assume …", "Someone might say …", "Many think …"), before the "but" or
    "however" that answers it: the idea is reported, not the candidate's."""
    sentence = reading.sentence[position]
    first = position
    while first > 0 and reading.sentence[first - 1] == sentence:
        first -= 1
    if not opens_with_belief(reading.tokens[first:first + 5]) or any(
            reading.tokens[p] in _lexed("but however") for p in range(first, position)):
        return False
    # The belief runs on through the items its own words carry on ("…, and that it doubles
    # capacity", "…, so they buy GPUs"); an item that opens otherwise is the candidate's
    # answer to it: "People assume the transfer is the killer; at 400 Gb/s it's 10.7 ms"
    # (expert pass 57, W12)
    return all(reading.item[p] == reading.item[p - 1] or reading.tokens[p] in _lexed(_CARRY_ON)
               for p in range(first + 1, position + 1))


_CARRY_ON = "and that so which because or nor as since then thus hence therefore"


def _blamed_then_answered(reading: Reading, position: int) -> bool:
    """Whether the token names what "gets blamed" (or "is suspected") in a clause that a "but"
    or "however" then answers: "Fragmentation and max_model_len reservation get blamed, but
    paged vLLM reserves nothing" proposes neither (expert pass 71, C20)."""
    sentence = reading.sentence[position]
    tokens = reading.tokens
    blamed = False
    for p in range(position + 1, len(tokens)):
        if reading.sentence[p] != sentence:
            return False
        if tokens[p] in _lexed("but however"):
            return blamed
        if tokens[p] in _lexed(_BLAMED) and tokens[p - 1] in _lexed(_BLAMED_AFTER):
            blamed = True
    return False


_BLAMED = "blamed suspected accused"
_BLAMED_AFTER = "get gets got is are was were often usually commonly first always typically"


def opens_with_belief(head: Sequence[str]) -> bool:
    """Whether tokens open by giving what follows to others: a subject of others, a hedge or
    two, then a verb of belief ("people often assume", "you might think", "someone says")."""
    if not head or head[0] not in _lexed(_OTHERS):
        return False
    rest = list(head[1:])
    while rest and rest[0] in _lexed(_HEDGES_OF_BELIEF):
        rest = rest[1:]
    return bool(rest) and rest[0] in _lexed(_BELIEVING)


_OTHERS = ("people many most some someone somebody folks everyone others colleagues team "
           "vendors naive one you")
_HEDGES_OF_BELIEF = "often usually might may would could tend tends to will"
_BELIEVING = ("assume assumes think thinks believe believes say says claim claims expect expects "
              "blame blames suspect suspects")


# Words before "own" that make it the adjective ("its own caps"), not the verb "owns" (stems)
_POSSESSIVES = frozenset({"it", "their", "his", "her", "our", "your", "my", "own", "whose"})


# Verbs that say a noun has a quality: "the state is fixed" is the "fixed state" a rubric lists
_COPULAS = frozenset({"is", "are", "stay", "remain", "becom"})
# Verbs of effect whose object may come first in the passive: "saves flops" said as "flops
# saved", "halves the KV" as "KV halved" (stems, as _phrase_tokens makes them)
_EFFECT_VERBS = frozenset({"save", "cut", "halv", "doubl", "reduc", "shrink", "lower", "raiz",
                           "boost", "trim", "free", "freed"})


@lru_cache(maxsize=1024)
def _figure_measures(figures: tuple[str, ...]) -> frozenset[str]:
    """The measures a concept's figures are stated in ("85%": %, "16 gb": gb)."""
    found = set()
    for figure in figures:
        tokens = _phrase_tokens(figure)
        found |= {tokens[i + 1] for i in range(len(tokens) - 1)
                  if is_number(tokens[i]) and tokens[i + 1] in _MEASURES}
    return frozenset(found)


def _occurrences_either_way(reading: Reading, phrase: str) -> Iterable[tuple[int, int]]:
    """A phrase's occurrences, and for a quality and its noun ("fixed state", "constant
    state") the noun said to have it ("the state is fixed", "state stays constant"); for a
    verb of effect and its object ("saves flops") the object said to undergo it ("flops
    saved", "FLOPs are saved")."""
    needle, *others = _either_way(phrase)
    yield from occurrences_of(reading, needle, figure_inside=True)
    starts = reading.starts
    for other in others:
        if other[0] in starts:
            yield from _found(reading, other, False)


@lru_cache(maxsize=65536)
def _either_way(phrase: str) -> tuple[tuple[str, ...], ...]:
    """The phrase's tokens, then each other order _occurrences_either_way reads it in (none
    starts with a figure), worked out once a phrase: a reading is asked them thousands of
    times."""
    needle = _phrase_tokens(phrase)
    if needle and needle[0] in _EFFECT_VERBS and len(needle) in (2, 3) \
            and not any(is_number(token) for token in needle):
        verb, noun = needle[0], needle[-1]  # "halves the kv": the article goes
        return (needle, (noun, verb), *((noun, copula, verb) for copula in _COPULAS))
    if len(needle) != 2 or any(is_number(token) for token in needle):
        return (needle,)
    quality, noun = needle
    return (needle, *((noun, copula, quality) for copula in _COPULAS))


def _drill_figure(reading: Reading, item: int,
                  drill_figures: tuple[float, ...]) -> str | None:
    """A figure of the drill in the mention's own item (a long sentence's other clauses hold
    figures of other things)."""
    for position, value in reading.numbers:
        if reading.item[position] == item and (
                _of_the_drill(_quantity(reading, position, value), drill_figures)
                or _counted(reading, position, drill_figures)):
            return _shown(reading, position)
    return None


_COUNTED = frozenset({"sequenc", "seq", "session", "user", "request"})


def _counted(reading: Reading, position: int, drill_figures: tuple[float, ...]) -> bool:
    """A small count of the drill's own said with what it counts ("8 sequences"): it
    quantifies, where a bare 8 (heads, a factor) does not."""
    return position + 1 < len(reading.tokens) and reading.tokens[position + 1] in _COUNTED \
        and _a_drill_count(reading, position, drill_figures)


def _of_the_drill(value: float, drill_figures: tuple[float, ...]) -> bool:
    """A figure that quantifies (not a small count) and is one of the drill's, within 2%."""
    # "128k" stated beside a key of 131,072 tokens: a thousand typed as k may be 1,024
    binary = value * 1.024 if value >= _THOUSAND and value % _THOUSAND == 0 else value
    return meaningful(value) and any(
        min(abs(value - figure), abs(binary - figure)) <= FIGURE_TOLERANCE * figure
        for figure in drill_figures if meaningful(figure))


def _holds_on_target(figure: str, drill_figures: tuple[float, ...]) -> bool:
    """Whether a rubric's figure still quantifies on a re-targeted drill: one in words, a
    ratio or a share ("half", "2×", "50%", "1 byte"), or a number of the target's own."""
    values = numbers_in(figure)
    return not values or bool(_RELATIVE_FIGURE.search(figure)) or all(
        any(abs(value - own) <= FIGURE_TOLERANCE * own for own in drill_figures)
        for value in values)


_RELATIVE_FIGURE = lazy(r"[×x%]$|\btimes\b|\bbytes?\b")


def _a_drill_count(reading: Reading, position: int, drill_figures: tuple[float, ...]) -> bool:
    value = _as_float(reading.tokens[position])
    return value is not None and any(value == figure for figure in drill_figures)


QUANTIFIED_ELSEWHERE = Fraction(3, 4)


def _drill_figure_beside(reading: Reading, sentence: int, item: int, at: int,
                         drill_figures: tuple[float, ...]) -> str | None:
    """A figure of the drill set beside the mention, in the item before or after it in the
    same sentence, where that item holds nothing but figures and their units ("stay
    resident, 61 GB") or works a figure out ("X = 1.08 — room for one full-length
    request"): the nearest such figure to the mention (at). A figure in a clause that says
    something else ("not 128k", "doubles sessions to ~190") quantifies that clause."""
    written = reading.written or reading.sentence
    beside = [(abs(position - at), position) for position, value in reading.numbers
              if abs(reading.item[position] - item) == 1
              and reading.sentence[position] == sentence
              # (a sentence "So …" carries on is still another sentence: "… pins 16 GiB, 32
              # chat sessions. So a separate pool with FP8 KV" sets no 32 beside FP8 KV)
              and written[position] == written[at]
              and _states_a_figure(reading, reading.item[position])
              and _of_the_drill(_quantity(reading, position, value), drill_figures)]
    return _shown(reading, min(beside)[1]) if beside else None


def _states_a_figure(reading: Reading, item: int) -> bool:
    """An item of figures and units alone, or one that computes (=, ≈, →, ≥) with a name or
    two ("X = 1.08"), not a clause of its own that computes ("First lever: DP attention 16 →
    88 sessions" quantifies DP attention, not the FP8 KV beside it; expert pass 50, F11)."""
    tokens = [token for token, where in zip(reading.tokens, reading.item, strict=True)
              if where == item]
    words = [token for token in tokens if token[:1].isalpha() and token not in _UNITS]
    return (any(token in _RELATIONS for token in tokens) and len(words) <= _NAMES_IN_A_WORKING) \
        or all(is_number(token) or token in _UNITS or token in ("~", "≈") for token in tokens)


_NAMES_IN_A_WORKING = 2


_WORD = lazy(r"[^\W_][\w'-]*")


def _typed(text: str, needle: tuple[str, ...]) -> str | None:
    """The words of the text whose tokens are `needle`, as typed."""
    words = _typed_words(text)
    for first in range(len(words) - len(needle) + 1):
        run = words[first:first + len(needle)]
        if tuple(token for token, _, _ in run) == needle:
            start = run[0][1]
            # a phrase that starts inside what was typed as one ("30/s x" for "/s x") is
            # quoted from its start, not as "s x"
            while start and not text[start - 1].isspace():
                start -= 1
            start += len(text[start:run[0][1]]) - len(text[start:run[0][1]].lstrip("([{\"'“‘"))
            return text[start:run[-1][2]]
    return None


@lru_cache(maxsize=64)
def _typed_words(text: str) -> tuple[tuple[str, int, int], ...]:
    """(token, start, end) of each word of the text: every mention quotes from them."""
    return tuple((token, word.start(), word.end()) for word in _WORD.finditer(text)
                 for token in _phrase_tokens(word.group()))


def _shown(reading: Reading, position: int) -> str:
    """A number token as it was typed, with its `k`."""
    return reading.tokens[position] + ("k" if _in_thousands(reading, position) else "")


def _figure_elsewhere(reading: Reading, figures: tuple[str, ...]) -> str | None:
    """A listed figure of the concept anywhere in the answer, in an item that reasons."""
    for figure in figures:
        for start, end in occurrences(reading, figure):
            item = reading.item[start]
            if _counting_verb(reading, start, end):
                continue
            if item in reading.reasoned_items and item not in reading.listed_items:
                return _as_typed(reading, figure, reading.sentence[start])
    return None


# "double-counts", "double-checks", "double-charges": a verb of counting, not a factor of two
_COUNTING_VERBS = frozenset({"count", "check", "charg", "book", "bill"})


def _counting_verb(reading: Reading, start: int, end: int) -> bool:
    return end - start == 1 and reading.tokens[start] in ("doubl", "tripl") and \
        end < len(reading.tokens) and reading.tokens[end] in _COUNTING_VERBS


def _as_typed(reading: Reading, figure: str, sentence: int) -> str:
    """A rubric's figure as the answer wrote it, where it is one number ("239" where the
    rubric lists 240, within its tolerance); a figure of words as the rubric has it."""
    for start, end in occurrences(reading, figure):
        if reading.sentence[start] != sentence or not is_number(reading.tokens[start]):
            continue
        if end - start == 1:
            return _shown(reading, start)
        if not any(is_number(token) for token in reading.tokens[start + 1:end]) \
                and _LEADING_FIGURE.match(figure) is not None:
            # a figure with its unit ("100%", "10.7 ms"): the number as written, then the unit
            lead = _LEADING_FIGURE.match(figure)
            rest = figure[lead.end():] if lead else ""
            if _in_thousands(reading, start):  # "4k": its k is shown with the number
                rest = rest.lstrip()[1:]
            return _shown(reading, start) + rest if lead else figure
    return figure


_LEADING_FIGURE = lazy(r"^[~≈]?\d[\d,]*(?:\.\d+)?")


# Small whole numbers (2 for K and V, 8 heads, 4 GPUs) are in every sentence of a drill: they
# quantify nothing. A figure of 10 or more, or one with decimals (3.36 tokens), does.
MEANINGFUL_FIGURE = 10.0


def meaningful(value: float) -> bool:
    return value >= MEANINGFUL_FIGURE or (value > 0 and not value.is_integer())


def concept_credit(concept: Concept, text: str, drill_figures: tuple[float, ...] = (),
                   retargeted: bool = False) -> tuple[Fraction, str]:
    """The best mention's credit: 1 for an explained (and, where figures are required,
    quantified) mention; ½ when not quantified; half again when only listed; 0 when negated."""
    best: Mention | None = None
    for mention in mentions(concept, text, drill_figures, retargeted):
        if best is None or mention.credit > best.credit:
            best = mention
    if best is None:
        return Fraction(0), ""
    return best.credit, best.note


def contains(text: str, phrase: str) -> bool:
    """Whether the phrase is in the text, on word stems ("fp8 kv" matches "FP8-KV caches")."""
    return next(iter(occurrences(read_text(text), phrase)), None) is not None


def affirms(text: str, phrase: str) -> bool:
    """Whether the text says the phrase without negating it."""
    reading = read_text(text)
    return any(not negated(reading, start, end, phrase)
               for start, end in occurrences(reading, phrase))
