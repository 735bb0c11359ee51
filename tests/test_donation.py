"""Buffer donation (``jit(donate_argnums=..., donate_argnames=...)``), ``Array.delete``.

Expected messages, warnings and which arguments end up deleted were recorded from JAX
0.10.2 on CPU; numbers are checked against NumPy and against the same call without
donation, on both tiers (tier 0 deletes the donated Arrays as XLA does, so results and
visible state do not depend on the tier).
"""
import ctypes
import pickle
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src import tiers

needs_xla = pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin installed")
TIERS = ["numpy", pytest.param("xla", marks=needs_xla)]

DELETED = "Array has been deleted with shape=float32[3]."   # JAX 0.10.2, RuntimeError
UNUSABLE = ("Some donated buffers were not usable: {}.\nSee an explanation at "
            "https://docs.jax.dev/en/latest/faq.html#buffer-donation.")


def _warnings(fn):
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = fn()
  return out, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("tier", TIERS)
def test_donated_argument_is_deleted_and_every_use_raises_as_in_jax(tier):
  x = jnp.arange(3.0)
  f = jax.jit(lambda x: x + 1, donate_argnums=0, backend=tier)
  y, caught = _warnings(lambda: f(x))
  assert caught == []
  np.testing.assert_array_equal(y, [1.0, 2.0, 3.0])
  assert x.is_deleted() and not y.is_deleted()
  # JAX 0.10.2: these raise RuntimeError(DELETED) ...
  for use in [repr, str, np.asarray, lambda a: a + 1, lambda a: a[0], jnp.sum,
              lambda a: float(a[0]), lambda a: a.tolist(), pickle.dumps, lambda a: f"{a}",
              lambda a: jax.jit(lambda b: b * 2, backend=tier)(a),
              lambda a: jax.grad(lambda b: b.sum())(a), lambda a: a.copy()]:
    # (a jitted use also notes that jit's frames left the traceback, as in JAX)
    with pytest.raises(RuntimeError, match=rf"^{DELETED.replace('[', '.').replace(']', '.')}"
                                           r"(\n-{20}\nFor simplicity, JAX has removed .*)?$"):
      use(x)
  # ... these keep answering ...
  assert x.shape == (3,) and x.dtype == np.float32 and len(x) == 3
  assert str(x.aval) == "float32[3]"
  x.delete()   # deleting again is allowed
  # ... and waiting on it is an XLA error (JaxRuntimeError, a RuntimeError)
  with pytest.raises(RuntimeError, match="BlockHostUntilReady\\(\\) called on deleted or "
                                         "donated buffer"):
    x.block_until_ready()
  with pytest.raises(RuntimeError, match="INVALID_ARGUMENT: Array has been deleted."):
    x.is_ready()


@pytest.mark.parametrize("tier", TIERS)
def test_a_donated_array_passed_to_a_cached_jitted_call_is_a_value_error(tier):
  """JAX 0.10.2: a call that hits the compile cache hands the consumed buffer to XLA,
  which rejects it (ValueError); a call that traces first, or an Array deleted with
  ``delete()``, raises the RuntimeError."""
  invalid = ("INVALID_ARGUMENT: Invalid buffer passed to Execute() as argument {} to "
             "replica 0: INVALID_ARGUMENT: Buffer has been deleted or donated.")
  f = jax.jit(lambda a: a + 1, donate_argnums=0, backend=tier)
  g = jax.jit(lambda a, b: a * b, backend=tier)
  g(jnp.ones(3), jnp.ones(3))
  x = jnp.arange(3.0)
  f(x)
  for call, index in [(lambda: f(x), 0), (lambda: g(jnp.ones(3), x), 1),
                      (lambda: g(x, jnp.ones(3)), 0)]:
    with pytest.raises(ValueError) as info:
      call()
    assert str(info.value) == invalid.format(index)
  with pytest.raises(RuntimeError, match="Array has been deleted"):
    jax.jit(lambda a: a - 1, backend=tier)(x)
  y = jnp.arange(3.0)
  y.delete()
  for call in [lambda: f(y), lambda: g(y, y)]:
    with pytest.raises(RuntimeError, match="Array has been deleted"):
      call()


