"""Behaviours that flax 0.12.8's own tests (tests/linen, tests/core) found missing, each
checked against what JAX 0.10.2 gives (recorded with jax, jax.numpy as jnp, on CPU)."""
import contextlib
import functools
import traceback

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src import tiers
from jaxlite._src.base import traceback_util

S = jax.ShapeDtypeStruct
needs_xla = pytest.mark.skipif(not tiers.xla_available(), reason="needs the XLA tier")


def test_stages_take_shape_dtype_structs():
  # JAX 0.10.2: jit(f).trace/lower/eval_shape take ShapeDtypeStructs in place of arrays
  # (flax's tabulate lowers with them to count flops); a call does not.
  f = jax.jit(lambda x, y: x * 2 + y)
  args = (S((3,), jnp.float32), S((), jnp.float32, weak_type=True))
  assert str(f.trace(*args).jaxpr) == (
      "{ lambda ; a:f32[3] b:f32[]. let\n"
      "    c:f32[3] = mul a 2.0:f32[]\n"
      "    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n"
      "    e:f32[3] = add c d\n"
      "  in (e,) }")
  out = f.eval_shape(S((3,), jnp.int32), S((), jnp.float32, weak_type=True))
  assert (out.shape, out.dtype, out.weak_type) == ((3,), jnp.float32, True)
  np.testing.assert_array_equal(f.lower(*args).compile()(jnp.ones(3), 2.0), [4.0] * 3)
  key = jax.jit(lambda k: jax.random.uniform(k)).trace(S((), jax.random.key(0).dtype))
  (aval,) = key.jaxpr.in_avals
  assert aval.shape == () and aval.dtype == jax.random.key(0).dtype
  with pytest.raises(TypeError):
    f(*args)


def _vjp_of_key_and_int(w, k, i):
  out, vjp = jax.vjp(lambda w, k, i: jnp.sum(w * i) + jax.random.uniform(k), w, k, i)
  return vjp(out)


@needs_xla
def test_float0_on_the_xla_tier():
  # JAX 0.10.2 lowers float0 as i1 (a constant is dense<false>); cost_analysis of this
  # program counts 7 flops, and a call returns NumPy float0 zeros for it.
  f = jax.jit(lambda x, z: (x, z), backend="xla")
  z = np.zeros((2,), jax.dtypes.float0)
  text = f.lower(1.0, z).as_text()
  assert "tensor<2xi1>" in text
  x, out = f(1.0, z)
  assert float(x) == 1.0 and out.dtype == jax.dtypes.float0 and out.shape == (2,)
  g = jax.jit(_vjp_of_key_and_int, backend="xla")
  lowered = g.lower(S((3,), jnp.float32), jax.random.key(0), 3)
  assert "dense<false> : tensor<i1>" in lowered.as_text()
  assert lowered.cost_analysis()["flops"] > 0
  ct_w, ct_k, ct_i = g(jnp.ones(3), jax.random.key(0), 3)
  assert ct_k.dtype == jax.dtypes.float0 and ct_i.dtype == jax.dtypes.float0
  # JAX 0.10.2: ct_w = 3 * (9 + uniform(key(0)))
  np.testing.assert_allclose(np.asarray(ct_w), [29.843002] * 3, rtol=1e-5)


def test_clone_takes_key_arrays_of_any_shape():
  # JAX 0.10.2: random.clone is random_clone_p.bind, with no check of the shape (flax's
  # while_loop clones a (2,) key array), and a raw key comes back as an array
  keys = jax.random.split(jax.random.key(0), 3)
  cloned = jax.random.clone(keys)
  assert cloned.shape == (3,) and cloned.dtype == keys.dtype
  np.testing.assert_array_equal(jax.random.key_data(cloned),
                                [[1797259609, 2579123966], [928981903, 3453687069],
                                 [4146024105, 2718843009]])
  raw = jax.random.clone(np.array([0, 1], np.uint32))
  assert isinstance(raw, jax.Array)
  np.testing.assert_array_equal(raw, [0, 1])


def test_checkpoint_passes_positional_arguments_as_given():
  # a function whose functools.wraps signature (two parameters) is not its own (three):
  # JAX 0.10.2 calls it with the arguments as given (flax's lift.checkpoint does this)
  def two(a, b):
    pass

  @functools.wraps(two)
  def three(a, b, c):
    return jnp.sin(a) * b + c

  f = jax.checkpoint(three)
  np.testing.assert_allclose(float(f(1.0, 2.0, 3.0)), 4.682942, rtol=1e-6)
  np.testing.assert_allclose(float(jax.grad(f)(1.0, 2.0, 3.0)), 1.0806046, rtol=1e-6)
  g = jax.checkpoint(three, static_argnums=(2,))
  np.testing.assert_allclose(float(jax.grad(g)(1.0, 2.0, 3.0)), 1.0806046, rtol=1e-6)

  def kw(a, b=2.0):
    return a * b
  assert float(jax.grad(jax.checkpoint(kw))(3.0, b=4.0)) == 4.0
  assert float(jax.grad(jax.checkpoint(kw))(3.0)) == 2.0


def test_jit_with_static_argnums_and_argnames_infers_neither():
  # JAX 0.10.2 (api_util.infer_argnums_and_argnames): given both, each is taken as is;
  # here the signature (through functools.wraps) names `b` at position 1, which stays
  # dynamic, so the dict passed there need not be hashable.
  def shown(fingerprint, b):
    pass

  @functools.wraps(shown)
  def f(fingerprint, tree, *, b):
    return tree["x"] * 2 if b == "double" else tree["x"]

  jitted = jax.jit(f, static_argnums=(0,), static_argnames=["b"])
  assert float(jitted(1, {"x": jnp.float32(3.0)}, b="double")) == 6.0
  # one of them alone is filled in from the signature, as before
  g = jax.jit(lambda a, b: a * b, static_argnames=["b"])
  assert float(g(2.0, 3)) == 6.0 and g._static_argnums == (1,)


