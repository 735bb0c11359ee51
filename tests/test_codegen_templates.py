"""Tier 0's direct NumPy templates (the elementwise specs' ``template``, gathered in
``codegen._TEMPLATES``) are a speed form of the implementation table: a generated ufunc
call (which can also write into a dying operand's buffer) instead of a call through
``impl_rules``. This proves they compute what ``impl_rules`` computes, bit for bit, for
every dtype each template runs on, edge values included; the table itself is checked
against JAX by the replay tests.
"""
import ml_dtypes
import numpy as np
import pytest

import jaxlite as jax
from jaxlite._src.backends.numpy import codegen
from jaxlite._src.backends.numpy import subnormals
from jaxlite._src.lax import kernels
from jaxlite._src.backends.numpy.impls import impl_rules

_DTYPES = [np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64,
    np.complex128)]

# NumPy warns about the inf/nan edge values; XLA (and tier 0's filter) compute them silently
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _edge_values(dtype):
  """Zero, signed zero, extremes, infinities and NaN where the dtype has them, and a few
  ordinary values."""
  if dtype.kind == "b":
    return np.array([False, True, True, False])
  if dtype.kind in "iu":
    info = np.iinfo(dtype)
    return np.array([0, 1, 2, 7, info.max, info.min, info.max - 1, info.min + 1],
                    dtype=np.int64 if dtype.kind == "i" else np.uint64).astype(dtype)
  real = ml_dtypes.finfo(dtype.type if dtype.kind == "f" else np.float64)
  values = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan,
            float(real.max), float(real.min), float(real.tiny), float(real.smallest_subnormal)]
  if dtype.kind == "c":
    return np.array([complex(a, b) for a in values[::2] for b in values[1::2]], dtype)
  return np.array(values, dtype)


def _operands(dtype, arity):
  """Every pair of edge values for binary primitives (so 0/-0, inf-inf, nan in either
  place all occur)."""
  x = _edge_values(dtype)
  if arity == 1:
    return (x,)
  i, j = np.meshgrid(np.arange(x.size), np.arange(x.size), indexing="ij")
  return x[i.ravel()], x[j.ravel()]


def _bits(a):
  a = np.ascontiguousarray(a)
  return a.view(np.uint8) if a.dtype.itemsize else a


def _cases():
  for prim, (kinds, template) in codegen._TEMPLATES.items():
    yield prim, template, kinds or "".join(sorted({d.kind for d in _DTYPES}))


@pytest.mark.parametrize("prim,template,kinds", list(_cases()),
                         ids=[c[0].name for c in _cases()])
def test_template_computes_what_the_implementation_table_computes(prim, template, kinds,
                                                                   x64):
  x64(True)   # the 64-bit dtypes too
  arity = template.count("{")
  ran = []
  for dtype in _DTYPES:
    if dtype.kind not in kinds:
      continue
    args = _operands(dtype, arity)
    try:
      closed = jax.make_jaxpr(prim.bind)(*args)
    except TypeError:   # the primitive rejects this dtype: the template never sees it
      continue
    (eqn,) = closed.jaxpr.eqns
    # on the dtypes XLA flushes, the template flushes subnormal operands as the table does
    flushing = subnormals.template(eqn, template)
    assert codegen._template(eqn) == flushing
    fn, source = codegen.compile_jaxpr(closed)
    assert flushing.format(*[f"a{i}" for i in range(arity)]) in source
    (generated,) = fn(*args)
    expected = impl_rules[prim](*args)
    aval = eqn.outvars[0].aval
    assert generated.dtype == expected.dtype == aval.dtype, (dtype, generated.dtype)
    assert generated.shape == expected.shape == aval.shape
    np.testing.assert_array_equal(_bits(generated), _bits(expected), err_msg=str(dtype))
    ran.append(dtype)
  # NumPy calls bfloat16's kind "V": only the unconditional templates run on it
  floats = {np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float64)}
  assert {d for d in floats if d.kind in kinds} <= set(ran)


@pytest.mark.parametrize("name,want", [("maximum", [0.0, 0.0, -0.0, 0.0]),
                                       ("minimum", [-0.0, 0.0, -0.0, -0.0])])
def test_max_min_sign_zeros_as_xla_when_writing_into_a_dying_operand(name, want):
  # -x dies into the max/min, whose output reuses its buffer: the zeros' signs must still
  # be read from the operands (XLA: max is -0 only if both are, min if either is)
  x = np.array([0.0, -0.0, 0.0, -0.0], np.float32)
  y = np.array([0.0, 0.0, -0.0, -0.0], np.float32)
  closed = jax.make_jaxpr(lambda a, b: getattr(jax.numpy, name)(-a, b))(x, y)
  fn, source = codegen.compile_jaxpr(closed)
  assert f"_{name[:3]}(" in source and "out=" in source, source
  (out,) = fn(x, y)
  np.testing.assert_array_equal(np.signbit(out), np.signbit(np.array(want, np.float32)))


@pytest.mark.parametrize("size", [5, 200_000])   # a generated line, and a blocked region
def test_relu_like_max_and_min_with_a_zero_sign_every_zero_as_xla(size):
  # max(v, +0) is +0 wherever it is zero (-0 included), min(v, -0) is -0: the analytic
  # IEEE 754 answer, whichever operand NumPy's loop returns on a tie
  x = np.resize(np.array([0.0, -0.0, 1.5, -2.0, np.nan], np.float32), size)
  v = -x
  want_max = np.where(np.isnan(v), np.nan, np.where(v > 0, v, np.float32(0.0)))
  want_min = np.where(np.isnan(v), np.nan, np.where(v < 0, v, np.float32(-0.0)))
  fn = lambda a: (jax.numpy.maximum(-a, 0.0) * 1.0, jax.numpy.minimum(-a, -0.0) * 1.0)
  source = codegen.compile_jaxpr(jax.make_jaxpr(fn)(x))[1]
  assert "_max0(" in source and "_min0(" in source, source
  f = jax.jit(fn, backend="numpy")
  # the slow path: the general zero signing of NumPy's max/min, on the same values
  zero = np.zeros((), np.float32)
  slow = (kernels.signed_zeros(np.maximum(v, zero), v, zero, True),
          kernels.signed_zeros(np.minimum(v, -zero), v, -zero, False))
  for got, want, slow_one in zip(f(x), (want_max, want_min), slow):
    got, want = np.asarray(got), want.astype(np.float32)
    nan = np.isnan(want)   # (a NaN's sign is not XLA's rule)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(np.isnan(slow_one), nan)
    np.testing.assert_array_equal(_bits(got[~nan]), _bits(want[~nan]))
    np.testing.assert_array_equal(_bits(got[~nan]), _bits(slow_one[~nan]))
