"""Extended dtypes with rules of their own (JAX's ``ExtendedDType`` / ``_rules`` protocol):
a dtype defined here the way flax 0.12.8 defines its fp8 metadata dtype (``maxgrad32``:
float32 data whose gradients accumulate by ``max``), its conversions, printing, errors,
fills, arrays eagerly and under jit, vmap, and grad through a scan that sums its
cotangents with the dtype's ``add``. Typed PRNG keys are the same mechanism
(tests/test_prng_keys.py).

Expected values and messages were recorded from JAX 0.10.2 (/work/jaxref/bin/python) on
the same dtype, defined on ``jax._src.dtypes.ExtendedDType`` with the same rules.
"""
import dataclasses
import os
import pathlib
import re
import subprocess
import sys
import textwrap
from functools import partial

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src import private_core as jcore   # jax._src.core under the alias
from jaxlite._src import pxla                     # jax._src.interpreters.pxla
from jaxlite._src.base import dtypes as _dtypes    # jax._src.dtypes
from jaxlite._src.core import extended as earray   # jax._src.earray
from jaxlite._src.lax.prng import KeyTy


class MaxRules:
  """The rules of flax's ``fp8_meta_dtype`` (flax/linen/fp8_ops.py), on float32."""

  @staticmethod
  def physical_element_aval(dtype):
    return jax.core.ShapedArray((), dtype.float_dtype)

  @staticmethod
  def convert_from(dt, other):
    return dt.float_dtype == other

  @staticmethod
  def convert_to(other, dt):
    return dt.float_dtype == other

  @staticmethod
  def add(dt, x, y):
    f = partial(lax.convert_element_type, new_dtype=dt.float_dtype)
    return lax.convert_element_type(lax.max(f(x), f(y)), dt)

  @staticmethod
  def zero(dt):
    return lax.convert_element_type(np.array(-np.inf, dt.float_dtype), dt)

  @staticmethod
  def tangent_dtype(dt):
    return dt

  @staticmethod
  def global_sharded_result_handler(aval, out_sharding, committed):
    phys = pxla.global_result_handlers[jcore.ShapedArray](
        jcore.physical_aval(aval), out_sharding, committed)
    return lambda bufs: earray.EArray(aval, phys(bufs))

  @staticmethod
  def full(shape, fill_value, dt):
    fill = lax.convert_element_type(fill_value, dt.float_dtype)
    return lax.convert_element_type(lax.full(shape, fill, dt.float_dtype), dt)


class maxgrad(_dtypes.extended):
  pass


@dataclasses.dataclass(frozen=True)
class MaxGrad(_dtypes.ExtendedDType):
  float_dtype: np.dtype
  _rules: type = MaxRules
  type: type = maxgrad

  def __repr__(self):
    return f"maxgrad{np.dtype(self.float_dtype).itemsize * 8}"

  name = property(__repr__)


M32 = MaxGrad(np.dtype(np.float32))
X = jnp.array([1., 5., 2.], jnp.float32)
XS = jnp.array([[1., -7.], [3., 2.], [-4., 0.5]], jnp.float32)


def _scaled(x, s):
  """``x * s``, whose custom bwd gives ``s`` the cotangent ``|x|`` in ``M32``."""
  @jax.custom_vjp
  def f(x, s):
    return x * lax.convert_element_type(s, jnp.float32)

  def fwd(x, s):
    return f(x, s), (x, s)

  def bwd(res, g):
    x, s = res
    return (g * lax.convert_element_type(s, jnp.float32),
            lax.convert_element_type(jnp.abs(x), M32))

  f.defvjp(fwd, bwd)
  return f(x, s)


def _loss(xs, s32):
  s = lax.convert_element_type(s32, M32)
  return lax.scan(lambda c, xi: (c + _scaled(xi, s).sum(), None), 0., xs)[0]


