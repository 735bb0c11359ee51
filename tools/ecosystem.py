"""Run optax's and chex's own test suites on real JAX and on jaxlite, and print both counts.

    python tools/ecosystem.py                      # set up both venvs (once), run everything
    python tools/ecosystem.py --only jaxlite -k adam --suites optax
    python tools/ecosystem.py --files optax/_src/alias_test.py --failures

Two virtual environments are made under ``--root`` (default ``/work/venvs/ecosystem``):
``jax`` with jax==0.10.2 and jaxlib==0.10.2, and ``jaxlite`` with this checkout installed
in editable mode. Both get optax==0.2.8 and chex==0.1.92 ``--no-deps`` (their wheels ship
their tests) plus the libraries those tests import. The tests are run from inside
site-packages with ``python -m pytest`` (JAX) and ``python -m jaxlite -m pytest``
(jaxlite). Test files that need flax (which would pull in the real jax) and the
tests of JAX internals listed in ``docs/ecosystem.md`` are deselected in both runs, so
the counts compare like with like.
"""
import argparse
import collections
import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

REPO = pathlib.Path(__file__).resolve().parent.parent
SUITES = {"optax": "optax==0.2.8", "chex": "chex==0.1.92"}
# What the suites import besides jax, numpy and themselves.
TEST_DEPS = ["absl-py", "toolz", "typing_extensions", "pytest", "numpy", "scipy", "ml_dtypes",
             "cloudpickle", "dm-tree", "pytest-timeout", "scikit-learn"]
RUNTIMES = {
    "jax": {"install": ["jax==0.10.2", "jaxlib==0.10.2"], "runner": ["-m", "pytest"]},
    "jaxlite": {"install": ["-e", str(REPO)], "runner": ["-m", "jaxlite", "-m", "pytest"]},
}
# Test files that import flax, which depends on jax itself (it cannot be installed next
# to jaxlite without pulling the real jax in): skipped whole, in both runs.
NEEDS_OTHER_PACKAGES = (
    "optax/transforms/_accumulation_test.py",
    "optax/_src/linear_algebra_test.py",
)
# Tests of JAX internals (see docs/ecosystem.md, "What is excluded"): node ids, deselected
# in both runs.
JAX_INTERNALS = ()


def _venv_python(root, name):
  return pathlib.Path(root) / name / "bin" / "python"


def setup_venv(root, name):
  """Create venv ``name`` under ``root`` with its runtime, the suites and their test deps."""
  python = _venv_python(root, name)
  if not python.exists():
    subprocess.run([sys.executable, "-m", "venv", str(python.parent.parent)], check=True)
  pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
  subprocess.run(pip + TEST_DEPS + RUNTIMES[name]["install"], check=True)
  subprocess.run(pip + ["--no-deps"] + list(SUITES.values()), check=True)
  return python


def site_packages(python):
  out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       check=True, capture_output=True, text=True)
  return pathlib.Path(out.stdout.strip())


def test_files(site, suites, files):
  """The ``*_test.py`` files of ``suites`` inside ``site``, relative to it."""
  if files:
    return list(files)
  found = []
  for suite in suites:
    for path in sorted((site / suite).rglob("*_test.py")):
      rel = path.relative_to(site).as_posix()
      if rel not in NEEDS_OTHER_PACKAGES:
        found.append(rel)
  return found


def run_suite(python, name, site, files, args, xml_path):
  """Run pytest over ``files`` under runtime ``name``; returns the summary counts."""
  cmd = [str(python)] + RUNTIMES[name]["runner"] + [
      "-q", "-p", "no:cacheprovider", "-o", "addopts=", f"--junitxml={xml_path}",
      "--continue-on-collection-errors",
      "--rootdir", str(site)]
  if args.timeout:
    cmd += [f"--timeout={args.timeout}"]
  if args.k:
    cmd += ["-k", args.k]
  for node in JAX_INTERNALS:
    cmd += ["--deselect", node]
  cmd += files
  env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONDONTWRITEBYTECODE="1")
  env.pop("PYTHONPATH", None)
  print(f"[{name}] {' '.join(cmd[:8])} ... ({len(files)} files)", flush=True)
  log = pathlib.Path(xml_path).with_suffix(".log")
  with open(log, "w") as out:   # written as it runs, so a long run can be watched
    subprocess.run(cmd, cwd=site, env=env, stdout=out, stderr=subprocess.STDOUT)
  return parse_counts(log.read_text()), log


