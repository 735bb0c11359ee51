"""Run JAX libraries' own test suites on real JAX and on jaxlite, and print both counts.

    python tools/ecosystem.py                      # set up both venvs (once), run everything
    python tools/ecosystem.py --only jaxlite -k adam --suites optax
    python tools/ecosystem.py --files optax/_src/alias_test.py --failures
    python tools/ecosystem.py --skip-setup --no-run --suites equinox --per-file

Two virtual environments are made under ``--root`` (default ``/work/venvs/ecosystem``):
``jax`` with jax==0.10.2 and jaxlib==0.10.2, and ``jaxlite`` with this checkout installed
in editable mode. Both get every suite's library ``--no-deps`` (so the real jax never
enters jaxlite's venv) plus the pure-Python libraries the suites import. A suite's tests
come from its wheel (site-packages), its sdist, or its public repository at the released
tag (``SUITES``). They run with ``python -m pytest`` (JAX) and ``python -m jaxlite -m
pytest`` (jaxlite); the files and tests each suite leaves out are deselected in both
runs, so the counts compare like with like (``docs/ecosystem.md`` says why each is out).
"""
import argparse
import collections
import dataclasses
import os
import pathlib
import re
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET

REPO = pathlib.Path(__file__).resolve().parent.parent
MIRROR = "/work/.mirror"   # where the search library's ``fetch`` puts repositories


@dataclasses.dataclass(frozen=True)
class Suite:
  """One library's own test suite.

  ``package`` is pip's requirement, installed ``--no-deps``; ``deps`` are what the library
  and its tests import besides jax, installed with dependencies. ``source`` says where the
  tests are: ``"wheel"`` (inside site-packages, under ``tests``), ``"sdist"`` (the unpacked
  source distribution of ``package``), or ``"git:<path of a git directory>@<tag>"`` (a
  repository at the released tag, e.g. one that the search library's ``fetch`` brought).
  ``extra_packages`` are other libraries built on jax that the suite imports (optax for
  flax), installed ``--no-deps`` like ``package`` so that pip never brings the real jax.
  ``tests`` is the folder, relative to that root, whose files matching ``pattern`` run.
  ``uses`` names other suites whose libraries the tests import (lineax's import equinox):
  their packages and deps are installed too, since pip must not fetch them with the jax
  they require.
  ``env`` holds ``(name, value)`` pairs the test runs see.
  """
  package: str
  tests: str
  source: str = "wheel"
  pattern: str = "*_test.py"
  deps: tuple = ()
  extra_packages: tuple = ()   # libraries over jax that the suite needs, also --no-deps
  env: tuple = ()
  skip_files: tuple = ()    # files left out of both runs (relative to the root)
  deselect: tuple = ()      # node ids left out of both runs
  uses: tuple = ()          # names of other suites whose libraries the tests import


