"""Small programs are compiled for the XLA CPU tier without parallel task partitions
(``xla.UNSPLIT_BELOW``, ``xla.work``): a fast path, so each case checks the values against
an analytic answer, the same program compiled with partitions allowed gives the same
values, and XLA's own dump of the optimized program shows the partitions gone."""
import glob
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src import tiers
from jaxlite._src.backends import xla

pytestmark = pytest.mark.skipif(not tiers.xla_available() or xla.platform() != "cpu",
                                reason="needs XLA's CPU plugin")
two_cpus = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux and two CPUs (with one, XLA never splits a program)")


def _tanh_cubed_hessian(x):
  # d2/dx2 tanh(x)**3 = 6 t s**2 - 6 t**3 s, with t = tanh x and s = 1 - t**2
  t = np.tanh(x.astype(np.float64))
  s = 1 - t * t
  return np.diag(6 * t * s * s - 6 * t ** 3 * s)


def test_work_counts_elements_multiply_adds_and_loop_bodies_once():
  x = np.ones((10, 20), np.float32)
  elementwise = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(x)
  assert xla.work(elementwise.jaxpr) == 2 * 200
  dot = jax.make_jaxpr(lambda a, b: a @ b)(x, np.ones((20, 5), np.float32))
  assert xla.work(dot.jaxpr) == 10 * 5 * 20
  loop = jax.make_jaxpr(lambda x: lax.fori_loop(0, 1000, lambda i, y: jnp.sin(y), x))(x)
  assert 200 <= xla.work(loop.jaxpr) < 1000 * 200


@two_cpus
@pytest.mark.parametrize("n", [3, 100])
def test_small_programs_compiled_unsplit_match_the_analytic_hessian(n, monkeypatch):
  x = np.linspace(-1.5, 1.5, n, dtype=np.float32)
  h = jax.hessian(lambda x: jnp.sum(jnp.tanh(x) ** 3))
  assert xla.work(jax.make_jaxpr(h)(x).jaxpr) < xla.UNSPLIT_BELOW
  unsplit = np.asarray(jax.jit(h, backend="xla")(x))
  monkeypatch.setattr(xla, "UNSPLIT_BELOW", 0)   # the same program, split as XLA likes
  split = np.asarray(jax.jit(h, backend="xla")(x))
  np.testing.assert_allclose(unsplit, _tanh_cubed_hessian(x), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(unsplit, split, rtol=1e-6, atol=1e-7)


_DUMP_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import jaxlite as jax, jaxlite.numpy as jnp
    if sys.argv[1] == "hessian":   # W8: XLA splits its loop in two when it may
      x = np.linspace(-1.0, 1.0, 100, dtype=np.float32)
      f = jax.hessian(lambda x: jnp.sum(jnp.tanh(x) ** 3))
    else:
      x = np.linspace(-1.0, 1.0, 1 << 20, dtype=np.float32)
      f = lambda x: jnp.sin(x) * jnp.cos(x) + jnp.tanh(x) * x[::-1]
    np.asarray(jax.jit(f, backend="xla")(x))
""")


def _partitions_in_dump(kind, tmp_path) -> int:
  dump = tmp_path / kind
  env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={dump} --xla_dump_hlo_as_text",
             JAXLITE_PERSISTENT_CACHE="0")
  subprocess.run([sys.executable, "-c", _DUMP_SCRIPT, kind], env=env, check=True,
                 timeout=300)
  texts = [open(p).read() for p in glob.glob(f"{dump}/*after_optimizations.txt")]
  assert texts, "XLA wrote no optimized program"
  return sum(t.count("outer_dimension_partitions") for t in texts)


@two_cpus
def test_xla_splits_a_large_program_and_not_a_small_one(tmp_path):
  assert _partitions_in_dump("large", tmp_path) > 0     # 5 million element operations
  assert _partitions_in_dump("hessian", tmp_path) == 0  # 0.2 million