def test_the_dtype_is_an_extended_dtype():
  assert jnp.issubdtype(M32, jax.dtypes.extended)
  assert jnp.issubdtype(M32, maxgrad)
  assert not jnp.issubdtype(M32, jnp.floating)


def test_conversions_print_as_jaxs_to_edtype_and_from_edtype():
  jaxpr = jax.make_jaxpr(lambda x: lax.convert_element_type(
      lax.convert_element_type(x, M32), jnp.float32))(X)
  assert str(jaxpr) == (
      "{ lambda ; a:f32[3]. let\n"
      "    b:maxgrad32[3] = to_edtype[edtype=maxgrad32] a\n"
      "    c:f32[3] = from_edtype[dtype=float32] b\n"
      "  in (c,) }")


@pytest.mark.parametrize("jitted", [False, True])
def test_arrays_of_the_dtype_are_earrays_over_their_data(jitted):
  to = lambda x: lax.convert_element_type(x, M32)
  y = jax.jit(to)(X) if jitted else to(X)
  assert type(y).__name__ == "EArray"
  assert repr(y) == "EArray([1., 5., 2.], dtype=float32)"
  assert str(jax.typeof(y)) == "maxgrad32[3]"
  assert y.dtype == M32 and y.shape == (3,) and y.ndim == 1 and y.size == 3
  back = jax.jit(lambda y: lax.convert_element_type(lax.concatenate([y, y], 0),
                                                    jnp.float32))(y)
  np.testing.assert_array_equal(back, [1., 5., 2., 1., 5., 2.])
  np.testing.assert_array_equal(lax.convert_element_type(y, jnp.float32), X)


def test_rules_without_a_result_handler_give_jaxlites_earray():
  class Plain(MaxRules):
    global_sharded_result_handler = None
  del Plain.global_sharded_result_handler

  @dataclasses.dataclass(frozen=True)
  class PlainTy(MaxGrad):
    _rules: type = Plain

  y = lax.convert_element_type(X, PlainTy(np.dtype(np.float32)))
  assert type(y) is earray.EArray and repr(y) == "EArray([1., 5., 2.], dtype=float32)"


def test_fills_follow_the_rules():
  # JAX 0.10.2: EArray([0., 0.], dtype=float32) and EArray([3., 3.], dtype=float32)
  assert repr(jnp.zeros((2,), M32)) == "EArray([0., 0.], dtype=float32)"
  assert repr(lax.full((2,), 3.0, M32)) == "EArray([3., 3.], dtype=float32)"
  y = lax.convert_element_type(X, M32)
  assert repr(jnp.zeros_like(y)) == "EArray([0., 0., 0.], dtype=float32)"
  assert repr(lax.full_like(y, 3.0)) == "EArray([3., 3., 3.], dtype=float32)"


def test_vmap_and_eval_shape():
  f = lambda a: lax.convert_element_type(lax.convert_element_type(a, M32), jnp.float32)
  np.testing.assert_array_equal(jax.vmap(f)(jnp.ones((2, 3))), np.ones((2, 3)))
  shape = jax.eval_shape(lambda a: lax.convert_element_type(a, M32), X)
  assert repr(shape) == "ShapeDtypeStruct(shape=(3,), dtype=maxgrad32)"


@pytest.mark.parametrize("jitted", [False, True])
def test_grad_accumulates_cotangents_with_the_dtypes_add(jitted):
  # JAX 0.10.2 (eager and jit): the scale's cotangent is the max of |x| over the scan,
  # [4., 7.] (a sum would give [8., 9.5])
  g = jax.grad(_loss, (0, 1))
  gx, gs = (jax.jit(g) if jitted else g)(XS, jnp.array([2., 1.], jnp.float32))
  np.testing.assert_array_equal(gx, [[2., 1.], [2., 1.], [2., 1.]])
  np.testing.assert_array_equal(gs, [4., 7.])


