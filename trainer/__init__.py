"""kvdrill: timed drills for the quantitative questions of LLM-serving interviews."""

__version__ = "0.1.0"