@pytest.mark.parametrize("tier", TIERS)
def test_results_with_and_without_donation_agree(tier):
  """The donating path (slow path, XLA writing into the inputs) against the plain jit
  (fast path) and NumPy, over a loop that feeds each result back in, as training does."""
  def step(params, batch):
    w, b = params
    grad_w = batch.T @ (batch @ w + b)
    return (w - 0.01 * grad_w, b * 0.5 + 1.0), jnp.sum(w)

  rng = np.random.default_rng(0)
  w0 = rng.normal(size=(300, 300)).astype(np.float32)   # 360 KB: a device-owned buffer
  b0 = rng.normal(size=(300,)).astype(np.float32)
  batch = jnp.asarray(rng.normal(size=(8, 300)).astype(np.float32))
  plain = jax.jit(step, backend=tier)
  donating = jax.jit(step, donate_argnums=0, backend=tier)
  p_plain = p_don = (jnp.asarray(w0), jnp.asarray(b0))
  w_np, b_np = w0.astype(np.float64), b0.astype(np.float64)
  bn = np.asarray(batch, np.float64)
  for _ in range(4):
    p_plain, s_plain = plain(p_plain, batch)
    previous = p_don
    p_don, s_don = donating(p_don, batch)
    assert all(a.is_deleted() for a in previous) and not batch.is_deleted()
    s_np = w_np.sum()
    w_np, b_np = w_np - 0.01 * (bn.T @ (bn @ w_np + b_np)), b_np * 0.5 + 1.0
    np.testing.assert_allclose(s_don, s_np, rtol=1e-4)
  # (to rounding: tier 0's matrix products may run on one BLAS thread in one call and two
  # in another, which sums in another order on some OpenBLAS kernels: Haswell's)
  np.testing.assert_allclose(p_don[0], p_plain[0], rtol=1e-5, atol=1e-5)
  np.testing.assert_array_equal(p_don[1], p_plain[1])
  np.testing.assert_allclose(s_don, s_plain, rtol=1e-5)
  np.testing.assert_allclose(p_don[0], w_np, rtol=1e-3, atol=1e-3)
  np.testing.assert_allclose(p_don[1], b_np, rtol=1e-6)
  np.testing.assert_array_equal(batch, np.asarray(batch))   # the non-donated input intact


@pytest.mark.parametrize("tier", TIERS)
def test_which_donations_are_used_and_the_warning_for_the_others(tier):
  """JAX 0.10.2: a donated argument aliases an output of its shape and dtype, else one of
  its size; with none left it stays alive and the call warns (once per compile)."""
  def run(fn, *args, **kw):
    return _warnings(lambda: jax.jit(fn, backend=tier, **kw)(*args))

  x = jnp.arange(3.0)
  out, caught = run(lambda a: a.sum(), x, donate_argnums=0)
  assert float(out) == 3.0 and not x.is_deleted()
  assert caught == [(UserWarning, UNUSABLE.format("float32[3]"))]

  x, z = jnp.arange(3.0), jnp.ones(3)
  out, caught = run(lambda a, b: a + b, x, z, donate_argnums=(0, 1))
  np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
  assert x.is_deleted() and not z.is_deleted()
  assert caught == [(UserWarning, UNUSABLE.format("float32[3]"))]

  x, k = jnp.ones(3), jnp.ones(3, jnp.int32)
  _, caught = run(lambda a, b: (a.sum(), b.sum()), x, k, donate_argnums=(0, 1))
  assert caught == [(UserWarning, UNUSABLE.format("float32[3], int32[3]"))]
  assert not x.is_deleted() and not k.is_deleted()

  for fn, shape in [(lambda a: a.astype(jnp.int32), (3,)), (lambda a: a.reshape(3, 2), (2, 3)),
                    (lambda a: a, (3,))]:
    x = jnp.ones(shape)
    _, caught = run(fn, x, donate_argnums=0)
    assert caught == [] and x.is_deleted()

  x = jnp.arange(3.0)   # an argument the function does not read is pruned, not donated
  out, caught = run(lambda a, b: b * 2, x, jnp.ones(3), donate_argnums=0)
  assert caught == [] and not x.is_deleted()
  out, caught = run(lambda a, b: b * 2, x, jnp.ones(3), donate_argnums=0, keep_unused=True)
  assert x.is_deleted()

  f = jax.jit(lambda a: a.sum(), donate_argnums=0, backend=tier)
  (_, caught1), (_, caught2) = (_warnings(lambda: f(jnp.ones(3))) for _ in range(2))
  assert len(caught1) == 1 and caught2 == []


