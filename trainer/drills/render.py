"""Jinja rendering: worked solutions filled from solver values, and the {{ given }}
placeholders of prompts. Templates run sandboxed with StrictUndefined (a misspelt name is an
error, not an empty string), and anything rendered as HTML is autoescaped.

The sandbox is bounded (BoundedSandbox): a template is read as a regular file of the solutions
folder (a symlink out of it is refused) of at most 256 KiB; every loop iteration and call costs
work from a fixed budget per render; calls nest at most MAX_CALL_DEPTH deep (recursive macros);
range() is capped; integers stay below MAX_INT_BITS; no value (text, list, output) grows past
MAX_VALUE; only the callables a solution needs can be called. Past any bound the render ends
with a DrillFileError naming the template and the bound."""

from __future__ import annotations

import functools
import math
import os
import re
import string
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.runtime import BlockReference, LoopContext, Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Cycler, Joiner, Namespace
from jinja2.visitor import NodeTransformer

from trainer.capacity.derivation import derivation
from trainer.capacity.solver import FORMULAS, value_of
from trainer.drills.model import Drill
from trainer.drills.placeholders import with_articles
from trainer.drills.reference import AnswerKey, show
from trainer.errors import DrillFileError, KvdrillError
from trainer.files.bounded_io import MAX_TEMPLATE_BYTES, read_text_bounded
from trainer.files.paths import data_dir
from trainer.reading.expression import unit_factor
from trainer.records import replace

MAX_WORK = 500_000  # loop iterations, calls and elements weighed, per render
MAX_CALL_DEPTH = 40  # calls inside calls: a recursive macro stops here
MAX_RANGE = 10_000
MAX_INT_BITS = 4096  # about 1,233 digits
MAX_VALUE = 200_000  # characters (or elements) in any one value, and in the output
MAX_WIDTH = 10_000  # a width, count or padding a filter or format is given

# Methods a template may call, by the type they belong to (anything else is refused).
_SAFE_METHODS: dict[type, frozenset[str]] = {
    str: frozenset({
        "split", "rsplit", "splitlines", "strip", "lstrip", "rstrip", "upper", "lower",
        "title", "capitalize", "casefold", "swapcase", "startswith", "endswith", "replace",
        "format", "join", "count", "find", "rfind", "index", "rindex", "partition",
        "rpartition", "removeprefix", "removesuffix", "center", "ljust", "rjust", "zfill",
        "isdigit", "isalpha", "isnumeric", "isdecimal", "isspace", "isalnum", "isupper",
        "islower", "istitle"}),
    dict: frozenset({"items", "keys", "values", "get"}),
    list: frozenset({"index", "count"}),
    tuple: frozenset({"index", "count"}),
    int: frozenset({"bit_length", "is_integer", "as_integer_ratio", "conjugate"}),
    float: frozenset({"is_integer", "as_integer_ratio", "conjugate"}),
    Cycler: frozenset({"next", "reset"}),
}
_WIDTH_FILTERS = frozenset({"center", "indent", "wordwrap", "truncate", "slice", "batch"})


class SandboxLimit(jinja2.exceptions.SecurityError):
    """A bound of the solution sandbox was reached."""


class _Budget:
    def __init__(self) -> None:
        self.work = 0
        self.depth = 0
        self.output = 0

    def spend(self, units: int, what: str) -> None:
        self.work += units
        if self.work > MAX_WORK:
            raise SandboxLimit(f"the template does more than {MAX_WORK:,} steps of work "
                               f"(at {what}): a worked solution needs a few hundred")