SUITES = {
    "optax": Suite("optax==0.2.8", "optax", deps=("toolz", "scikit-learn", "dm-tree"),
                   # They import flax, which would pull the real jax into jaxlite's venv.
                   skip_files=("optax/transforms/_accumulation_test.py",
                               "optax/_src/linear_algebra_test.py")),
    "chex": Suite("chex==0.1.92", "chex", deps=("toolz", "cloudpickle", "dm-tree")),
    "flax": Suite("flax==0.12.8", "tests", source="sdist",
                  deps=("msgpack", "rich", "pyyaml", "treescope", "cloudpickle", "einops",
                        "opt_einsum",
                        # orbax-checkpoint's own dependencies, jax aside
                        "etils[epath,epy]", "tensorstore", "nest_asyncio", "aiofiles",
                        "humanize", "protobuf", "simplejson", "psutil"),
                  uses=("optax",), extra_packages=("orbax-checkpoint==0.12.8",)),
    # The sdist holds only test/'s top level (infer/ and contrib/ are in the repository,
    # whose mirror lacks the 0.22.0 tag); funsor (no jax dependency) serves test_pickle and
    # test_handlers, optax and flax (which depend on jax) stay out, so their tests skip.
    "numpyro": Suite("numpyro==0.22.0", "test", source="sdist", pattern="test_*.py",
                     deps=("multipledispatch", "tqdm", "opt_einsum", "funsor"),
                     # examples/ is not in the sdist, and the datasets are downloaded.
                     skip_files=("test/test_examples.py", "test/test_example_utils.py")),
    # Patrick Kidger's libraries ship no tests in their wheels or sdists: the tests come
    # from each repository at its released tag (the newest releases that accept jax 0.10.2).
    "equinox": Suite("equinox==0.13.8", "tests", pattern="test_*.py", uses=("optax",),
                     source=f"git:{MIRROR}/patrick-kidger+equinox/repo@v0.13.8",
                     deps=("jaxtyping", "wadler_lindig", "typing_extensions", "beartype")),
    "lineax": Suite("lineax==0.1.1", "tests", pattern="test_*.py", uses=("equinox",),
                    source=f"git:{MIRROR}/patrick-kidger+lineax/repo@v0.1.1"),
    "optimistix": Suite("optimistix==0.1.0", "tests", pattern="test_*.py",
                        uses=("lineax", "diffrax", "optax"),
                        source=f"git:{MIRROR}/patrick-kidger+optimistix/repo@v0.1.0"),
    "diffrax": Suite("diffrax==0.7.2", "test", pattern="test_*.py", deps=("tqdm",),
                     uses=("lineax", "optimistix", "optax"),
                     source=f"git:{MIRROR}/patrick-kidger+diffrax/repo@v0.7.2"),
    "jaxopt": Suite("jaxopt==0.8.5", "tests",
                    source=f"git:{MIRROR}/google+jaxopt/repo@jaxopt-v0.8.5",
                    deps=("scikit-learn", "cvxpy", "toolz"), uses=("optax", "chex")),
    "distrax": Suite("distrax==0.1.9", "distrax",
                     deps=("tfp-nightly==0.26.0.dev20261027", "toolz", "dm-tree", "jmp",
                           "tabulate", "mock"),
                     uses=("chex",), extra_packages=("dm-haiku==0.0.17",)),
    # Only the jax backend's tests: the numpy backend's are not jax's, the others need
    # frameworks that are not installed (they skip).
    "einops": Suite("einops==0.8.2", "einops/tests", pattern="test_*.py",
                    env=(("EINOPS_TEST_BACKENDS", "jax"),),
                    # It imports flax, which would pull the real jax into jaxlite's venv.
                    deselect=("einops/tests/test_layers.py::test_flax_layers",)),
    "jaxtyping": Suite("jaxtyping==0.3.11", "test", pattern="test_*.py",
                       source=f"git:{MIRROR}/patrick-kidger+jaxtyping/repo@v0.3.11",
                       deps=("wadler_lindig", "typeguard==2.13.3", "beartype", "cloudpickle",
                             "pytest-asyncio"),
                       uses=("equinox",),
                       # IPython's extension and Apple's mlx: neither is jax, nor installed.
                       skip_files=("test/test_ipython_extension.py",),
                       deselect=("test/test_decorator.py::test_mlx",)),
}
# What every suite imports besides jax, numpy and itself.
TEST_DEPS = ["absl-py", "typing_extensions", "pytest", "numpy", "scipy", "ml_dtypes",
             "pytest-timeout"]
RUNTIMES = {
    "jax": {"install": ["jax==0.10.2", "jaxlib==0.10.2"], "runner": ["-m", "pytest"]},
    "jaxlite": {"install": ["-e", str(REPO)], "runner": ["-m", "jaxlite", "-m", "pytest"]},
}


def _venv_python(root, name):
  return pathlib.Path(root) / name / "bin" / "python"


def with_uses(suites):
  """``suites`` and every suite they use, directly or through another."""
  found, todo = [], list(suites)
  while todo:
    s = todo.pop()
    if s not in found:
      found.append(s)
      todo.extend(SUITES[s].uses)
  return found


