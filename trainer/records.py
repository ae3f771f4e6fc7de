"""Records: the project's dataclasses, without dataclasses' cost at start-up.

`dataclasses.dataclass` writes each class's `__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__` and `__delattr__` as source text and compiles them when the module is imported:
about a millisecond a class on Python 3.11, and `kvdrill grade` imports forty of them (a quarter
of what grading a right sheet costs). `record` gives a class the same behaviour with nothing
compiled at import: equality, hashing, `repr` and the frozen guard are shared functions over
the field names, and `__init__` (where speed per instance matters: the solver makes thousands
of deployments) is compiled the first time the class makes an instance, so a class imported and
never used costs nothing.

What it does is what `dataclass` does for the options the project uses (frozen or not, slots or
not, `field(default=..., default_factory=..., repr=..., compare=...)`, `__post_init__`, methods
written in the class kept); `typing.dataclass_transform` tells type checkers so."""

from __future__ import annotations

import keyword
import operator
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")

_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """A field of a frozen record was set or deleted."""


class Field:
    __slots__ = ("compare", "default", "default_factory", "name", "repr")

    def __init__(self, default: Any = _MISSING, default_factory: Any = _MISSING,
                 repr: bool = True, compare: bool = True) -> None:
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("a field cannot have both a default and a default_factory")
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare
        self.name = ""


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | Any = _MISSING,
          repr: bool = True, compare: bool = True) -> Any:
    """A field with a default, a default made per instance, or left out of repr or equality."""
    return Field(default, default_factory, repr, compare)


def _is_class_var(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(*, frozen: bool = True, slots: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(cls: type[T] | None = None, /, *, frozen: bool = True, slots: bool = False
           ) -> Any:
    """`@record` for `@dataclass(frozen=True)`; `@record(slots=True)`, `@record(frozen=False)`."""
    def wrap(cls: type[T]) -> type[T]:
        return _make(cls, frozen, slots)

    return wrap if cls is None else wrap(cls)


def _make(original: type[T], frozen: bool, slots: bool) -> type[T]:
    cls: Any = original
    own = cls.__dict__
    fields: list[Field] = [f for base in reversed(cls.__mro__[1:])
                           for f in getattr(base, "__record_fields__", ())]
    for name, annotation in own.get("__annotations__", {}).items():
        if _is_class_var(annotation):
            continue
        value = own.get(name, _MISSING)
        spec = value if isinstance(value, Field) else Field(default=value)
        spec.name = name
        fields = [f for f in fields if f.name != name] + [spec]
    seen_default = False
    for spec in fields:
        has_default = spec.default is not _MISSING or spec.default_factory is not _MISSING
        if seen_default and not has_default:
            raise TypeError(f"{cls.__name__}: field {spec.name!r} without a default follows "
                            "one with a default")
        seen_default = seen_default or has_default
    names = tuple(f.name for f in fields)
    if slots:
        namespace = {key: value for key, value in own.items()
                     if key not in names and key not in ("__dict__", "__weakref__")}
        namespace["__slots__"] = tuple(f.name for f in fields
                                       if f.name not in _inherited_slots(cls))
        qualname = cls.__qualname__
        cls = type(cls)(cls.__name__, cls.__bases__, namespace)
        cls.__qualname__ = qualname
    else:
        for spec in fields:  # the class keeps a plain default as dataclass leaves it
            if spec.name in own and isinstance(own[spec.name], Field):
                if spec.default is _MISSING:
                    delattr(cls, spec.name)
                else:
                    setattr(cls, spec.name, spec.default)
    own = cls.__dict__
    cls.__record_fields__ = tuple(fields)
    cls.__match_args__ = names  # type: ignore[misc]

    def put(name: str, value: Any) -> None:
        if name not in own:  # a method written in the class is kept, as dataclass keeps it
            setattr(cls, name, value)

    put("__init__", _lazy_init(cls, tuple(fields), frozen))
    repr_names = tuple(f.name for f in fields if f.repr)
    put("__repr__", _repr(repr_names))
    compared = tuple(f.name for f in fields if f.compare)
    key = _key(compared)
    class_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))
    put("__eq__", _eq(key))
    if not explicit_hash:
        # frozen: hashed by its compared fields; mutable: not hashable (dataclass's rule)
        cls.__hash__ = _hash(key) if frozen else None
    if frozen:
        put("__setattr__", _frozen_setattr(cls, names))
        put("__delattr__", _frozen_delattr(cls, names))
    if slots and frozen:  # copy and pickle set slots through setattr: give them the state
        put("__getstate__", lambda self: [getattr(self, name) for name in names])
        put("__setstate__", _frozen_setstate(names))
    made: type[T] = cls
    return made


