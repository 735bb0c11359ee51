"""Trace / compile / execute statistics of jitted functions."""
from jaxlite._src.profiler import report, FunctionStats
