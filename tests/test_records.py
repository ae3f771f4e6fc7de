"""trainer.records behaves as dataclasses.dataclass does for the options the project uses: the
same class written both ways gives the same constructor, equality, hash, repr and frozen guard."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from trainer import records


def _pair(frozen: bool = True, slots: bool = False) -> tuple[type, type]:
    """The same class made by dataclasses and by records."""
    made = []
    for decorate in (dataclasses.dataclass(frozen=frozen, slots=slots),
                     records.record(frozen=frozen, slots=slots)):
        make_field = dataclasses.field if decorate.__module__ == "dataclasses" else records.field

        class Point:
            x: int
            label: str = "p"
            tags: list[str] = make_field(default_factory=list)
            note: str = make_field(default="", repr=False, compare=False)

            def norm(self) -> int:
                return abs(self.x)

        made.append(decorate(Point))
    return made[0], made[1]


@pytest.mark.parametrize("frozen, slots", [(True, False), (True, True), (False, False)])
def test_a_record_is_built_compared_and_shown_as_a_dataclass_is(frozen: bool, slots: bool) -> None:
    data, record = _pair(frozen, slots)
    for args, kwargs in [((1,), {}), ((2, "q"), {"note": "n"}), ((), {"x": 3, "tags": ["a"]})]:
        a, b = data(*args, **kwargs), record(*args, **kwargs)
        assert repr(a) == repr(b)
        assert (a.x, a.label, a.tags, a.note, a.norm()) == (b.x, b.label, b.tags, b.note, b.norm())
    assert record(1, note="a") == record(1, note="b")  # a field left out of equality
    assert record(1) != record(2)
    assert record(1).tags is not record(1).tags  # a factory makes one list per instance
    assert record.__match_args__ == data.__match_args__
    if slots:
        assert not hasattr(record(1), "__dict__")


def test_a_frozen_record_is_hashed_by_its_fields_and_cannot_be_changed() -> None:
    _, record = _pair()
    assert hash(record(1, "a", ())) == hash(record(1, "a", (), note="other"))
    with pytest.raises(TypeError):  # a list among the fields: unhashable, as a dataclass is
        hash(record(1))
    point = record(1)
    with pytest.raises(AttributeError, match="cannot assign to field 'x'"):
        point.x = 2
    with pytest.raises(AttributeError, match="cannot delete field 'x'"):
        del point.x


def test_a_mutable_record_is_not_hashable_and_can_be_changed() -> None:
    _, record = _pair(frozen=False)
    point = record(1)
    point.x = 5
    assert point.x == 5
    with pytest.raises(TypeError):
        hash(point)


def test_a_record_refuses_the_arguments_a_dataclass_refuses() -> None:
    _, record = _pair()
    for args, kwargs in [((), {}), ((1,), {"x": 2}), ((1,), {"colour": "red"}),
                         ((1, "a", [], "n", "extra"), {})]:
        with pytest.raises(TypeError):
            record(*args, **kwargs)


def test_a_field_without_a_default_after_one_with_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default follows"):
        @records.record
        class Wrong:
            a: int = 1
            b: int


def test_replace_copies_a_record_with_changes_and_post_init_runs_again() -> None:
    seen = []

    @records.record
    class Checked:
        value: int
        unit: str = "GB"

        def __post_init__(self) -> None:
            seen.append(self.value)

    changed = records.replace(Checked(1), value=2)
    assert (changed.value, changed.unit, seen) == (2, "GB", [1, 2])
    assert records.field_names(Checked) == ("value", "unit")
    with pytest.raises(TypeError):
        records.replace(Checked(1), colour="red")


def test_methods_written_in_the_class_are_kept() -> None:
    @records.record
    class Own:
        value: int

        def __repr__(self) -> str:
            return "mine"

        def __hash__(self) -> int:
            return 7

    assert (repr(Own(1)), hash(Own(1))) == ("mine", 7)


def test_importing_the_marking_code_compiles_no_dataclass() -> None:
    """The point of records: the start-up of `grade` compiles no method of a record."""
    code = ("import dataclasses, sys\n"
            "made = []\n"
            "real = dataclasses._process_class\n"
            "dataclasses._process_class = lambda cls, *a: made.append(cls) or real(cls, *a)\n"
            "import trainer.marking.grading, trainer.drills.variants, trainer.app.cli\n"
            "print([c.__module__ for c in made if c.__module__.startswith('trainer')])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_a_frozen_record_with_slots_copies_and_pickles() -> None:
    import copy
    import pickle

    point = Slotted(1, ("a",))
    assert copy.deepcopy(point) == point
    assert pickle.loads(pickle.dumps(point)) == point


@records.record(slots=True)
class Slotted:  # (module level: pickle finds a class by its name)
    x: int
    tags: tuple[str, ...] = ()
