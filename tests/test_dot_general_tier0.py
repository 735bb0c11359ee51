"""Tier 0's dot_general (``backends/numpy/impls.py``) against an einsum in float64 /
int64, over batch, several contracting dimensions in any order, contractions of size 1
(broadcast multiply), empty dimensions, np.dot's own form and every accumulation dtype.
"""
import itertools

import ml_dtypes
import numpy as np
import pytest

from jaxlite._src.backends.numpy.impls import _dot_general

LETTERS = "abcdefghij"


def reference(lhs, rhs, dimension_numbers, out_dtype):
  (lc, rc), (lb, rb) = dimension_numbers
  ls = list(LETTERS[:lhs.ndim])
  rs = list(LETTERS[lhs.ndim:lhs.ndim + rhs.ndim])
  for l, r in zip(lc + lb, rc + rb):
    rs[r] = ls[l]
  out = ([ls[d] for d in lb] + [s for i, s in enumerate(ls) if i not in lc + lb]
         + [s for i, s in enumerate(rs) if i not in rc + rb])
  wide = np.int64 if np.issubdtype(out_dtype, np.integer) else np.complex128 if (
      np.issubdtype(out_dtype, np.complexfloating)) else np.float64
  spec = f"{''.join(ls)},{''.join(rs)}->{''.join(out)}"
  return np.einsum(spec, lhs.astype(wide), rhs.astype(wide))


# (lhs shape, rhs shape, ((lhs contract, rhs contract), (lhs batch, rhs batch)))
CASES = [
    ((4,), (4,), (((0,), (0,)), ((), ()))),                      # np.dot: vector . vector
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),                  # np.dot: matrix product
    ((4,), (4, 5), (((0,), (0,)), ((), ()))),
    ((3, 4), (4,), (((1,), (0,)), ((), ()))),
    ((4, 3), (4, 5), (((0,), (0,)), ((), ()))),                  # transposed lhs
    ((3, 4), (5, 4), (((1,), (1,)), ((), ()))),                  # transposed rhs
    ((6, 1, 3), (3, 5), (((2,), (0,)), ((), ()))),               # leading free dims
    ((6, 1, 4), (6, 1, 3), (((1,), (1,)), ((0,), (0,)))),        # batched outer product
    ((6, 1, 1), (5, 1), (((2,), (1,)), ((), ()))),               # size-1 contraction
    ((2, 3, 4, 5), (4, 2, 5, 6), (((2, 3), (0, 2)), ((0,), (1,)))),  # two contractions
    ((2, 3, 4, 5), (4, 2, 5, 6), (((3, 2), (2, 0)), ((0,), (1,)))),  # in the other order
    ((3, 2, 4), (2, 4, 3), (((2,), (1,)), ((1, 0), (0, 2)))),    # two batch dims, swapped
    ((0, 4), (4, 5), (((1,), (0,)), ((), ()))),                  # empty free dim
    ((3, 0), (0, 5), (((1,), (0,)), ((), ()))),                  # empty contraction
    ((2, 0, 3), (2, 3, 4), (((2,), (1,)), ((0,), (0,)))),
    ((), (), (((), ()), ((), ()))),                              # scalars
    ((3,), (5,), (((), ()), ((), ()))),                          # outer product, no batch
]

DTYPES = [(np.float32, None), (np.float16, None), (ml_dtypes.bfloat16, None),
          (np.int32, None), (np.int8, np.int32), (np.bool_, None), (np.complex64, None),
          (np.float32, np.float64), (np.uint8, None)]


@pytest.mark.parametrize("case,dtypes", list(itertools.product(CASES, DTYPES)),
                         ids=lambda v: str(v))
def test_dot_general_matches_einsum(case, dtypes):
  lshape, rshape, dn = case
  dtype, preferred = dtypes
  rng = np.random.default_rng(0)
  def make(shape):
    if dtype == np.bool_:
      return rng.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
      return rng.integers(0, 5, shape).astype(dtype)
    x = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if np.issubdtype(
        dtype, np.complexfloating) else 0)
    return np.asarray(x).astype(dtype)
  lhs, rhs = make(lshape), make(rshape)
  out = _dot_general(lhs, rhs, dimension_numbers=dn, precision=None,
                     preferred_element_type=preferred, out_sharding=None)
  out_dtype = np.dtype(preferred or dtype)
  assert out.dtype == out_dtype
  want = reference(lhs, rhs, dn, out_dtype if out_dtype != np.bool_ else np.int64)
  if out_dtype == np.bool_:
    np.testing.assert_array_equal(out, want != 0)
  elif np.issubdtype(out_dtype, np.integer):
    np.testing.assert_array_equal(out, want.astype(out_dtype))
  else:
    tol = {2: 1e-2, 4: 1e-5, 8: 1e-5, 16: 1e-5}[out_dtype.itemsize]
    np.testing.assert_allclose(out.astype(np.complex128), want, rtol=tol, atol=tol * 10)
