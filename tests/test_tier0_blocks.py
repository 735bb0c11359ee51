"""Tier 0's blocked regions (``backends/numpy/blocks.py``): runs of elementwise ufuncs on
large arrays are evaluated in cache-sized blocks on threads. Each program here is compiled
with the regions (``jaxlite_tier0_blocks``) and without, run on the same inputs with 1-8
threads and several block sizes, and must give the same bits, dtypes and shapes as the
unblocked code; and both are checked against the same computation written in NumPy.
"""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.backends.numpy import blocks
from jaxlite._src.backends.numpy import codegen

# NumPy warns about the inf/nan edge values; XLA (and tier 0's filter) compute them silently
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

N = blocks.MIN_SIZE
ODD = 3 * blocks.BLOCK + 7   # not a multiple of the block


def _compile(f, *args, regions=True):
  closed = jax.make_jaxpr(f)(*args)
  with jax.config.override("jaxlite_tier0_blocks", regions):
    return codegen.compile_jaxpr(closed)


def _bits(a):
  a = np.asarray(a)
  return a.dtype, a.shape, np.ascontiguousarray(a).view(np.uint8).tobytes()


def _check(f, *args, regions=1, threads=(1, 2, 3, 8)):
  """Run ``f``'s tier-0 code with blocked regions and without: same bits every time.
  ``regions`` is how many blocked regions the code must have. Returns the outputs."""
  plain, plain_src = _compile(f, *args, regions=False)
  blocked, src = _compile(f, *args)
  assert "_run_blocks" not in plain_src
  assert src.count("_run_blocks(") == regions, src
  want = [_bits(o) for o in plain(*args)]
  for n in threads:
    with jax.config.override("jaxlite_tier0_threads", n):
      assert [_bits(o) for o in blocked(*args)] == want, n
  return plain(*args)


def _assert_same(got, want):
  """Equal to NumPy's own result, dtype and bits (NaNs where NumPy has them)."""
  got, want = np.asarray(got), np.asarray(want)
  assert got.dtype == want.dtype and got.shape == want.shape
  np.testing.assert_array_equal(got, want)


def _assert_bits(got, want):
  assert _bits(got) == _bits(want)


def _floats(n, dtype=np.float32, seed=0):
  """Ordinary values with NaN, infinities, signed zeros and extremes sprinkled in."""
  rng = np.random.default_rng(seed)
  x = (rng.standard_normal(n) * 3).astype(dtype)
  info = np.finfo(dtype)
  edges = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, info.max, -info.max, info.tiny,
                    info.eps, 1e4, -1e4], dtype)
  x[rng.integers(0, n, 200)] = rng.choice(edges, 200)
  return x


def _heavy(x):
  y = x
  for _ in range(5):
    y = jnp.sin(y) * jnp.cos(y) + jnp.tanh(y)
  return y


def _heavy_np(x):
  y = x
  for _ in range(5):
    y = np.sin(y) * np.cos(y) + np.tanh(y)
  return y


@pytest.mark.parametrize("n", [N, N + 1, ODD, 200_003])
def test_heavy_is_bit_identical_at_sizes_around_and_off_the_block(n):
  x = _floats(n)
  (out,) = _check(_heavy, x)
  _assert_same(out, _heavy_np(x))


def test_below_the_threshold_nothing_is_blocked():
  x = _floats(N - 1)
  (out,) = _check(_heavy, x, regions=0)
  _assert_same(out, _heavy_np(x))


def test_every_block_size_gives_the_same_bits(monkeypatch):
  """Elementwise ops do not depend on where a block starts or ends (among block sizes
  that are multiples of the vector widths, as ``blocks.BLOCK`` is)."""
  x = _floats(ODD, seed=1)
  blocked, _ = _compile(_heavy, x)
  want = _bits(_heavy_np(x))
  for size in (64, 1024, 4096, 3 * 4096, blocks.BLOCK, 2 * blocks.BLOCK, 16 * ODD):
    monkeypatch.setattr(blocks, "BLOCK", size)
    for n in (1, 2, 5):
      with jax.config.override("jaxlite_tier0_threads", n):
        assert _bits(blocked(x)[0]) == want, (size, n)


