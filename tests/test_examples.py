"""The scripts in examples/ run to completion and print what they promise.

Each script runs in a fresh interpreter (`sys.executable`) with the repository on
PYTHONPATH, the way a user runs it; the training examples run with `--quick`.
"""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
LOG2_JAXPR = """{ lambda ; a:f32[]. let
    b:f32[] = log a
    c:f32[] = log 2.0:f32[]
    d:f32[] = div b c
  in (d,) }"""


def run_script(relpath, *args, timeout=240, code=None, as_jax=False):
  """Run an example (or ``code``); ``as_jax``: through ``python -m jaxlite``, so that the
  program's ``import jax`` gets jaxlite."""
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(
      [ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]), MPLBACKEND="Agg")
  cmd = [sys.executable] + (["-m", "jaxlite"] if as_jax else []) + (
      ["-c", code] if code else [os.path.join(EXAMPLES, relpath)])
  proc = subprocess.run(cmd + list(args), cwd=ROOT, env=env, capture_output=True,
                        text=True, timeout=timeout)
  return proc


def run_ok(relpath, *args, timeout=240, as_jax=False):
  proc = run_script(relpath, *args, timeout=timeout, as_jax=as_jax)
  assert proc.returncode == 0, f"{relpath} failed:\n{proc.stdout}\n{proc.stderr}"
  return proc.stdout


def number_after(label, out):
  match = re.search(re.escape(label) + r"\s*([-+0-9.eE]+)", out)
  assert match, f"no line with {label!r} in:\n{out}"
  return float(match.group(1))


# -- the tutorials (examples/tutorials/): the outputs the seed documents show

def test_tutorial_000_prints_the_log2_jaxpr_without_the_side_effect():
  out = run_ok("tutorials/tutorial_000_jaxpr.py")
  assert out.count(LOG2_JAXPR) == 2, out
  assert "printed x:" in out and "float32[]" in out.split("printed x:")[1].splitlines()[0]


def test_tutorial_001_arrays_grads_and_immutability():
  out = run_ok("tutorials/tutorial_001_numpy_terminator.py")
  lines = out.splitlines()
  assert lines[0] == "[0 1 2 3 4 5 6 7 8 9]"
  assert "[2. 4. 6. 8.]" in lines
  assert any(l.startswith("TypeError:") and "has_aux=True" in l for l in lines), out
  assert any(l.startswith("TypeError:") and ".at[" in l for l in lines), out
  assert lines[-2:] == ["[123   2   3]", "[1 2 3]"], lines[-2:]


def test_tutorial_002_traces_once_per_shape_and_keeps_loops_as_loops():
  out = run_ok("tutorials/tutorial_002_jit_cache.py")
  calls = out.split("Call 1 (new shape):\n")[1].split("First call")[0]
  assert calls == (" tracing with shape=(4,) dtype=float32\nCall 2 (same shape):\n"
                   "Call 3 (new shape):\n tracing with shape=(5,) dtype=float32\n"), calls
  assert "TracerBoolConversionError:" in out
  assert "sharp=True: [0.  0.5 2. ]" in out
  assert "len= 3 mean=2.000" in out and "len= 2 mean=1.500" in out
  assert "stablehlo" in out


# -- the examples (examples/*.py)

def test_per_example_gradients_match_a_python_loop():
  out = run_ok("per_example_gradients.py", "--quick")
  assert "per-example gradients match the loop: OK" in out
  assert number_after("max |vmap - loop| =", out) < 1e-5
  assert "{'W': (32, 20, 32), 'b': (32, 32)}" in out
  assert re.search(r"vmap [0-9.]+ ms, Python loop [0-9.]+ ms", out), out


def test_scan_rnn_loss_falls_below_the_baseline():
  out = run_ok("scan_rnn.py", "--quick")
  assert "a scan of length 40" in out
  initial = number_after("step    0: test loss", out)
  final = number_after("final test loss:", out)
  baseline = number_after("baseline (predict the last value):", out)
  assert final < initial / 100 and final < baseline / 10, out


def test_mnist_digits_mlp_reaches_95_percent_and_saves_the_loss_curve(tmp_path):
  for module in ("sklearn", "tqdm", "matplotlib"):
    pytest.importorskip(module)
  png = tmp_path / "loss.png"
  out = run_ok("mnist_digits_mlp.py", "--quick", "--out", str(png))
  assert number_after("test accuracy:", out) > 95.0, out
  assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_digits_convnet_stax_reaches_90_percent():
  pytest.importorskip("sklearn")
  out = run_ok("digits_convnet_stax.py", "--quick")
  assert number_after("test accuracy:", out) > 90.0, out