@pytest.mark.parametrize("tier", TIERS)
def test_donating_arguments_by_position_name_pytree_and_with_statics(tier):
  def jit(fn, **kw):
    return jax.jit(fn, backend=tier, **kw)

  x, z = jnp.arange(3.0), jnp.ones(3)
  out = jit(lambda d: {"a": d["a"] + 1, "b": d["b"] * 2}, donate_argnums=0)({"a": x, "b": z})
  np.testing.assert_array_equal(out["a"], [1, 2, 3])
  assert x.is_deleted() and z.is_deleted()   # every leaf of a donated argument

  x = jnp.arange(3.0)
  np.testing.assert_array_equal(
      jit(lambda a, n: a + n, static_argnums=1, donate_argnums=0)(x, 2), [2, 3, 4])
  assert x.is_deleted()
  x = jnp.arange(3.0)
  jit(lambda n, a: a + n, static_argnums=0, donate_argnums=1)(2, x)
  assert x.is_deleted()

  x = jnp.arange(3.0)
  jit(lambda a, b: a + b, donate_argnames="a")(x, jnp.ones(3))
  assert x.is_deleted()
  x = jnp.arange(3.0)
  jit(lambda a, b: a + b, donate_argnames="b")(jnp.ones(3), b=x)
  assert x.is_deleted()
  x = jnp.arange(3.0)
  jit(lambda a, b: a + b, donate_argnums=1)(jnp.ones(3), b=x)   # argnums reach keywords
  assert x.is_deleted()
  x = jnp.arange(3.0)
  jit(lambda *a: a[0] + a[1], donate_argnums=1)(jnp.ones(3), x)
  assert x.is_deleted()
  x = jnp.arange(3.0)
  jit(lambda a, *, k: a + k, donate_argnames="k")(jnp.ones(3), k=x)
  assert x.is_deleted()

  # both given: each used as given, not filled from the other (JAX: z stays alive)
  f = jit(lambda a, b: a + b, donate_argnums=0, donate_argnames="b")
  x, z = jnp.arange(3.0), jnp.ones(3)
  f(x, z)
  assert x.is_deleted() and not z.is_deleted()

  x, z = jnp.arange(3.0), jnp.ones(3)   # names alone are filled in as positions too
  jit(lambda a, b: a + b, donate_argnames="b")(x, z)
  assert z.is_deleted() and not x.is_deleted()

  # the same function called positionally and by keyword: two signatures, two plans
  g = jit(lambda a, b: a * b, donate_argnums=(), donate_argnames="b")
  x, z = jnp.arange(3.0), jnp.full(3, 2.0)
  np.testing.assert_array_equal(g(x, z), [0, 2, 4])
  assert not z.is_deleted() and not x.is_deleted()
  np.testing.assert_array_equal(g(x, b=z), [0, 2, 4])
  assert z.is_deleted() and not x.is_deleted()


@pytest.mark.parametrize("tier", TIERS)
def test_donating_values_that_are_not_arrays_changes_nothing(tier):
  n = np.arange(3, dtype=np.float32)
  f = jax.jit(lambda a: a + 1, donate_argnums=0, backend=tier)
  np.testing.assert_array_equal(f(n), [1, 2, 3])
  np.testing.assert_array_equal(n, [0, 1, 2])
  big = np.arange(100_000, dtype=np.float32)   # large enough to be shared with the device
  np.testing.assert_array_equal(f(big), big + 1)
  np.testing.assert_array_equal(big[:3], [0, 1, 2])
  out = f(2.0)
  assert float(out) == 3.0 and out.weak_type


@pytest.mark.parametrize("tier", TIERS)
def test_donation_inside_another_trace_has_no_effect(tier):
  inner = jax.jit(lambda a: a + 1, donate_argnums=0, backend=tier)
  x = jnp.arange(3.0)
  np.testing.assert_array_equal(jax.jit(lambda a: inner(a) * 2, backend=tier)(x), [2, 4, 6])
  assert not x.is_deleted()