def setup_venv(root, name, suites):
  """Create venv ``name`` under ``root`` with its runtime, the suites and their deps."""
  suites = with_uses(suites)
  python = _venv_python(root, name)
  if not python.exists():
    subprocess.run([sys.executable, "-m", "venv", str(python.parent.parent)], check=True)
  pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
  deps = sorted({d for s in suites for d in SUITES[s].deps} | set(TEST_DEPS))
  subprocess.run(pip + deps + RUNTIMES[name]["install"], check=True)
  packages = sorted({p for s in suites for p in (SUITES[s].package,) + SUITES[s].extra_packages})
  subprocess.run(pip + ["--no-deps"] + packages, check=True)
  return python


def site_packages(python):
  out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       check=True, capture_output=True, text=True)
  return pathlib.Path(out.stdout.strip())


def test_root(root, name, suite, site):
  """The folder the suite's tests run from: site-packages, or its unpacked sources."""
  if suite.source == "wheel":
    return site
  where = pathlib.Path(root) / "sources" / name
  if not where.exists():
    where.mkdir(parents=True)
    if suite.source == "sdist":
      download = pathlib.Path(root) / "sdists"
      subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                      "--no-binary", ":all:", "-d", str(download), suite.package], check=True)
      stem = suite.package.split("==")[0].replace("-", "_")
      archive = next(p for p in download.glob("*.tar.gz")
                     if p.name.lower().replace("-", "_").startswith(stem.lower() + "_"))
      with tarfile.open(archive) as tar:   # one top folder, name-version, which we drop
        for member in tar.getmembers():
          member.name = member.name.split("/", 1)[1] if "/" in member.name else ""
        tar.extractall(where, [m for m in tar.getmembers() if m.name], filter="data")
    elif suite.source.startswith("git:"):
      git_dir, tag = suite.source[4:].rsplit("@", 1)
      git = ["git", "--git-dir", git_dir]
      # The tests folder and the top-level files (pytest's configuration): a fetched
      # mirror may lack the repository's largest files (datasets under docs/), which would
      # make an archive of the whole tree fail, and the library comes from site-packages.
      top = subprocess.run(git + ["ls-tree", "--name-only", tag], check=True,
                           capture_output=True, text=True).stdout.split()
      files = [f for f in top if subprocess.run(
          git + ["cat-file", "-t", f"{tag}:{f}"], capture_output=True,
          text=True).stdout.strip() == "blob"]
      archive = subprocess.run(git + ["archive", tag, suite.tests] + files,
                               check=True, capture_output=True).stdout
      subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    else:
      raise ValueError(f"suite {name}: unknown source {suite.source!r}")
  return where


def test_files(where, suite, files):
  """The test files of ``suite`` under ``where``, relative to it."""
  if files:
    return list(files)
  found = sorted(p.relative_to(where).as_posix() for p in (where / suite.tests).rglob(suite.pattern))
  return [f for f in found if f not in suite.skip_files]


def run_suite(python, runtime, where, suite, files, args, xml_path):
  """Run pytest over ``files`` under ``runtime``; returns the summary counts and the log."""
  cmd = [str(python)] + RUNTIMES[runtime]["runner"] + [
      "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-o", "junit_family=xunit1",
      f"--junitxml={xml_path}", "--continue-on-collection-errors", "--rootdir", str(where)]
  if args.timeout:
    cmd += [f"--timeout={args.timeout}"]
  if args.k:
    cmd += ["-k", args.k]
  for node in suite.deselect:
    cmd += ["--deselect", node]
  cmd += files
  env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONDONTWRITEBYTECODE="1", **dict(suite.env))
  env.pop("PYTHONPATH", None)
  print(f"[{runtime}] {' '.join(cmd[:8])} ... ({len(files)} files in {where})", flush=True)
  log = pathlib.Path(xml_path).with_suffix(".log")
  with open(log, "w") as out:   # written as it runs, so a long run can be watched
    subprocess.run(cmd, cwd=where, env=env, stdout=out, stderr=subprocess.STDOUT)
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