def test_nan_inf_through_the_float_templates():
  def f(x, y):
    a = jnp.exp(x) / (y * y + 1.0)
    b = jnp.maximum(jnp.log(jnp.abs(x)), jnp.sqrt(y))
    c = jnp.minimum(jnp.log1p(a), -b) - x
    return c * c, jnp.square(b) + 0.5 * c

  x, y = _floats(ODD, seed=2), _floats(ODD, seed=3)
  outs = _check(f, x, y)
  # tier 0's float32 exp, log and log1p are the float64 values rounded once, as XLA's
  wide = lambda fun, v: fun(v, dtype=np.float64).astype(np.float32)
  a = wide(np.exp, x) / (y * y + np.float32(1))
  b = np.maximum(wide(np.log, np.abs(x)), np.sqrt(y))
  c = np.minimum(wide(np.log1p, a), -b) - x
  _assert_same(outs[0], c * c)
  _assert_same(outs[1], np.square(b) + np.float32(0.5) * c)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [N, N + 7, ODD, N + 63])
def test_nan_against_nan_picks_the_same_nan(dtype, n, x64):
  """Where both operands are NaNs of opposite signs, NumPy's vector body and its scalar
  tail return different ones: blocks keep each element in the same one."""
  x64(True)
  neg, pos = -np.array(np.nan, dtype), np.array(np.nan, dtype)
  x = np.where(np.arange(n) % 3 == 0, neg, pos)
  y = np.where(np.arange(n) % 5 == 0, pos, neg)

  def f(x, y):
    return (x + y) * (y - x), jnp.maximum(x * y, y) + jnp.minimum(y, x)

  outs = _check(f, x, y)
  _assert_bits(outs[0], (x + y) * (y - x))
  _assert_bits(outs[1], np.maximum(x * y, y) + np.minimum(y, x))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.uint32])
def test_integers_wrap_as_numpy_does(dtype):
  def f(x, y):
    return jnp.maximum(x * y + x, -y) - jnp.minimum(y, x) * 3, x ** 3, jnp.abs(x) * (x > y)

  info = np.iinfo(dtype)
  rng = np.random.default_rng(4)
  x = rng.integers(info.min, info.max, ODD, endpoint=True, dtype=dtype)
  y = rng.integers(info.min, info.max, ODD, endpoint=True, dtype=dtype)
  outs = _check(f, x, y, regions=2)   # the bool -> int conversion splits the last output
  three = dtype(3)
  _assert_same(outs[0], np.maximum(x * y + x, -y) - np.minimum(y, x) * three)
  _assert_same(outs[1], x * x * x)
  _assert_same(outs[2], np.abs(x) * (x > y).astype(dtype))


def test_comparisons_and_conversions():
  """A comparison's bool output stays in its region. A dtype conversion (not a ufunc
  template) of an input is computed ahead of the region; one of a region value ends the
  region, and its result starts the next."""
  def f(x, i):
    gt = jnp.sin(x) > 0.25
    both = (x < 2.0) == gt
    y = i.astype(jnp.float32) * jnp.cos(x)
    return both, y + x, gt.astype(jnp.float32) * y

  x = _floats(N + 3, seed=5)
  i = np.random.default_rng(6).integers(-1000, 1000, N + 3).astype(np.int32)
  both, y, z = _check(f, x, i, regions=2)
  gt = np.sin(x) > np.float32(0.25)
  _assert_same(both, (x < 2) == gt)
  _assert_same(y, i.astype(np.float32) * np.cos(x) + x)
  _assert_same(z, gt.astype(np.float32) * (i.astype(np.float32) * np.cos(x)))


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.complex64, np.complex128])
def test_other_float_and_complex_dtypes(dtype, x64):
  x64(True)

  def f(x):
    return jnp.sin(x) * jnp.cos(x) + jnp.tanh(x) * 2.0 - x * x

  x = _floats(ODD, np.float64, seed=7).astype(dtype)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * _floats(ODD, np.float64, seed=8).astype(dtype)
  (out,) = _check(f, x)
  two = np.dtype(dtype).type(2)
  _assert_same(out, np.sin(x) * np.cos(x) + np.tanh(x) * two - np.multiply(x, x))