@pytest.mark.parametrize("tier", TIERS)
def test_an_array_donated_and_used_by_the_same_call_is_an_error(tier):
  # JAX 0.10.2 raises JaxRuntimeError (a RuntimeError) and deletes nothing
  cases = [
      ((0,), "Attempt to use a buffer that was previously donated in the same call to "
             "Execute() (flattened argument 1, replica 0, partition 0, first use: 0). Toy "
             "example for this bug: `f(donate(a), a)`."),
      ((1,), "Attempt to donate a buffer which is also used by the same call to Execute() "
             "(flattened argument 1, replica 0, partition 0, first use: 0). Toy example for "
             "this bug: `f(a, donate(a))`."),
      ((0, 1), "Attempt to donate the same buffer twice in Execute() (flattened argument 1, "
               "replica 0, partition 0, first use: 0). Toy example for this bug: "
               "`f(donate(a), donate(a))`."),
  ]
  for nums, message in cases:
    x = jnp.arange(3.0)
    f = jax.jit(lambda a, b: (a + b, a - b), donate_argnums=nums, backend=tier)
    with pytest.raises(RuntimeError) as info:
      f(x, x)
    assert str(info.value) == "INVALID_ARGUMENT: " + message
    assert not x.is_deleted()


def test_bad_donation_arguments_raise_as_in_jax():
  with pytest.raises(ValueError, match=r"^Jitted function has donate_argnums=\(3,\), but only "
                                       r"accepts 1 positional arguments.$"):
    jax.jit(lambda a: a, donate_argnums=3)
  with pytest.raises(ValueError, match=r"^Jitted function has invalid argnames \{'q'\} in "
                                       r"donate_argnames. Function does not take these args.$"):
    jax.jit(lambda a: a, donate_argnames="q")
  with pytest.raises(ValueError, match=r"^static_argnames and donate_argnames cannot "
                                       r"intersect. Argument names \{'a'\} appear in both "
                                       r"static_argnames and donate_argnames$"):
    jax.jit(lambda a, b: a, static_argnums=0, donate_argnums=0)
  with pytest.raises(TypeError, match="'str' object cannot be interpreted as an integer"):
    jax.jit(lambda a, b: a, donate_argnums="a")


def test_delete_and_is_deleted():
  x = jnp.arange(3.0)
  assert not x.is_deleted()
  x.delete()
  assert x.is_deleted()
  with pytest.raises(RuntimeError, match="Array has been deleted with shape=float32.3.."):
    print(x)
  with pytest.raises(RuntimeError, match="Array has been deleted"):
    jax.device_put(x) + 1
  s = jnp.array(2.0)
  s.delete()
  with pytest.raises(RuntimeError, match=r"^Array has been deleted with shape=float32\[\]\.$"):
    repr(s)
  # on a tracer, JAX 0.10.2 raises ConcretizationTypeError naming the method
  for name in ("delete", "is_deleted"):
    with pytest.raises(jax.errors.ConcretizationTypeError,
                       match=rf"The {name}\(\) method was called on traced array with shape "
                             r"float32\[3\]."):
      jax.jit(lambda a, name=name: getattr(a, name)())(jnp.ones(3))


@pytest.mark.parametrize("tier", TIERS)
def test_a_compiled_call_donates_too(tier):
  x = jnp.arange(3.0)
  compiled = jax.jit(lambda a: a + 1, donate_argnums=0, backend=tier).lower(x).compile()
  np.testing.assert_array_equal(compiled(x), [1, 2, 3])
  assert x.is_deleted()


def test_device_put_with_donate_keeps_the_array_on_cpu():
  x = jnp.arange(3.0)   # JAX 0.10.2 on CPU: not deleted (same or other CPU device)
  np.testing.assert_array_equal(jax.device_put(x, donate=True), [0, 1, 2])
  assert not x.is_deleted()