def _raises_in_jit(mode):
  def f(x):
    raise ValueError("boom")
  with _filtering(mode):
    try:
      jax.jit(f)(1.0)
    except ValueError as e:
      return e


def _shown(tb):
  return [f.f_code.co_name for f, _ in traceback.walk_tb(tb)
          if "__tracebackhide__" not in f.f_locals]


def test_traceback_filtering_at_jit():
  # JAX 0.10.2, an error raised by the function a jit traces, per jax_traceback_filtering:
  # off keeps jit's frames; tracebackhide marks them (shown: the caller and f);
  # remove_frames drops them and chains an UnfilteredStackTrace with the whole traceback;
  # quiet_remove_frames (auto outside IPython) drops them and adds this note.
  off = _raises_in_jit("off")
  assert len(_shown(off.__traceback__)) > 2 and off.__cause__ is None
  hide = _raises_in_jit("tracebackhide")
  assert _shown(hide.__traceback__) == ["_raises_in_jit", "f"]
  removed = _raises_in_jit("remove_frames")
  assert _shown(removed.__traceback__) == ["_raises_in_jit", "f"]
  assert isinstance(removed.__cause__, traceback_util.UnfilteredStackTrace)
  assert str(removed.__cause__).startswith("ValueError: boom\n\nThe stack trace below "
                                           "excludes JAX-internal frames.")
  assert len(_shown(removed.__cause__.__traceback__)) > 2
  quiet = _raises_in_jit("auto")
  assert _shown(quiet.__traceback__) == ["_raises_in_jit", "f"]
  assert quiet.__notes__ == [
      "--------------------\nFor simplicity, JAX has removed its internal frames from the "
      "traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to include "
      "these."]


def test_library_api_boundary_and_exclusions():
  # flax and equinox wrap their API in api_boundary and register their files: the
  # outermost boundary filters, an inner one lets the exception through (JAX 0.10.2)
  @traceback_util.api_boundary
  def outer():
    return inner()

  @traceback_util.api_boundary
  def inner():
    raise KeyError("k")

  with _filtering("quiet_remove_frames"), pytest.raises(KeyError) as info:
    outer()
  assert len(info.value.__notes__) == 1
  assert _shown(info.value.__traceback__)[-2:] == ["outer", "inner"]
  assert not traceback_util.include_filename(jax.jit.__code__.co_filename)
  assert traceback_util.include_filename(__file__)


@contextlib.contextmanager
def _filtering(mode):
  """``jax_traceback_filtering`` set to ``mode`` inside the block (JAX's and jaxlite's)."""
  old = jax.config.jax_traceback_filtering
  jax.config.update("jax_traceback_filtering", mode)
  try:
    yield
  finally:
    jax.config.update("jax_traceback_filtering", old)


def _boom(*args):
  raise ValueError("boom")


# JAX 0.10.2 in remove_frames mode: the frames left between the caller's lambda and the
# function, per transformation (jacfwd/jacrev's returned function is no boundary: its own
# frame stays, added after the vmap/jvp inside it filtered)
_TRANSFORMS = {
    "grad": (lambda: jax.grad(_boom)(1.0), []),
    "value_and_grad": (lambda: jax.value_and_grad(_boom)(1.0), []),
    "vmap": (lambda: jax.vmap(_boom)(jnp.ones(2)), []),
    "jvp": (lambda: jax.jvp(_boom, (1.0,), (1.0,)), []),
    "vjp": (lambda: jax.vjp(_boom, 1.0), []),
    "linearize": (lambda: jax.linearize(_boom, 1.0), []),
    "eval_shape": (lambda: jax.eval_shape(_boom, 1.0), []),
    "make_jaxpr": (lambda: jax.make_jaxpr(_boom)(1.0), []),
    "jacfwd": (lambda: jax.jacfwd(_boom)(1.0), ["jacfun"]),
    "jacrev": (lambda: jax.jacrev(_boom)(1.0), ["jacfun"]),
    "hessian": (lambda: jax.hessian(_boom)(1.0), ["jacfun"]),
    "jit(grad)": (lambda: jax.jit(jax.grad(_boom))(1.0), []),
    "scan": (lambda: jax.lax.scan(_boom, 0.0, jnp.ones(2)), []),
    "while_loop": (lambda: jax.lax.while_loop(_boom, _boom, 0.0), []),
    "fori_loop": (lambda: jax.lax.fori_loop(0, 3, _boom, 0.0), []),
    "cond": (lambda: jax.lax.cond(True, _boom, _boom, 1.0), []),
    "switch": (lambda: jax.lax.switch(1, [_boom, _boom], 1.0), []),
    "map": (lambda: jax.lax.map(_boom, jnp.ones(2)), []),
    "associative_scan": (lambda: jax.lax.associative_scan(_boom, jnp.ones(2)), []),
    "jit(scan)": (lambda: jax.jit(lambda x: jax.lax.scan(_boom, x, jnp.ones(2)))(0.0),
                  ["<lambda>"]),
}


@pytest.mark.parametrize("name", list(_TRANSFORMS))
def test_traceback_filtering_at_transformations(name):
  run, between = _TRANSFORMS[name]
  with _filtering("remove_frames"), pytest.raises(ValueError) as info:
    run()
  assert _shown(info.value.__traceback__)[-2 - len(between):] == ["<lambda>", *between, "_boom"]
  assert isinstance(info.value.__cause__, traceback_util.UnfilteredStackTrace)