def test_grads_jaxpr_starts_the_accumulation_at_the_rules_zero():
  text = str(jax.make_jaxpr(jax.grad(_loss, 1))(XS, jnp.array([2., 1.], jnp.float32)))
  # as JAX 0.10.2's: the zero is to_edtype of -inf, and the scan sums with add_any
  assert re.search(r"\w+:maxgrad32\[\] = to_edtype\[edtype=maxgrad32\] -inf:f32\[\]", text)
  assert re.search(r"\w+:maxgrad32\[2\] = add_any \w+ \w+", text)


ERRORS = {
    "from": (lambda: lax.convert_element_type(lax.convert_element_type(X, M32), jnp.float16),
             ValueError, "Cannot convert_element_type from maxgrad32 to float16"),
    "to": (lambda: lax.convert_element_type(X.astype(jnp.float16), M32), ValueError,
           "Cannot convert_element_type from float16 to maxgrad32"),
    "between": (lambda: lax.convert_element_type(jax.random.key(0), M32), ValueError,
                "cannot directly convert between extended dtypes: from key<fry> to "
                "maxgrad32. Instead, convert to and from their representation dtypes, "
                "e.g.:\nkey<fry> -> uint32 -> float32 -> maxgrad32"),
    "operator": (lambda: lax.convert_element_type(X, M32) + 1, NotImplementedError,
                 "Cannot call abstract method __add__"),
    "index": (lambda: lax.convert_element_type(X, M32)[0], NotImplementedError,
              "Cannot call abstract method __getitem__"),
    "arith": (lambda: lax.add(*[lax.convert_element_type(X, M32)] * 2), TypeError,
              "add does not accept dtype maxgrad32"),
    "numpy_func": (lambda: jnp.sin(lax.convert_element_type(X, M32)), TypeError,
                   "Cannot interpret 'maxgrad32' as a data type"),
    "tolist": (lambda: lax.convert_element_type(X, M32).tolist(), AttributeError,
               "'EArray' object has no attribute 'tolist'"),
    "iter": (lambda: list(lax.convert_element_type(X, M32)), NotImplementedError, ""),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_jaxs(name):
  f, error, message = ERRORS[name]
  with pytest.raises(error) as info:
    f()
  assert str(info.value).startswith(message)


def test_keys_are_one_extended_dtype_with_rules():
  key_dtype = jax.random.key(0).dtype
  assert type(key_dtype) is KeyTy and isinstance(key_dtype, _dtypes.ExtendedDType)
  assert str(jcore.physical_aval(jax.core.ShapedArray((3,), key_dtype))) == "uint32[3,2]"
  assert jax.core.ShapedArray((3,), key_dtype).to_tangent_aval().dtype == jax.dtypes.float0


def test_supports_inf_is_jaxs():
  # JAX 0.10.2: jax._src.dtypes.supports_inf
  assert _dtypes.supports_inf(np.float32) and not _dtypes.supports_inf(np.int32)
  pytest.importorskip("ml_dtypes")
  assert not _dtypes.supports_inf(jnp.float8_e4m3fn)
  assert _dtypes.supports_inf(jnp.float8_e5m2)


def test_jaxs_private_modules_for_the_rules_are_served_under_the_alias():
  root = pathlib.Path(__file__).resolve().parent.parent
  code = textwrap.dedent("""
      from jax._src import earray, core
      from jax._src.interpreters import pxla
      import jax._src
      print(earray.EArray.__name__, core.physical_aval.__name__,
            sorted(pxla.global_result_handlers) == [core.ShapedArray])
      print(hasattr(jax._src.interpreters, 'pxla'), hasattr(jax._src.interpreters, 'ad'))
      """)
  out = subprocess.run([sys.executable, "-m", "jaxlite", "-c", code], cwd=root,
                       env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True,
                       text=True, timeout=300)
  assert out.returncode == 0, out.stderr
  assert out.stdout.split("\n")[:2] == ["EArray physical_aval True", "True True"]