@needs_xla
def test_lowering_marks_donated_parameters_as_jax_does():
  """The parameter attributes of JAX 0.10.2's lowering of the same functions."""
  def params(fn, *args, nums):
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")   # the unusable donation's warning: tested above
      text = jax.jit(fn, donate_argnums=nums, backend="xla").lower(*args).as_text()
    return next(line for line in text.splitlines() if "func.func public @main" in line)

  ones = jnp.ones(3)
  line = params(lambda a, b: (a + 1, b.sum()), ones, ones, nums=(0, 1))
  assert ("%arg0: tensor<3xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<3xf32>)"
          in line)
  line = params(lambda a, b: (a + 1, b + 1), ones, ones, nums=1)
  assert "%arg0: tensor<3xf32>, %arg1: tensor<3xf32> {tf.aliasing_output = 0 : i32})" in line
  line = params(lambda a: a.astype(jnp.int32), ones, nums=0)
  assert "%arg0: tensor<3xf32> {jax.buffer_donor = true})" in line
  line = params(lambda a: a.astype(jnp.float16), jnp.ones(4), nums=0)
  assert "%arg0: tensor<4xf32> {jax.buffer_donor = true})" in line
  line = params(lambda a, b: (a + 1, b + 1), ones, jnp.ones(3, jnp.int32), nums=(0, 1))
  assert ("%arg0: tensor<3xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<3xi32> "
          "{tf.aliasing_output = 1 : i32})" in line)
  line = params(lambda a: (a.sum(), a[:2]), ones, nums=0)
  assert "%arg0: tensor<3xf32>)" in line
  assert "aliasing" not in jax.jit(lambda a: a + 1, backend="xla").lower(ones).as_text()


def _address(array):
  return array.unsafe_buffer_pointer()


@pytest.mark.parametrize("tier", TIERS)
def test_the_output_takes_the_donated_arguments_buffer(tier):
  # as JAX 0.10.2 on CPU: the output's unsafe_buffer_pointer() is the donated argument's
  # (tier 0 writes it there; XLA aliases the buffers of arguments it computed itself)
  make = jax.jit(lambda: jnp.arange(3.0), backend=tier)
  f = jax.jit(lambda a, b: a + b, donate_argnums=1, backend=tier)
  a, b = make(), make()
  b_at = b.unsafe_buffer_pointer()
  y = f(a, b)
  np.testing.assert_array_equal(y, [0.0, 2.0, 4.0])
  assert b.is_deleted() and not a.is_deleted()
  assert y.unsafe_buffer_pointer() == b_at
  z = f(a, y)   # and again, from the buffer the last call left it in
  np.testing.assert_array_equal(z, [0.0, 3.0, 6.0])
  assert z.unsafe_buffer_pointer() == b_at
  with pytest.raises(jax.errors.JaxRuntimeError,
                     match="INVALID_ARGUMENT: Buffer has been deleted or donated."):
    b.unsafe_buffer_pointer()


def test_tier_0_reuses_a_donated_buffer_only_where_nothing_else_sees_it():
  f = jax.jit(lambda a: a + 1, donate_argnums=0, backend="numpy")
  expected = np.arange(4.0, dtype=np.float32)
  x = jnp.arange(4.0)   # a scalar's broadcast or a view gets a buffer of its own first
  x_at = x.unsafe_buffer_pointer()
  assert f(x).unsafe_buffer_pointer() == x_at
  # a NumPy view of the argument keeps its values: the output gets a new buffer
  x = jnp.asarray(expected)
  x_at, view = x.unsafe_buffer_pointer(), np.asarray(x)
  y = f(x)
  np.testing.assert_array_equal(view, expected)
  np.testing.assert_array_equal(y, expected + 1)
  assert y.unsafe_buffer_pointer() != x_at
  # an output that is a view of the donated argument keeps its values too
  g = jax.jit(lambda a: (a.reshape(2, 2), a * 2), donate_argnums=0, backend="numpy")
  x = jnp.asarray(expected)
  x.unsafe_buffer_pointer()
  r, d = g(x)
  np.testing.assert_array_equal(r, expected.reshape(2, 2))
  np.testing.assert_array_equal(d, expected * 2)
  # so does a Compiled call
  x = jnp.asarray(expected)
  x_at = x.unsafe_buffer_pointer()
  y = f.lower(x).compile()(x)
  assert x.is_deleted() and y.unsafe_buffer_pointer() == x_at
  np.testing.assert_array_equal(y, expected + 1)


def test_unsafe_buffer_pointer_is_the_address_of_the_data():
  x = jnp.arange(5, dtype=jnp.int32)
  at = x.unsafe_buffer_pointer()
  assert at == x.unsafe_buffer_pointer()
  assert (ctypes.c_int32 * 5).from_address(at)[:] == [0, 1, 2, 3, 4]