def test_weakly_typed_scalars_and_scalar_operands():
  """Python scalars (weak) and 0-d operands keep the array's dtype, blocked or not."""
  def f(x, s):
    return (x * s + 1.5) * jnp.sin(s) - 3 * x, jnp.float32(2) * x + s

  x = _floats(ODD, seed=9)
  s = np.float32(0.75)
  outs = _check(f, x, s)
  _assert_same(outs[0], (x * s + np.float32(1.5)) * np.sin(s) - np.float32(3) * x)
  _assert_same(outs[1], np.float32(2) * x + s)


def test_outputs_that_are_also_intermediates_are_materialised():
  def f(x):
    a = jnp.sin(x)
    b = a * 2.0
    c = b + a
    return a, c * b, b, c

  x = _floats(ODD, seed=10)
  outs = _check(f, x)
  a = np.sin(x)
  b = a * np.float32(2)
  c = b + a
  for got, want in zip(outs, (a, c * b, b, c)):
    _assert_same(got, want)


def test_values_read_outside_a_region_are_materialised():
  """A reduction in the middle reads a region value: that value is kept whole, and what
  follows the reduction forms a second region."""
  def f(x):
    a = jnp.sin(x) * x
    s = jnp.sum(a)
    return jnp.cos(a) * s + a

  x = _floats(N + 5, seed=11)
  x = np.where(np.isfinite(x), x, 0).astype(np.float32)
  (out,) = _check(f, x, regions=2)
  a = np.sin(x) * x
  np.testing.assert_allclose(out, np.cos(a) * np.sum(a, dtype=np.float32) + a, rtol=1e-3)


def test_independent_equations_do_not_split_a_region():
  """A broadcast that reads nothing of the open region is computed ahead of it."""
  def f(x, v):
    a = jnp.sin(x)
    full = jnp.broadcast_to(v, x.shape)
    return a * full + jnp.cos(a)

  x, v = _floats(ODD, seed=12), np.float32(1.25)
  (out,) = _check(f, x, v)
  a = np.sin(x)
  _assert_same(out, a * v + np.cos(a))


def test_two_dimensional_and_non_contiguous_operands():
  def f(x, y):
    return jnp.tanh(x) * y - jnp.sin(y)

  rng = np.random.default_rng(13)
  x = rng.standard_normal((301, 257)).astype(np.float32)
  y = rng.standard_normal((257, 301)).astype(np.float32).T   # a strided view
  (out,) = _check(f, x, y)
  _assert_same(out, np.tanh(x) * y - np.sin(y))
  (out,) = _check(f, x, np.ascontiguousarray(y))
  _assert_same(out, np.tanh(x) * y - np.sin(y))


def test_operands_are_not_written():
  x = _floats(ODD, seed=14)
  before = x.copy()
  _check(lambda x: jnp.sin(x) * jnp.cos(x) + x, x)
  np.testing.assert_array_equal(x, before)


def test_jit_on_tier0_blocks_and_matches_numpy():
  x = _floats(200_003, seed=15)
  f = jax.jit(_heavy, backend="numpy")
  assert "_run_blocks(" in f.lower(x).as_text()
  _assert_same(f(x), _heavy_np(x))


def test_concurrent_callers_share_the_pool():
  x = _floats(ODD, seed=16)
  blocked, _ = _compile(_heavy, x)
  want = _bits(_heavy_np(x))
  got = []

  def call():
    got.append(_bits(blocked(x)[0]))

  with jax.config.override("jaxlite_tier0_threads", 3):
    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
      t.start()
    for t in threads:
      t.join()
  assert got == [want] * 6


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True, None])
def test_threads_option_rejects_what_is_not_a_positive_count(bad):
  with pytest.raises(ValueError, match="jaxlite_tier0_threads"):
    jax.config.update("jaxlite_tier0_threads", bad)


