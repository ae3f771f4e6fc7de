"""The exact rational number every figure is computed in.

quicktions' Fraction is the standard library's `fractions.Fraction` compiled: the same values,
text, hashes and rounding, several times faster. A key or a diagnosis does tens of thousands
of rational operations, and the pure-Python class was most of what drawing variants and
grading a wrong sheet cost. It is typed as the standard library's class, whose interface it
keeps; every module takes it from here, so no value of the other class is made and mixed in.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fractions import Fraction
else:
    from quicktions import Fraction

__all__ = ["Fraction"]