@needs_xla
def test_xla_writes_the_output_into_the_donated_buffer_and_nothing_else():
  make = jax.jit(lambda: jnp.arange(100_000.0), backend="xla")
  step = jax.jit(lambda a, b: (a * 2 + b, b + 0), donate_argnums=0, backend="xla")
  x, b = make(), make()
  x_at, b_at = _address(x.block_until_ready()), _address(b.block_until_ready())
  y, b2 = step(x, b)
  assert _address(y) == x_at           # the output lives in the donated buffer
  assert x.is_deleted() and not b.is_deleted() and _address(b) == b_at
  expected = np.arange(100_000.0, dtype=np.float32)
  np.testing.assert_array_equal(y, expected * 3)
  np.testing.assert_array_equal(b, expected)
  np.testing.assert_array_equal(b2, expected)

  # a buffer whose memory NumPy already sees (a large value read to the host) is copied,
  # not overwritten: the view taken before the call keeps its values
  c = make()
  view = np.asarray(c)
  y = jax.jit(lambda a: a + 1, donate_argnums=0, backend="xla")(c)
  assert c.is_deleted()
  np.testing.assert_array_equal(view, expected)
  np.testing.assert_array_equal(y, expected + 1)

  # an Array over host memory shared with the device (zero copy) is not written either
  host = np.arange(100_000, dtype=np.float32)
  a = jnp.asarray(host)
  a_view = np.asarray(a)
  y = jax.jit(lambda v: v * 2, donate_argnums=0, backend="xla")(a)
  np.testing.assert_array_equal(a_view, expected)
  np.testing.assert_array_equal(host, expected)
  np.testing.assert_array_equal(y, expected * 2)


@needs_xla
def test_an_executable_with_donors_consumes_nothing_unless_asked():
  """Other callers of a donating executable (Compiled, the tier race, host execution)
  run it without donation: their inputs stay valid."""
  f = jax.jit(lambda a: a + 1, donate_argnums=0, backend="xla")
  f(jnp.arange(3.0))
  exe = next(iter(f._cache.values())).run.executable
  assert exe.loaded.donors == (0,)
  buf = jax.jit(lambda: jnp.arange(3.0), backend="xla")()._buf
  for _ in range(2):
    np.testing.assert_array_equal(exe.execute_device([buf])[0].to_numpy(), [1, 2, 3])
    np.testing.assert_array_equal(buf.to_numpy(), [0, 1, 2])
  np.testing.assert_array_equal(exe(np.arange(3, dtype=np.float32))[0], [1, 2, 3])


@needs_xla
def test_auto_policy_race_with_donation(monkeypatch):
  """Under the auto policy the tier race's XLA trials run after the call that started
  them deleted its donated arguments: they run on stand-ins and XLA still competes."""
  import time
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)
  f = jax.jit(lambda x: jnp.sin(x) * 2, donate_argnums=0)
  base = np.linspace(0, 1, 1000, dtype=np.float32)
  deadline = time.time() + 60
  while True:
    x = jnp.asarray(base)
    np.testing.assert_allclose(f(x), np.sin(base) * 2, rtol=1e-6)
    assert x.is_deleted()
    row = f.stats()[0]
    if row["tier_ms"] or time.time() > deadline:
      break
    time.sleep(0.01)
  assert set(row["tier_ms"]) == {"numpy", "xla"}, row