def _inherited_slots(cls: type) -> set[str]:
    return {name for base in cls.__mro__[1:]
            for name in getattr(base, "__slots__", ())}


def _key(names: tuple[str, ...]) -> Callable[[Any], Any]:
    if not names:
        return lambda _: ()
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda obj: (get(obj),)
    return operator.attrgetter(*names)


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({inner})"

    return __repr__


def _eq(key: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(key: Callable[[Any], Any]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _frozen_setattr(cls: type, names: tuple[str, ...]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)  # a subclass's own attribute

    return __setattr__


def _frozen_delattr(cls: type, names: tuple[str, ...]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)

    return __delattr__


def _frozen_setstate(names: tuple[str, ...]) -> Callable[[Any, list[Any]], None]:
    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)

    return __setstate__


def _lazy_init(cls: type, fields: tuple[Field, ...], frozen: bool) -> Callable[..., None]:
    """An __init__ that compiles the real one on its first call and puts it in its place."""
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init = _compiled_init(cls, fields, frozen)
        if cls.__dict__.get("__init__") is __init__:
            cls.__init__ = init  # type: ignore[misc]
        init(self, *args, **kwargs)

    return __init__


def _compiled_init(cls: type, fields: tuple[Field, ...], frozen: bool) -> Callable[..., None]:
    # The same code dataclass writes: one assignment a field, a factory called when its
    # argument was not given, __post_init__ last. Only field names (identifiers, from the
    # class's own annotations) are written into the source, never a value: the classes are
    # kvdrill's own, defined in its source, and nothing a user types or a drill file says
    # reaches this (the red line on exec).
    scope: dict[str, Any] = {"__set": object.__setattr__, "__factory_missing": _MISSING}
    params, body = [], []
    for index, spec in enumerate(fields):
        name = spec.name
        if not name.isidentifier() or keyword.iskeyword(name):
            raise TypeError(f"{cls.__name__}: field name {name!r} is not an identifier")
        if spec.default_factory is not _MISSING:
            scope[f"__factory_{index}"] = spec.default_factory
            params.append(f"{name}=__factory_missing")
            value = f"__factory_{index}() if {name} is __factory_missing else {name}"
        else:
            if spec.default is not _MISSING:
                scope[f"__default_{index}"] = spec.default
                params.append(f"{name}=__default_{index}")
            else:
                params.append(name)
            value = name
        body.append(f"    __set(self, {name!r}, {value})" if frozen
                    else f"    self.{name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass")
    # safe: the source holds only field names (identifiers, keywords refused above) of classes
    # defined in kvdrill's own modules; every value reaches it through `scope`, never the text
    exec(compile(source, f"<record {cls.__qualname__}>", "exec"), scope)
    init: Callable[..., None] = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record `obj` with `changes` (dataclasses.replace)."""
    values = {f.name: getattr(obj, f.name) for f in obj.__record_fields__  # type: ignore[attr-defined]
              } | changes
    return obj.__class__(**values)


def field_names(obj_or_cls: Any) -> tuple[str, ...]:
    """The record's field names, in order (dataclasses.fields, names only)."""
    return tuple(f.name for f in obj_or_cls.__record_fields__)
