"""Trace / compile / execute statistics of jitted functions, printable without timing code."""
from __future__ import annotations

import statistics

from jaxlite._src import tiers


class FunctionStats:
  """What happened to one jitted function, one row per signature."""

  def __init__(self, name, location, entries):
    self.name = name
    self.location = location
    self.rows = [_row(e) for e in entries]

  @property
  def calls(self):
    return sum(r["calls"] for r in self.rows)

  @property
  def cache_hits(self):
    return sum(r["cache_hits"] for r in self.rows)

  @property
  def traces(self):
    return len(self.rows)

  def __getitem__(self, i):
    return self.rows[i]

  def __len__(self):
    return len(self.rows)

  def __str__(self):
    header = (f"{self.name} ({self.location}): {self.calls} calls, {self.cache_hits} cache "
              f"hits, {self.traces} traces")
    lines = [header, f"  {'signature':<28} {'calls':>6} {'hits':>6} {'trace ms':>9} "
             f"{'compile ms':>11} {'exec ms (median)':>17}  tier"]
    for r in self.rows:
      compile_ms = ", ".join(f"{t} {ms:.2f}" for t, ms in r["compile_ms"].items()) or "-"
      exec_ms = f"{r['execute_ms_median']:.4f}" if r["execute_ms_median"] is not None else "-"
      raced = (" (raced: " + ", ".join(f"{t} {m:.4f} ms" for t, m in r["tier_ms"].items())
               + ")") if r["tier_ms"] else ""
      lines.append(f"  {r['signature']:<28} {r['calls']:>6} {r['cache_hits']:>6} "
                   f"{r['trace_ms']:>9.2f} {compile_ms:>11} {exec_ms:>17}  {r['tier'] or '-'}"
                   f"{raced}")
      if r["note"]:
        lines.append(f"    {r['note']}")
    return "\n".join(lines)

  __repr__ = __str__


def _row(entry):
  avals = entry.jaxpr.in_avals
  times = list(entry.exec_s)
  return {
      "signature": "(" + ", ".join(a.str_short(short_dtypes=True) for a in avals) + ")",
      "calls": entry.calls,
      "cache_hits": max(entry.calls - 1, 0),   # every call but the one that traced
      "trace_ms": entry.trace_ms,
      "compile_ms": dict(entry.compile_ms),
      "execute_ms_median": statistics.median(times) * 1e3 if times else None,
      "tier": entry.tier,
      "tier_ms": dict(entry.tier_ms),
      "note": entry.tier_note,
  }


def report(print_=True):
  """Statistics of every live jitted function (``jaxlite.profiler.report()``)."""
  stats = [f.stats() for f in tiers.all_jitted() if f._cache_size()]
  if print_:
    print("\n\n".join(str(s) for s in stats) if stats else "no jitted function has run")
  return stats