def _weight(value: Any, budget: _Budget) -> int:
    """Characters and elements in `value`, counted up to just past MAX_VALUE (the counting
    itself is charged to the budget)."""
    total = 0
    pending = [value]
    while pending and total <= MAX_VALUE:
        item = pending.pop()
        if isinstance(item, str | bytes):
            total += len(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            total += item.bit_length() // 8
        elif isinstance(item, dict):
            total += len(item)
            pending += [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple | set | frozenset):
            total += len(item)
            pending += list(item)[: MAX_VALUE + 1]
        else:
            total += 1
    budget.spend(total // 64 + 1, "a value's size")
    return total


def _sized(value: Any, budget: _Budget, what: str) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) \
            and value.bit_length() > MAX_INT_BITS:
        raise SandboxLimit(f"{what} gives a number of more than {MAX_INT_BITS} bits")
    if isinstance(value, str | bytes | list | tuple | dict | set | frozenset) \
            and _weight(value, budget) > MAX_VALUE:
        raise SandboxLimit(f"{what} gives a value of more than {MAX_VALUE:,} characters "
                           "or items")
    return value


def _check_format(text: str, what: str) -> None:
    """A %-format or str.format string whose widths and precisions are small."""
    for match in re.finditer(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?", text):
        for part in match.groups():
            if part == "*" or (part is not None and int(part) > MAX_WIDTH):
                raise SandboxLimit(f"{what}: a width or precision over {MAX_WIDTH:,} (or *)")
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:
        return  # the format itself reports it
    for _, _, spec, _ in fields:
        if spec and ("{" in spec or any(int(d) > MAX_WIDTH
                                          for d in re.findall(r"\d+", spec))):
            raise SandboxLimit(f"{what}: a width or precision over {MAX_WIDTH:,} (or nested)")


def _check_power(left: Any, right: Any) -> None:
    if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1 \
            and right * abs(left).bit_length() > MAX_INT_BITS * 2:
        raise SandboxLimit(f"a power with more than {MAX_INT_BITS} bits")
    if isinstance(left, int | float) and isinstance(right, float) and abs(right) > 10_000:
        raise SandboxLimit("a power with an exponent over 10,000")


def _check_product(left: Any, right: Any, budget: _Budget) -> None:
    if isinstance(left, int) and isinstance(right, int):
        if left.bit_length() + right.bit_length() > MAX_INT_BITS * 2:
            raise SandboxLimit(f"a product of more than {MAX_INT_BITS} bits")
        return
    for sequence, count in ((left, right), (right, left)):
        if isinstance(count, int) and not isinstance(count, bool) \
                and isinstance(sequence, str | list | tuple) \
                and count > 0 and _weight(sequence, budget) * count > MAX_VALUE:
            raise SandboxLimit(f"a repetition of more than {MAX_VALUE:,} characters or items")


def _check_replace(text: Any, old: Any, new: Any, budget: _Budget) -> None:
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str):
        grows = (text.count(old) if old else len(text) + 1) * len(new)
        if len(text) + grows > MAX_VALUE:
            raise SandboxLimit(f"a replace() that gives more than {MAX_VALUE:,} characters")
    _weight(text, budget)


class _Bound(NodeTransformer):
    """Routes every loop's iterable, every ~ concatenation, every list, tuple and dict literal
    and every output expression through the budget (filters the environment defines)."""

    @staticmethod
    def _wrap(node: nodes.Node, name: str) -> nodes.Expr:
        assert isinstance(node, nodes.Expr)
        return nodes.Filter(node, name, [], [], None, None, lineno=node.lineno)

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = self._wrap(node.iter, "kvdrill_counted")
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return self._wrap(node, "kvdrill_sized")

    def visit_List(self, node: nodes.List) -> nodes.Node:
        self.generic_visit(node)
        return self._wrap(node, "kvdrill_sized")

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        self.generic_visit(node)
        return self._wrap(node, "kvdrill_sized")

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        self.generic_visit(node)
        node.nodes = [n if isinstance(n, nodes.TemplateData) else self._wrap(n, "kvdrill_out")
                      for n in node.nodes]
        return node


def _owner(function: Any) -> Any:
    """The object a method is bound to (through the sandbox's wrapper of str.format)."""
    return getattr(getattr(function, "__wrapped__", function), "__self__", None)


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """An immutable Jinja sandbox whose every render is bounded in work, depth and size."""

    intercepted_binops = frozenset({"+", "-", "*", "/", "//", "%", "**"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.budget = _Budget()
        self.globals.pop("lipsum", None)
        self.globals["range"] = self._range
        for name in list(self.filters):
            self.filters[name] = self._bounded_filter(name, self.filters[name])
        self.filters["kvdrill_counted"] = self._counted
        self.filters["kvdrill_sized"] = lambda value: _sized(value, self.budget, "a value")
        self.filters["kvdrill_out"] = self._output

    def reset(self) -> None:
        self.budget = _Budget()

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        bounded: nodes.Template = _Bound().visit(tree)
        return bounded

    # -- values ------------------------------------------------------------------------------

    def _range(self, *args: int) -> range:
        values = range(*args)
        if len(values) > MAX_RANGE:
            raise SandboxLimit(f"range() of {len(values):,} numbers (at most {MAX_RANGE:,})")
        return values

    def _counted(self, iterable: Iterable[Any]) -> Iterator[Any]:
        for item in iterable:
            self.budget.spend(1, "a loop")
            yield item

    def _output(self, value: Any) -> Any:
        self.budget.output += _weight(value, self.budget)
        if self.budget.output > MAX_VALUE * 5:
            raise SandboxLimit(f"the output is longer than {MAX_VALUE * 5:,} characters")
        return value

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any,
                   right: Any) -> Any:
        self.budget.spend(1, f"the {operator} operator")
        if operator == "**":
            _check_power(left, right)
        elif operator == "*":
            _check_product(left, right, self.budget)
        elif operator == "%" and isinstance(left, str):
            _check_format(left, "a % format")
            _sized(right, self.budget, "a % format's values")
        return _sized(super().call_binop(context, operator, left, right), self.budget,
                      f"the {operator} operator")

    # -- calls -------------------------------------------------------------------------------

    def _allowed(self, obj: Any) -> bool:
        if isinstance(obj, Macro | LoopContext | BlockReference | Joiner) \
                or obj in (self._range, dict, Cycler, Joiner, Namespace):
            return True
        if getattr(obj, "kvdrill_template_function", False):
            return True
        owner = _owner(obj)
        name = getattr(obj, "__name__", "")
        if isinstance(owner, Drill):
            return name == "step"
        for kind, names in _SAFE_METHODS.items():
            if isinstance(owner, kind) and not isinstance(owner, bool):
                return name in names
        return False

    def call(self, context: jinja2.runtime.Context, obj: Any, /, *args: Any,
             **kwargs: Any) -> Any:
        budget = self.budget
        budget.spend(1, "a call")
        name = getattr(obj, "__name__", type(obj).__name__)
        if not self._allowed(obj):
            raise SandboxLimit(f"{name}() cannot be called in a solution template")
        for value in (*args, *kwargs.values()):
            _sized(value, budget, f"an argument of {name}()")
        owner = _owner(obj)
        if isinstance(owner, str):
            if name in ("format", "format_map"):
                _check_format(owner, "str.format")
            elif name in ("center", "ljust", "rjust", "zfill") and args \
                    and isinstance(args[0], int) and args[0] > MAX_VALUE:
                raise SandboxLimit(f"{name}() to more than {MAX_VALUE:,} characters")
            elif name == "replace" and len(args) >= 2:
                _check_replace(owner, args[0], args[1], budget)
            elif name == "join" and args:
                _sized(args[0], budget, "join()")
        budget.depth += 1
        try:
            if budget.depth > MAX_CALL_DEPTH:
                raise SandboxLimit(f"calls nested more than {MAX_CALL_DEPTH} deep (a macro "
                                   "that calls itself without end?)")
            result = super().call(context, obj, *args, **kwargs)
        finally:
            budget.depth -= 1
        return _sized(result, budget, f"{name}()")

    def _bounded_filter(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def budget() -> _Budget:  # the budget is replaced per render
            return self.budget

        @functools.wraps(function)
        def bounded(*args: Any, **kwargs: Any) -> Any:
            spent = budget()
            spent.spend(1, f"the {name} filter")
            values = [a for a in (*args, *kwargs.values())
                      if not isinstance(a, jinja2.runtime.Context | jinja2.Environment
                                        | nodes.EvalContext)]
            for value in values:
                _sized(value, spent, f"the {name} filter's input")
            if name in _WIDTH_FILTERS and any(
                    isinstance(v, int) and not isinstance(v, bool) and v > MAX_WIDTH
                    for v in values[1:]):
                raise SandboxLimit(f"the {name} filter with a width or count over "
                                   f"{MAX_WIDTH:,}")
            if name == "indent" and values and isinstance(values[0], str):
                width = values[1] if len(values) > 1 and isinstance(values[1], int) else 4
                if values[0].count("\n") * max(width, 0) > MAX_VALUE:
                    raise SandboxLimit(f"an indent of more than {MAX_VALUE:,} characters")
            if name == "format" and values and isinstance(values[0], str):
                _check_format(values[0], "the format filter")
            if name == "replace" and len(values) >= 3:
                _check_replace(values[0], values[1], values[2], spent)
            return _sized(function(*args, **kwargs), spent, f"the {name} filter")

        return bounded


class SolutionLoader(jinja2.BaseLoader):
    """Templates of one folder only: a plain name, a regular file inside the folder (a symlink
    that leads out of it is refused), read bounded."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def get_source(self, environment: jinja2.Environment, template: str
                   ) -> tuple[str, str, Callable[[], bool]]:
        if "/" in template or "\\" in template or template.startswith("."):
            raise jinja2.TemplateNotFound(template)
        path = self.folder / template
        if not os.path.lexists(path):
            raise jinja2.TemplateNotFound(template)
        try:
            inside = path.resolve(strict=True).is_relative_to(self.folder.resolve())
        except (OSError, RuntimeError):
            inside = False
        if not inside:
            raise DrillFileError(f"{path}: the solution template leads out of {self.folder} "
                                 "(a symlink?): keep solution templates in the solutions "
                                 "folder")
        source = read_text_bounded(path, MAX_TEMPLATE_BYTES, "solution template",
                                   DrillFileError)
        stamp = os.stat(path).st_mtime_ns

        def uptodate() -> bool:
            try:
                return os.stat(path).st_mtime_ns == stamp
            except OSError:
                return False

        return source, str(path), uptodate


@cache
def environment(folder: Path) -> BoundedSandbox:
    return BoundedSandbox(
        loader=SolutionLoader(folder),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"),
                                            default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _template_function(function: Callable[..., Any]) -> Callable[..., Any]:
    function.kvdrill_template_function = True  # type: ignore[attr-defined]
    return function


def solution_context(key: AnswerKey) -> dict[str, Any]:
    givens = key.display_givens()

    def deployment_of(step_id: str | None) -> Any:
        return key.base if step_id is None else key.deployment(step_id)

    def given(name: str) -> str:
        if name not in givens:
            raise DrillFileError(f"unknown given {name!r} in a solution template")
        # a name from outside (a config.json's folder) is text, never Markdown or HTML
        return givens[name].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    def answer(step_id: str) -> str:
        return key.reference(step_id).display

    def quantity(name: str, step_id: str | None = None, unit: str | None = None) -> str:
        """A quantity shown in its own unit, or in `unit` (a figure set beside an answer in
        GB says GB too)."""
        if name not in FORMULAS:
            raise DrillFileError(f"unknown quantity {name!r} in a solution template")
        if unit is not None:
            try:
                same = unit_factor(unit).dim == unit_factor(FORMULAS[name].unit).dim
            except KvdrillError:
                same = False
            if not same:
                raise DrillFileError(f"unit {unit!r} cannot show {name!r} in a solution "
                                     "template")
        return show(key.value(name, deployment_of(step_id)), unit or FORMULAS[name].unit)

    def number(name: str, step_id: str | None = None) -> float:
        """A quantity's plain value in its base unit, for a ratio the text states."""
        if name not in FORMULAS:
            raise DrillFileError(f"unknown quantity {name!r} in a solution template")
        return float(key.value(name, deployment_of(step_id)))

    def number_at(name: str, batch: float, step_id: str | None = None) -> float:
        """A quantity's plain value at another decode batch (an MoE's read grows with the
        experts its batch touches)."""
        if name not in FORMULAS:
            raise DrillFileError(f"unknown quantity {name!r} in a solution template")
        at = replace(deployment_of(step_id), batch=max(1, round(batch)))
        return float(key.value(name, at))

    derivations: dict[str | None, dict[str, str]] = {}

    def working(name: str, step_id: str | None = None) -> str:
        if step_id not in derivations:
            derivations[step_id] = {s.name: s.working
                                    for s in derivation(deployment_of(step_id))}
        if name not in derivations[step_id]:
            raise DrillFileError(f"no working for {name!r} in a solution template")
        return derivations[step_id][name]

    def wrong(step_id: str, misconception: str) -> str:
        reference = key.reference(step_id)
        values = [value for path, value in reference.wrong if path == misconception]
        if reference.whole_count or reference.unit == "sequences":
            # a count's example is a count: 11 sessions ÷ 2 GPUs is 5 per GPU, not 5.5
            values = [type(v)(math.floor(v)) for v in values]
        return show(values[0], reference.unit) if values else ""

    def positions_note(step_id: str | None = None, beyond_only: bool = False) -> str:
        """What the sheet must say where a step's context is past the model's positions
        (RoPE scaling needed, or past its reach; `beyond_only`: only the latter); "" within
        them."""
        return key.positions_note(step_id, beyond_only).replace("&", "&amp;").replace("<", "&lt;") \
            .replace(">", "&gt;")

    title = key.title().replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return {"drill": key.drill, "title": title, **_calc_target(key), **_vendor_words(key),
            **{f.__name__: _template_function(f)
                                   for f in (given, answer, quantity, number, number_at,
                                             working, wrong, positions_note)}}


def _calc_target(key: AnswerKey) -> dict[str, Any]:
    """For a worked solution's `kvdrill calc` lines: whether the key is re-targeted, and the
    --model and --gpu that name its model and card (shell-quoted; a config's path as given)."""
    import shlex

    from trainer.capacity.presets import ModelPreset, model_of, same_weights

    model = key.givens.get("model")
    if isinstance(model, ModelPreset):
        model = model.config_path if model.from_config else model.id
    preset = key.givens.get("model")
    if not isinstance(preset, ModelPreset):
        preset = model_of(str(preset)) if preset else None
    positions = preset.max_context if preset is not None else 0
    measured = key.drill.requires.measured_on
    return {"retargeted": key.retargeted is not None,
            # the model whose rates the drill measured, or its twin weight for weight
            # (Meta-Llama-3-8B for Llama-3.1-8B): the measurements are this model's own
            "measured_model": measured is not None and preset is not None
            and measured.get("model") is not None and (
                preset.id == measured.get("model")
                or same_weights(preset, model_of(measured.get("model")))),
            # an input embedding table apart from the LM head: a decode step reads one row of
            # it, though a plain roofline counts it whole
            "untied_table": not key.base.tied_embeddings and key.base.vocab is not None,
            "calc_model": shlex.quote(str(model or "")),
            "calc_gpu": shlex.quote(str(key.givens.get("gpu") or "")),
            # grouped-query attention: fewer KV heads than query heads (not MHA, not MLA)
            "gqa": key.base.attention != "mla" and key.base.kv_heads < key.base.heads,
            # the model's own context, as people say it ("128k", "40k"); "" when unknown
            "model_context": f"{positions // 1024}k" if positions >= 1024 else "",
            "model_positions": positions}


def _vendor_words(key: AnswerKey) -> dict[str, Any]:
    """What a worked solution calls the card's software: CUDA graphs and NCCL on an NVIDIA
    card, HIP graphs and RCCL on an AMD one (ROCm), where the engine's memory total is read
    from, and whether the card computes in FP8 at all."""
    from trainer.capacity.presets import find_gpu

    gpu = key.givens.get("gpu")
    card = find_gpu(str(gpu)) if gpu else None
    amd = card is not None and card.name.startswith("AMD")
    gaudi = card is not None and card.name.startswith("Intel Gaudi")
    runtime = key.display_givens()
    # the L40S and L4: GDDR6 on PCIe boards
    gddr = card is not None and card.name.endswith(("L40S", "L4"))
    # before Hopper, vLLM's MLA path is Triton MLA, which takes no FP8 cache (FlashMLA needs
    # Hopper; the CUTLASS and FlashInfer MLA kernels, Blackwell)
    triton_mla = card is not None and card.name.startswith("NVIDIA") and \
        any(name in card.name for name in ("A100", "L40S", "L4"))
    return {"amd": amd,
            # the card's reported total is CUDA's own (what vLLM multiplies), not nvidia-smi's
            "cuda_total": card is not None and card.reported_by_cuda,
            "triton_mla": key.base.attention == "mla" and triton_mla,
            "mla": key.base.attention == "mla",
            # a card with no FP8 arithmetic (Ampere) runs FP8 weights weight-only (W8A16)
            "fp8_compute": card is None or card.fp8_tflops is not None,
            # ... on NVIDIA only: vLLM's weight-only FP8 path (FP8 Marlin) is NVIDIA's, and
            # an AMD card without FP8 (CDNA2) cannot load an FP8 checkpoint at all
            "fp8_weight_only": card is not None and card.fp8_tflops is None and not amd,
            # the card's runtime, as its sheet names it: HIP graphs and RCCL (ROCm), HPU graphs
            # and HCCL (Gaudi's vLLM backend), CUDA graphs and NCCL
            "graphs": runtime["graphs"],
            "graph": runtime["graphs"].removesuffix("s").replace(" ", "-"),
            "collectives": runtime["collectives"],
            "memory": runtime["memory"],
            "gaudi": gaudi,
            # GDDR6, whose ECC keeps a share of the GiB built in
            "gddr": gddr,
            # what links the cards of one node: no NVLink outside NVIDIA's SXM boards
            "scale_up": "Infinity Fabric" if amd else "Gaudi 3's scale-up RoCE ports (21 of its 24)"
            if gaudi else "PCIe" if gddr or (card is not None and "PCIe" in card.name)
            else "NVLink",
            # (a card's figure is CUDA's own total or nvidia-smi's, as its source says: one
            # sentence for both read the nvidia-smi figure as CUDA's; expert pass 62, O3)
            "driver_total": "the total the ROCm runtime reports" if amd else
            "CUDA's own total, a little below nvidia-smi's"
            if card is not None and card.reported_by_cuda else
            "nvidia-smi's; CUDA's, which vLLM reads, is up to 1% lower"}


# The counts of sequences that fit in memory, which an engine runs together only up to its cap
_FITTING_COUNTS = ("max_concurrency", "max_concurrency_with_prefix", "spec_max_concurrency")


def engine_cap_note(key: AnswerKey, text: str) -> str:
    """A closing paragraph where a count of sequences the drill runs or compares is past
    vLLM's default max_num_seqs on the card (a small model on a large card), unless the
    solution already says what the cap is; "" otherwise. Where the drill runs a batch that
    latency also bounds (min of memory and TPOT), that batch is what meets the cap."""
    gpu = key.givens.get("gpu")
    if not gpu:
        return ""
    from trainer.capacity.presets import find_gpu

    card = find_gpu(str(gpu))
    cap = card.default_max_num_seqs
    if ("max_num_seqs" in text or "max-num-seqs" in text) and f"{cap:,}" in text:
        return ""  # (said already, as the setting or as its flag: pass 51, N3)
    rule = "1,024 on a card of 70 GiB or more that is not an A100, else 256"
    default = f"{cap:,} on an {card.name} ({rule})"
    operating = [step for step in key.drill.steps
                 if step.kind == "numeric" and step.answer == "latency_bound_batch"]
    if operating:
        batch = value_of(key.deployment(operating[0].id), "operating_batch")
        if batch <= cap:
            return ""  # the TPOT keeps the batch under the cap: memory past it is idle anyway
        return (f"\n\n**The engine's cap.** The batch this drill runs, {int(batch):,} "
                f"sequences, is past vLLM's default max_num_seqs, the most it runs at once: "
                f"{default}. Raise --max-num-seqs to run it, or read the figures above at "
                f"{cap:,}.\n")
    counts = [(key.reference(step.id).value, step.id) for step in key.drill.steps
              if step.kind == "numeric" and step.answer in _FITTING_COUNTS
              and (step.with_ or {}).get("gpu") in (None, gpu)]
    past = [(value, step_id) for value, step_id in counts if value > cap]
    if not past:
        return ""
    named = [f"{int(value):,}" for value, _ in sorted(past)]
    several = len(past) > 1
    listed = f"{', '.join(named[:-1])} and {named[-1]}" if several else named[0]
    compared = (" Counts past it are one and the same at the defaults: a lever that moves one "
                "to another adds no running sequences until the cap is raised." if several
                else "")
    return (f"\n\n**The engine's cap.** vLLM runs at most max_num_seqs sequences at once: by "
            f"default {default}. Past it the rest wait in the queue with memory to spare; "
            f"{'the counts' if several else 'the count'} of {listed} sequences above "
            f"{'are' if several else 'is'} past it.{compared} Raise --max-num-seqs to use the "
            "memory, and watch the step time it adds.\n")


def render_solution(key: AnswerKey) -> str:
    folder = data_dir("solutions")
    name = key.drill.solution
    env = environment(folder)
    env.reset()
    try:
        template = env.get_template(name)
        text = with_articles(template.render(solution_context(key)))
        return text + engine_cap_note(key, text)
    except jinja2.TemplateNotFound:
        raise DrillFileError(
            f"drill {key.drill.id}: solution template {name!r} not found in {folder}"
        ) from None
    except jinja2.TemplateSyntaxError as error:
        raise DrillFileError(f"{folder / name}:{error.lineno}: {error.message}") from None
    except SandboxLimit as error:
        raise DrillFileError(f"{folder / name}: stopped by the sandbox: {error}") from None
    except (jinja2.UndefinedError, jinja2.exceptions.SecurityError) as error:
        raise DrillFileError(f"{folder / name}: {error}") from None
    except RecursionError:
        raise DrillFileError(f"{folder / name}: stopped by the sandbox: recursion too deep"
                             ) from None
    except (jinja2.TemplateError, ArithmeticError, TypeError, ValueError, LookupError,
            AttributeError, MemoryError) as error:
        raise DrillFileError(f"{folder / name}: the template failed: {type(error).__name__}: "
                             f"{str(error)[:200]}") from None