def outcomes(xml_path):
  """``{(file, nodeid): (outcome, first line of the message)}`` from a junit file."""
  out = {}
  if not pathlib.Path(xml_path).exists():
    return out
  for case in ET.parse(xml_path).getroot().iter("testcase"):
    node = f"{case.get('classname')}::{case.get('name')}"
    outcome, message = "passed", ""
    for tag, name in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
      found = case.find(tag)
      if found is not None:
        lines = (found.get("message") or found.text or "").strip().splitlines()
        outcome, message = name, (lines[0][:200] if lines else tag)
        break
    out[(case.get("file") or case.get("classname"), node)] = (outcome, message)
  return out


def per_file(results):
  """A markdown table: for each test file, each runtime's passed / failed+errors / skipped."""
  names = list(results)
  files = sorted({f for r in results.values() for f, _ in r})
  print("| file | " + " | ".join(f"{n} passed / failed / skipped" for n in names) + " |")
  print("| --- |" + " --- |" * len(names))
  for file in files:
    cells = []
    for name in names:
      c = collections.Counter(o for (f, _), (o, _) in results[name].items() if f == file)
      cells.append(f"{c['passed']} / {c['failed'] + c['error']} / {c['skipped']}")
    print(f"| `{file}` | " + " | ".join(cells) + " |")


def report(counts):
  keys = ("passed", "failed", "error", "skipped")
  for name, c in counts.items():
    print(f"{name:16s} " + ", ".join(f"{c[k]} {k}" for k in keys))


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--root", default="/work/venvs/ecosystem")
  parser.add_argument("--only", choices=sorted(RUNTIMES), action="append")
  parser.add_argument("--suites", nargs="+", default=["optax", "chex"], choices=list(SUITES))
  parser.add_argument("--files", nargs="+", help="test files relative to the suite's root")
  parser.add_argument("-k", help="pytest -k expression")
  parser.add_argument("--timeout", type=int, default=300, help="seconds per test (0: none)")
  parser.add_argument("--setup-only", action="store_true")
  parser.add_argument("--skip-setup", action="store_true")
  parser.add_argument("--tag", default="", help="suffix of the result files' names")
  parser.add_argument("--no-run", action="store_true",
                      help="run nothing: report on the result files of earlier runs")
  parser.add_argument("--failures", action="store_true",
                      help="list the tests that fail on jaxlite but pass on JAX, grouped by message")
  parser.add_argument("--per-file", action="store_true",
                      help="print a markdown table of each test file's counts on each runtime")
  args = parser.parse_args(argv)
  root = pathlib.Path(args.root)
  names = args.only or list(RUNTIMES)
  result = lambda name, suite, ext: root / f"{name}-{suite}{args.tag}.{ext}"
  counts = {}
  for name in [] if args.no_run else names:
    python = (_venv_python(root, name) if args.skip_setup
              else setup_venv(root, name, args.suites))
    if args.setup_only:
      continue
    site = site_packages(python)
    for s in args.suites:
      suite = SUITES[s]
      where = test_root(root, s, suite, site)
      counts[f"{name} {s}"], log = run_suite(python, name, where, suite,
                                            test_files(where, suite, args.files), args,
                                            result(name, s, "xml"))
      print(f"[{name}] log: {log}", flush=True)
  if args.no_run:
    counts = {f"{name} {s}": parse_counts(result(name, s, "log").read_text())
              for name in names for s in args.suites if result(name, s, "log").exists()}
  report(counts)
  results = {name: {k: v for s in args.suites for k, v in outcomes(result(name, s, "xml")).items()}
             for name in names}
  if args.per_file:
    per_file(results)
  if args.failures:
    groups = collections.defaultdict(list)
    for key, (outcome, message) in results.get("jaxlite", {}).items():
      if outcome in ("failed", "error") and results.get("jax", {}).get(key, ("passed",))[0] not in ("failed", "error"):
        groups[message].append(key[1])
    for message, nodes in sorted(groups.items(), key=lambda kv: -len(kv[1])):
      print(f"\n{len(nodes):4d}  {message}")
      for node in nodes[:3]:
        print(f"        {node}")


if __name__ == "__main__":
  main()