def test_helper_threads_take_blocks_while_the_caller_computes():
  """With 2 threads a helper computes blocks at the same time as the caller: each one's
  first block waits at a barrier that only both together pass."""
  barrier, seen = threading.Barrier(2, timeout=30), set()

  def block(s, x, o):
    name = threading.current_thread().name
    if name not in seen:
      seen.add(name)
      barrier.wait()
    np.multiply(x[s], 2, out=o[s])

  x = np.arange(4 * blocks.BLOCK + 5, dtype=np.float32)
  lay = blocks.Layout(x.shape, x.size, (x.dtype,))
  with jax.config.override("jaxlite_tier0_threads", 2):
    (out,) = blocks.run(block, lay, (x,), ())
  assert len(seen) == 2
  _assert_same(out, x * 2)


def test_scratch_buffers_are_the_threads_and_reused_across_calls():
  """A block's intermediates go to its thread's scratch buffers: the same buffers call
  after call, and none of them is an output."""
  x = _floats(ODD, seed=11)
  blocked, src = _compile(_heavy, x)
  assert "out=t0" in src, src
  with jax.config.override("jaxlite_tier0_threads", 1):
    first = blocked(x)[0]
    pool = {d: list(bufs) for d, bufs in blocks._thread_scratch.pool.items()}
    second = blocked(x)[0]
  assert {d: list(bufs) for d, bufs in blocks._thread_scratch.pool.items()} == pool
  assert all(not np.shares_memory(first, b) for bufs in pool.values() for b in bufs)
  _assert_bits(first, second)
  _assert_same(first, _heavy_np(x))


def test_a_region_run_inside_another_gets_its_own_scratch():
  """A region evaluated while the thread is inside another one's block (a finalizer
  running jitted code, say) must not write into the outer block's scratch buffers."""
  x = _floats(ODD, seed=12)
  inner, _ = _compile(_heavy, x)
  want_inner = _heavy_np(x)
  lay = blocks.Layout(x.shape, x.size, (x.dtype,), ((x.dtype, 0),))
  nested = []

  def block(s, x, o, t0):
    np.multiply(x[s], 3, out=t0)
    if not nested:   # t0 holds this block's value while the inner region runs
      nested.append(inner(x)[0])
    np.add(t0, 1, out=o[s])

  with jax.config.override("jaxlite_tier0_threads", 1):
    (out,) = blocks.run(block, lay, (x,), ())
  _assert_same(out, x * np.float32(3) + np.float32(1))
  _assert_same(nested[0], want_inner)


def test_one_thread_computes_every_block_on_the_caller():
  names = []

  def block(s, x, o):
    names.append(threading.current_thread().name)
    o[s] = x[s]

  x = np.arange(3 * blocks.BLOCK + 1, dtype=np.int32)
  lay = blocks.Layout(x.shape, x.size, (x.dtype,))
  with jax.config.override("jaxlite_tier0_threads", 1):
    (out,) = blocks.run(block, lay, (x,), ())
  assert names == [threading.current_thread().name] * 3   # the remainder joins the last
  _assert_same(out, x)


def test_options_are_read_from_the_environment():
  code = ("import jaxlite; c = jaxlite.config; "
          "print(c.jaxlite_tier0_threads, c.jaxlite_tier0_blocks)")
  env = dict(os.environ, JAXLITE_TIER0_THREADS="3", JAXLITE_TIER0_BLOCKS="0")
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, check=True).stdout.split()
  assert out == ["3", "False"]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_tier0_threads_default_to_the_cpus_the_process_may_use():
  """A process confined to one CPU (``taskset -c 0``) runs tier 0's blocks on one thread,
  as XLA sizes its pools by the CPUs it may use, not the machine's count."""
  code = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
          "import jaxlite; print(jaxlite.config.jaxlite_tier0_threads)")
  env = {k: v for k, v in os.environ.items() if k != "JAXLITE_TIER0_THREADS"}
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=120)
  assert out.returncode == 0, out.stderr
  assert out.stdout.strip() == "1"