def parse_counts(stdout):
  """The counts of pytest's closing line, e.g. ``12 failed, 1833 passed, 62 skipped``."""
  counts = collections.Counter()
  lines = [l for l in stdout.splitlines() if re.search(r"\d+ (passed|failed|error)", l)]
  if lines:
    for n, what in re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)",
                              lines[-1]):
      counts["error" if what.startswith("error") else what] += int(n)
  return counts


def failures(xml_path):
  """``{nodeid: first line of the message}`` of the failed and erroring tests in a junit file."""
  out = {}
  if not pathlib.Path(xml_path).exists():
    return out
  for case in ET.parse(xml_path).getroot().iter("testcase"):
    for tag in ("failure", "error"):
      bad = case.find(tag)
      if bad is not None:
        node = f"{case.get('classname')}::{case.get('name')}"
        message = (bad.get("message") or bad.text or "").strip().splitlines()
        out[node] = message[0][:200] if message else tag
  return out


def report(counts):
  keys = ("passed", "failed", "error", "skipped")
  for name, c in counts.items():
    print(f"{name:8s} " + ", ".join(f"{c[k]} {k}" for k in keys))


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--root", default="/work/venvs/ecosystem")
  parser.add_argument("--only", choices=sorted(RUNTIMES), action="append")
  parser.add_argument("--suites", nargs="+", default=list(SUITES), choices=list(SUITES))
  parser.add_argument("--files", nargs="+", help="test files relative to site-packages")
  parser.add_argument("-k", help="pytest -k expression")
  parser.add_argument("--timeout", type=int, default=300, help="seconds per test (0: none)")
  parser.add_argument("--setup-only", action="store_true")
  parser.add_argument("--skip-setup", action="store_true")
  parser.add_argument("--tag", default="", help="suffix of the result files' names")
  parser.add_argument("--no-run", action="store_true",
                      help="run nothing: report on the result files of earlier runs")
  parser.add_argument("--failures", action="store_true",
                      help="list the tests that fail on jaxlite but pass on JAX, grouped by message")
  args = parser.parse_args(argv)
  names = args.only or list(RUNTIMES)
  counts = {}
  for name in [] if args.no_run else names:
    python = _venv_python(args.root, name) if args.skip_setup else setup_venv(args.root, name)
    if args.setup_only:
      continue
    site = site_packages(python)
    xml = pathlib.Path(args.root) / f"{name}{args.tag}.xml"
    counts[name], log = run_suite(python, name, site, test_files(site, args.suites, args.files),
                                  args, xml)
    print(f"[{name}] log: {log}", flush=True)
  if args.no_run:
    counts = {name: parse_counts((pathlib.Path(args.root) / f"{name}{args.tag}.log").read_text())
              for name in names if (pathlib.Path(args.root) / f"{name}{args.tag}.log").exists()}
  report(counts)
  if args.failures:
    # The JAX run's results from this call, or else from the last call that made them.
    root = pathlib.Path(args.root)
    base = failures(root / f"jax{args.tag}.xml" if (root / f"jax{args.tag}.xml").exists()
                    else root / "jax.xml")
    groups = collections.defaultdict(list)
    for node, message in failures(pathlib.Path(args.root) / f"jaxlite{args.tag}.xml").items():
      if node not in base:
        groups[message].append(node)
    for message, nodes in sorted(groups.items(), key=lambda kv: -len(kv[1])):
      print(f"\n{len(nodes):4d}  {message}")
      for node in nodes[:3]:
        print(f"        {node}")


if __name__ == "__main__":
  main()