# The numbers examples/flax_nnx.py prints on JAX 0.10.2 with flax 0.12.8 and optax 0.2.8
# (recorded with `python examples/flax_nnx.py` on the real jax, CPU).
FLAX_NNX_JAX = {"step   0: loss": 1.264928, "step   5: loss": 0.709371,
                "step  10: loss": 0.707109, "step  15: loss": 0.574680,
                "step  20: loss": 0.488601, "step  25: loss": 0.478959,
                "step  29: loss": 0.457858, "eval loss:": 0.460512}


def needs(example, *modules):
  """Skip unless ``modules`` are installed: the test extra installs them (its ``models``
  extra), so only an environment installed without it skips, and never CI."""
  return pytest.mark.skipif(
      any(importlib.util.find_spec(m) is None for m in modules) and not os.environ.get("CI"),
      reason=f"the {example} example needs {' and '.join(modules)}, which "
             f"{'is' if len(modules) == 1 else 'are'} not installed")


def assert_prints_losses(out, expected, rel):
  """Each ``label: number`` of ``expected`` printed in ``out``, to ``rel``."""
  for label, want in expected.items():
    # float32 rounding: the last printed digit may differ, as training accumulates it
    assert number_after(label, out) == pytest.approx(want, rel=rel), (label, out)


@needs("flax.nnx", "flax", "optax")
def test_flax_nnx_example_prints_jaxs_losses():
  out = run_ok("flax_nnx.py", as_jax=True, timeout=600)
  assert_prints_losses(out, FLAX_NNX_JAX, rel=1e-4)
  assert "optimizer steps: 30" in out


# What examples/numpyro_regression.py --warmup 30 --samples 20 prints on JAX 0.10.2 with
# numpyro 0.22.0 (recorded with the real jax, CPU): each parameter's posterior mean and std.
# The default 300 + 300 steps drift apart (a 1.0074 on JAX, 1.0052 on jaxlite): float32
# rounding flips one of NUTS's tree decisions after a hundred or so steps, and from there
# the chains differ; the short chain stays on JAX's path.
NUMPYRO_JAX = {"a": (0.996177, 0.052429), "b": (2.102231, 0.108190),
               "s": (0.546508, 0.048488)}


@needs("numpyro", "numpyro")
def test_numpyro_regression_example_prints_jaxs_posterior():
  out = run_ok("numpyro_regression.py", "--warmup", "30", "--samples", "20", as_jax=True,
               timeout=600)
  printed = {name: (float(mean), float(std)) for name, mean, std
             in re.findall(r"^(\w): mean (\S+) std (\S+)$", out, re.MULTILINE)}
  assert printed.keys() == NUMPYRO_JAX.keys(), out
  for name, want in NUMPYRO_JAX.items():
    # float32 rounding in the leapfrog steps moves the last printed digit or two
    assert printed[name] == pytest.approx(want, rel=1e-4), (name, out)
  assert "samples: 20, divergences: 0" in out


# The numbers examples/equinox_mlp.py prints on JAX 0.10.2 with equinox 0.13.8 and optax
# 0.2.8 (recorded with `python examples/equinox_mlp.py` on the real jax, CPU).
EQUINOX_MLP_JAX = {"step   0: loss": 0.586089, "step   5: loss": 0.477902,
                   "step  10: loss": 0.461817, "step  15: loss": 0.446870,
                   "step  20: loss": 0.423636, "step  25: loss": 0.398229,
                   "step  29: loss": 0.375553, "final loss:": 0.369994}


@needs("equinox", "equinox", "optax")
def test_equinox_mlp_example_prints_jaxs_losses():
  out = run_ok("equinox_mlp.py", as_jax=True, timeout=600)
  assert_prints_losses(out, EQUINOX_MLP_JAX, rel=1e-5)


def test_examples_name_the_extra_to_install_when_a_package_is_missing():
  # Block the import of sklearn, then run the script as __main__.
  script = os.path.join(EXAMPLES, "mnist_digits_mlp.py")
  code = (f"import sys, runpy; sys.modules['sklearn'] = None; sys.argv = [{script!r}]; "
          f"runpy.run_path({script!r}, run_name='__main__')")
  proc = run_script(None, code=code, timeout=60)
  assert proc.returncode != 0
  assert "pip install -e '.[examples]'" in proc.stderr, proc.stderr