_PMAP_CASES = r'''
import ctypes, sys, warnings
import numpy as np
import jaxlite as jax, jaxlite.numpy as jnp
from jaxlite._src import tiers

UNUSABLE = ("Some donated buffers were not usable: float32[1,3].\nSee an explanation at "
            "https://docs.jax.dev/en/latest/faq.html#buffer-donation.")
assert jax.device_count() == 2
for tier in ["numpy"] + (["xla"] if tiers.xla_available() else []):
  make = jax.pmap(lambda a: a * 1, backend=tier)
  base = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  f = jax.pmap(lambda a: a + 1, donate_argnums=0, backend=tier)
  plain = jax.pmap(lambda a: a + 1, backend=tier)
  # JAX 0.10.2: an argument that must be resharded first is copied, so it stays alive ...
  x = jnp.asarray(base)
  y = f(x)
  assert not x.is_deleted()
  np.testing.assert_array_equal(y, base + 1)
  # ... one laid out as pmap takes it (a pmap output) is consumed, and results agree
  z = f(y)
  assert y.is_deleted() and not z.is_deleted()
  np.testing.assert_array_equal(z, plain(plain(jnp.asarray(base))))
  np.testing.assert_array_equal(z, base + 2)
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    x = make(base)
    out = jax.pmap(lambda a: a.sum(), donate_argnums=0, backend=tier)(x)
  np.testing.assert_array_equal(out, [3.0, 12.0])
  assert [str(w.message) for w in caught] == [UNUSABLE] and not x.is_deleted()
  x = make(base)
  jax.pmap(lambda n, a: a + n, static_broadcasted_argnums=0, donate_argnums=1,
           backend=tier)(2, x)
  assert x.is_deleted()
  x = make(base)   # donate_argnums name positional arguments only
  jax.pmap(lambda a, b: a + b, donate_argnums=1, backend=tier)(jnp.ones((2, 3)), b=x)
  assert not x.is_deleted()
  x = make(base)
  try:
    jax.pmap(lambda a, b: a + b, donate_argnums=0, backend=tier)(x, x)
    raise AssertionError("no error")
  except RuntimeError as e:
    assert str(e) == ("INVALID_ARGUMENT: Attempt to use a buffer that was previously donated "
                      "in the same call to Execute() (flattened argument 1, replica 0, "
                      "partition 0, first use: 0). Toy example for this bug: "
                      "`f(donate(a), a)`."), e
  assert not x.is_deleted()
try:
  jax.pmap(lambda a, n: a + n, static_broadcasted_argnums=1, donate_argnums=1)
  raise AssertionError("no error")
except ValueError as e:
  assert str(e) == "`static_argnums` [1] and `donate_argnums` [1] cannot intersect.", e

if tiers.xla_available():   # XLA writes each replica's output into its donated shard
  from jaxlite._src.backends.xla import pjrt

  def address(buf):
    a = pjrt._new(pjrt.UnsafePointerArgs, buffer=buf.handle)
    buf.api.check(buf.api.Buffer_UnsafePointer(ctypes.byref(a)))
    return a.buffer_pointer
  make = jax.pmap(lambda a: a * 1, backend="xla")
  step = jax.pmap(lambda a, b: (a * 2 + b, b), donate_argnums=0, backend="xla")
  big = np.arange(100_000, dtype=np.float32).reshape(2, -1)
  x, b = make(big), make(np.ones_like(big))
  x.block_until_ready()
  x_at = [address(p) for p in x._placed.pieces]
  b_at = [address(p) for p in b._placed.pieces]
  y, b2 = step(x, b)
  assert [address(p) for p in y._placed.pieces] == x_at
  assert [address(p) for p in b._placed.pieces] == b_at and not b.is_deleted()
  np.testing.assert_array_equal(y, big * 2 + 1)
  np.testing.assert_array_equal(b, 1)
print("pmap donation ok")
'''


def test_pmap_donation_on_two_devices():
  """pmap's donate_argnums, in a process with 2 CPU devices (JAX 0.10.2's behaviour)."""
  import os
  import pathlib
  import subprocess
  import sys
  root = pathlib.Path(__file__).resolve().parent.parent
  env = dict(os.environ, JAX_NUM_CPU_DEVICES="2", TF_CPP_MIN_LOG_LEVEL="2",
             PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
  env.pop("XLA_FLAGS", None)
  proc = subprocess.run([sys.executable, "-c", _PMAP_CASES], cwd=root, env=env,
                        capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
  assert proc.stdout.strip().endswith("pmap donation ok")


def test_auto_first_calls_watched_for_length_still_reuse_the_donated_buffer(monkeypatch):
  # under auto a first call is watched (tiers.LongCalls) while it runs; the watch must
  # hold none of its arguments, or tier 0's reference count sees the donated buffer as
  # shared and the output moves (equinox's test_buffer_donation_method)
  monkeypatch.setattr(tiers.Probe, "LONG_CALL", 60.0)
  x = jnp.asarray(np.random.default_rng(0).random(400_000).astype(np.float32))
  for _ in range(3):   # a new function each time: each first call is watched
    f = jax.jit(lambda b, x: (jnp.sort(x)[:2], b.at[0].add(1.0)), donate_argnums=0)
    b = jnp.zeros(1000)
    at = b.unsafe_buffer_pointer()
    _, b = f(b, x)
    assert b.unsafe_buffer_pointer() == at and float(b[0]) == 1.0
