"""Print every replay case where jaxlite differs from JAX, grouped by function.

    python tests/jax_replay/report.py [--suite x32|x64] [--modes eager,tier0,vmap,xla]
                                      [--group PREFIX]

The test (tests/test_jax_replay.py) asserts the same; this lists all differences at once,
for work on them.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the checkout's own jaxlite, not the one the venv's editable install points at
sys.path[:0] = [os.path.dirname(_TESTS), _TESTS]
import test_jax_replay as replay  # noqa: E402


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--suite", default="x32")
  parser.add_argument("--modes", default="eager,tier0,vmap,xla")
  parser.add_argument("--group", default="", help="only groups starting with this")
  parser.add_argument("--area", default=None, help="only the groups of tables.AREAS[AREA]")
  args = parser.parse_args()
  replay._set_suite(args.suite)
  records, _ = replay.load(args.suite)
  in_area = replay.tables.AREAS[args.area] if args.area else (lambda g: True)
  cases = [c for c in replay.suite_cases(args.suite)
           if c.group.startswith(args.group) and in_area(c.group) and replay._available(c)]
  by_group = collections.defaultdict(list)
  for mode in args.modes.split(","):
    if mode == "xla":
      running = [c for c in cases if "err" not in (replay.expected(args.suite, c, "xla")[0])]
      results, times = {}, []
      for start in range(0, len(running), replay.XLA_CHUNK):
        chunk = running[start:start + replay.XLA_CHUNK]
        t0 = time.perf_counter()
        results.update(zip([c.id for c in chunk], replay.run_many_on_xla(chunk)))
        times.append((time.perf_counter() - t0, [c.id for c in chunk]))
      slowest = sorted(times, reverse=True)[:10]
      print("slowest XLA chunks:\n" + "\n".join(f"  {t:6.1f} s  {ids}" for t, ids in slowest))
      pairs = [(c, results[c.id] if c.id in results else replay.run_case(c, "xla"))
               for c in cases]
    else:
      pairs = [(c, replay.run_case(c, mode)) for c in cases
               if mode != "vmap" or "vmap" in records[c.id]]
    for case, (got, leaves) in pairs:
      rec, blob = replay.expected(args.suite, case, mode)
      if rec is None:
        continue
      problem = replay.compare(rec, blob, got, leaves, replay.rtol_scale(case))
      if problem:
        by_group[case.group].append(f"  {mode:6} {case.id}: {problem}")
  total = sum(len(v) for v in by_group.values())
  print(f"{total} differences in {len(by_group)} groups ({len(cases)} cases, suite "
        f"{args.suite}, modes {args.modes})")
  for group in sorted(by_group, key=lambda g: -len(by_group[g])):
    print(f"{group}: {len(by_group[group])}")
    print("\n".join(by_group[group]))


if __name__ == "__main__":
  main()
