"""``jaxlite.numpy`` as an Array API 2024.12 namespace, judged two ways.

- Against ``array-api-strict`` (the standard's reference implementation, in the ``[test]``
  extra): every function of the standard accepts the standard's calls (positional-only
  and keyword-only parameters by the standard's names), and gives the strict library's
  values on representative inputs.
- Against JAX 0.10.2's recorded answers (``tests/data/array_api_reference.json``, made by
  ``tests/data/make_array_api_reference.py`` from ``tests/data/array_api_cases.py``) where
  JAX differs from the standard or the standard leaves it open: signatures, namespace
  info, ``finfo``/``iinfo``, shifts past the bit width, creation and cumulative edge
  cases, named-tuple results, DLPack, and errors.
"""
import inspect
import json
import math
import os
import sys

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
from array_api_cases import (FINFO_ATTRS, FLOAT_TYPES, IINFO_ATTRS, INFO_KINDS,  # noqa: E402
                             INT_TYPES, STANDARD_FUNCTIONS, cases)

with open(os.path.join(DATA, "array_api_reference.json")) as _f:
  REF = json.load(_f)


def _lookup(module, dotted):
  for part in dotted.split("."):
    module = getattr(module, part)
  return module


def _signature(fn):
  return [[p.name, p.kind.name, "-" if p.default is p.empty else repr(p.default)]
          for p in inspect.signature(fn).parameters.values()]


@pytest.fixture(scope="module")
def xp():
  strict = pytest.importorskip("array_api_strict")
  strict.set_array_api_strict_flags(api_version="2024.12")
  return strict


# ----------------------------------------------------------------------------- signatures

# Parameters JAX has that jaxlite leaves to the sharding work (issue 18).
_SHARDING_PARAMS = {"out_sharding"}


@pytest.mark.parametrize("name", STANDARD_FUNCTIONS)
def test_signature_is_jaxs(name):
  """Names, kinds and defaults of the parameters, as JAX writes them (JAX's ``jnp.add``
  and a dozen others are ``jnp.ufunc`` objects, called with ``*args``)."""
  got = _signature(_lookup(jnp, name))
  want = REF["signatures"][name]
  if not _SHARDING_PARAMS & {p[0] for p in got}:
    # (out_sharding is taken by zeros, ones, full and arange so far: where it is, its
    # place and default are JAX's)
    want = [p for p in want if p[0] not in _SHARDING_PARAMS]
  assert got == want


def _accepts(params, std_index, std_param):
  """Whether a function with ``params`` accepts the standard's parameter ``std_param``
  (the ``std_index``-th) the way the standard passes it."""
  kinds = {p.kind for p in params}
  if std_param.kind is std_param.VAR_POSITIONAL:
    return inspect.Parameter.VAR_POSITIONAL in kinds
  if std_param.kind is std_param.POSITIONAL_ONLY:
    if inspect.Parameter.VAR_POSITIONAL in kinds:
      return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                  p.POSITIONAL_OR_KEYWORD)]
    return std_index < len(positional)
  named = {p.name: p for p in params}
  if inspect.Parameter.VAR_KEYWORD in kinds:
    return True
  p = named.get(std_param.name)
  return p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and (
      std_param.default is std_param.empty or p.default is not p.empty)


def _jax_params(name):
  kinds = inspect.Parameter
  return [kinds(n, getattr(kinds, k), default=kinds.empty if d == "-" else None)
          for n, k, d in REF["signatures"][name]]


@pytest.mark.parametrize("name", STANDARD_FUNCTIONS)
def test_signature_accepts_the_standards_calls(xp, name):
  """Every parameter the standard names is accepted as the standard passes it
  (positionally, or by keyword under the standard's name), wherever JAX accepts it."""
  if name in ("isin", "linalg.eig", "linalg.eigvals"):
    pytest.skip("not in the 2024.12 standard (array-api-strict's is a later draft)")
  std = list(inspect.signature(_lookup(xp, name)).parameters.values())
  ours = list(inspect.signature(_lookup(jnp, name)).parameters.values())
  jax_params = _jax_params(name)
  for i, p in enumerate(std):
    if _accepts(jax_params, i, p):
      assert _accepts(ours, i, p), (name, p, ours)


# ----------------------------------------------------------------------- values vs strict

F = np.array([-0.9, -0.5, 0.0, 0.3, 0.75], np.float32)
POS = np.array([0.5, 1.0, 2.0, 10.0], np.float32)
GE1 = np.array([1.0, 1.5, 3.0, 10.0], np.float32)
I = np.array([-3, 0, 2, 7], np.int32)
U = np.array([0, 1, 5, 200], np.uint8)
B = np.array([True, False, True, False])
C = np.array([1 + 2j, -0.5j, 3 - 1j, 0.25], np.complex64)
M = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
R = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
G = np.array([[1.0, 2.0, 0.0], [3.0, -1.0, 4.0]], np.float32)
V3 = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], np.float32)
W3 = np.array([[0.0, 1.0, -1.0], [2.0, 2.0, 1.0]], np.float32)
S = np.array([1.0, 2.0, 2.0, 5.0, 7.0], np.float32)

_UNARY = {
    "abs": F, "acos": F, "acosh": GE1, "asin": F, "asinh": F, "atan": F, "atanh": F,
    "ceil": F * 3, "cos": F, "cosh": F, "exp": F, "expm1": F, "floor": F * 3, "log": POS,
    "log10": POS, "log1p": POS, "log2": POS, "negative": F, "positive": F,
    "reciprocal": POS, "round": F * 3, "sign": F, "signbit": F, "sin": F, "sinh": F,
    "sqrt": POS, "square": F, "tan": F, "tanh": F, "trunc": F * 3, "isfinite": F,
    "isinf": F, "isnan": F, "logical_not": B, "bitwise_invert": I, "conj": C, "real": C,
    "imag": C,
}
_BINARY = {
    "add": (F, POS[:1]), "subtract": (F, F[::-1]), "multiply": (F, F[::-1]),
    "divide": (F, F[::-1] + 2), "pow": (POS, F[:4]), "atan2": (F, F[::-1]),
    "hypot": (F, F[::-1]), "copysign": (F, F[::-1]), "nextafter": (F, F[::-1]),
    "logaddexp": (F, F[::-1]), "maximum": (F, F[::-1]), "minimum": (F, F[::-1]),
    "remainder": (I, np.array([2, 5, -3, 4], np.int32)),
    "floor_divide": (I, np.array([2, 5, -3, 4], np.int32)),
    "equal": (F, F[::-1]), "not_equal": (F, F[::-1]), "less": (F, F[::-1]),
    "less_equal": (F, F[::-1]), "greater": (F, F[::-1]), "greater_equal": (F, F[::-1]),
    "logical_and": (B, B[::-1]), "logical_or": (B, B[::-1]), "logical_xor": (B, B[::-1]),
    "bitwise_and": (I, I[::-1]), "bitwise_or": (I, I[::-1]), "bitwise_xor": (I, I[::-1]),
    "bitwise_left_shift": (I[1:], np.array([1, 2, 3], np.int32)),
    "bitwise_right_shift": (I, np.array([1, 0, 2, 3], np.int32)),
}

# (label, function, positional arguments, keyword arguments): NumPy arrays are given to
# both libraries through their asarray; a positional string and the keyword dtype name a
# dtype.
_CALLS = [(f"{n}", n, (x,), {}) for n, x in _UNARY.items()] + [
    (f"{n}", n, xs, {}) for n, xs in _BINARY.items()] + [
    ("sum", "sum", (R,), {"axis": 1}), ("sum_keepdims", "sum", (R,), {"keepdims": True}),
    ("prod", "prod", (R[:, :2],), {"axis": 0}), ("max", "max", (R,), {"axis": (0, 1)}),
    ("min", "min", (R,), {"axis": 0, "keepdims": True}), ("mean", "mean", (R,), {}),
    ("std", "std", (R,), {"axis": 1, "correction": 1}), ("var", "var", (R,), {"axis": 0}),
    ("all", "all", (B,), {}), ("any", "any", (R > 5,), {"axis": 1}),
    ("argmax", "argmax", (R,), {"axis": 1}), ("argmin", "argmin", (F,), {}),
    ("argmax_keepdims", "argmax", (R,), {"axis": 0, "keepdims": True}),
    ("count_nonzero", "count_nonzero", (R,), {"axis": 1}),
    ("cumulative_sum", "cumulative_sum", (R,), {"axis": 1, "include_initial": True}),
    ("cumulative_prod", "cumulative_prod", (F,), {"include_initial": True}),
    ("diff", "diff", (S,), {"n": 2}), ("diff_prepend", "diff", (R,),
                                        {"axis": 0, "prepend": R[:1]}),
    ("broadcast_to", "broadcast_to", (F,), {"shape": (2, 5)}),
    ("concat", "concat", ((R, R),), {"axis": 1}), ("concat_none", "concat", ((R, G),),
                                                   {"axis": None}),
    ("expand_dims", "expand_dims", (R,), {"axis": -1}), ("flip", "flip", (R,), {"axis": 1}),
    ("moveaxis", "moveaxis", (R[None], 0, 2), {}),
    ("permute_dims", "permute_dims", (R,), {"axes": (1, 0)}),
    ("repeat", "repeat", (S, 2), {}), ("reshape", "reshape", (R,), {"shape": (4, 3)}),
    ("roll", "roll", (R,), {"shift": (1, -1), "axis": (0, 1)}),
    ("squeeze", "squeeze", (R[None],), {"axis": 0}), ("stack", "stack", ((F, F),), {"axis": 1}),
    ("tile", "tile", (G, (2, 1)), {}), ("tril", "tril", (R,), {"k": 1}),
    ("triu", "triu", (R,), {"k": -1}), ("clip", "clip", (F,), {"min": -0.4, "max": 0.4}),
    ("where", "where", (B, F[:4], -F[:4]), {}), ("take", "take", (R, np.array([2, 0])),
                                                   {"axis": 1}),
    ("take_along_axis", "take_along_axis", (R, np.array([[1], [0], [3]])), {"axis": 1}),
    ("searchsorted", "searchsorted", (S, np.array([2.0, 6.0, 0.0], np.float32)), {}),
    ("searchsorted_right", "searchsorted", (S, np.array([2.0, 7.0], np.float32)),
     {"side": "right"}),
    ("sort", "sort", (R[::-1],), {"axis": 0, "descending": True}),
    ("argsort", "argsort", (S[::-1],), {"stable": True}),
    ("nonzero", "nonzero", (R > 0,), {}), ("unique_values", "unique_values", (S,), {}),
    ("unique_counts", "unique_counts", (S,), {}),
    ("unique_inverse", "unique_inverse", (S,), {}), ("unique_all", "unique_all", (S,), {}),
    ("matmul", "matmul", (R.T, G.T), {}), ("tensordot", "tensordot", (R, R), {"axes": 2}),
    ("tensordot_pairs", "tensordot", (R, G), {"axes": ([0], [1])}),
    ("vecdot", "vecdot", (V3, W3), {}), ("vecdot_complex", "vecdot", (C, C[::-1]), {}),
    ("matrix_transpose", "matrix_transpose", (R,), {}),
    ("meshgrid", "meshgrid", (F, S), {"indexing": "ij"}),
    ("broadcast_arrays", "broadcast_arrays", (F, R[:1, :1]), {}),
    ("arange", "arange", (2, 11, 3), {}),
    ("eye", "eye", (3, 4), {"k": 1}),
    ("full", "full", (), {"shape": (2, 3), "fill_value": 1.5}),
    ("linspace", "linspace", (0.0, 1.0, 5), {"endpoint": False}),
    ("ones", "ones", (), {"shape": 3, "dtype": "int32"}), ("zeros", "zeros", (), {"shape": (2,)}),
    ("ones_like", "ones_like", (R,), {}), ("zeros_like", "zeros_like", (I,), {}),
    ("full_like", "full_like", (R,), {"fill_value": 7}),
    ("astype", "astype", (F, "int32"), {}),
    ("linalg.cholesky", "linalg.cholesky", (M,), {}),
    ("linalg.cholesky_upper", "linalg.cholesky", (M,), {"upper": True}),
    ("linalg.cross", "linalg.cross", (V3, W3), {}), ("linalg.det", "linalg.det", (M,), {}),
    ("linalg.diagonal", "linalg.diagonal", (R,), {"offset": 1}),
    ("linalg.eigvalsh", "linalg.eigvalsh", (M,), {}), ("linalg.inv", "linalg.inv", (M,), {}),
    ("linalg.matmul", "linalg.matmul", (M, M), {}),
    ("linalg.matrix_norm", "linalg.matrix_norm", (R,), {}),
    ("linalg.matrix_norm_nuc", "linalg.matrix_norm", (R,), {"ord": "nuc"}),
    ("linalg.matrix_power", "linalg.matrix_power", (M, 3), {}),
    ("linalg.matrix_rank", "linalg.matrix_rank", (R,), {}),
    ("linalg.matrix_transpose", "linalg.matrix_transpose", (R,), {}),
    ("linalg.outer", "linalg.outer", (F, S), {}), ("linalg.pinv", "linalg.pinv", (G,), {}),
    ("linalg.solve", "linalg.solve", (M, R[:, :3].T), {}),
    ("linalg.svdvals", "linalg.svdvals", (R,), {}),
    ("linalg.tensordot", "linalg.tensordot", (R.T, G.T), {"axes": 1}),
    ("linalg.trace", "linalg.trace", (R,), {"offset": -1}),
    ("linalg.vecdot", "linalg.vecdot", (V3, W3), {"axis": -2}),
    ("linalg.vector_norm", "linalg.vector_norm", (R,), {"axis": 1, "ord": 1}),
    ("linalg.vector_norm_inf", "linalg.vector_norm", (R,), {"ord": math.inf}),
    ("fft.fft", "fft.fft", (C,), {}), ("fft.ifft", "fft.ifft", (C,), {"n": 6}),
    ("fft.fftn", "fft.fftn", (R.astype(np.complex64),), {"norm": "ortho"}),
    ("fft.ifftn", "fft.ifftn", (R.astype(np.complex64),), {"axes": (0,)}),
    ("fft.rfft", "fft.rfft", (S,), {}), ("fft.irfft", "fft.irfft", (C,), {"n": 6}),
    ("fft.rfftn", "fft.rfftn", (R,), {}), ("fft.irfftn", "fft.irfftn", (R.astype(np.complex64),),
                                          {"s": (3, 6), "axes": (0, 1)}),
    ("fft.hfft", "fft.hfft", (C,), {}), ("fft.ihfft", "fft.ihfft", (S,), {"norm": "forward"}),
    ("fft.fftfreq", "fft.fftfreq", (8,), {"d": 0.5}), ("fft.rfftfreq", "fft.rfftfreq", (7,), {}),
    ("fft.fftshift", "fft.fftshift", (R,), {}),
    ("fft.ifftshift", "fft.ifftshift", (R,), {"axes": 1}),
]


def _call(lib, fname, args, kwargs):
  def convert(a):
    if isinstance(a, np.ndarray):
      return lib.asarray(a)
    if isinstance(a, tuple):
      return tuple(convert(v) for v in a)
    if isinstance(a, str):
      return getattr(lib, a)
    return a
  kwargs = {k: getattr(lib, v) if k == "dtype" else
            lib.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
  return _lookup(lib, fname)(*[convert(a) for a in args], **kwargs)


def _leaves(out):
  return list(out) if isinstance(out, (tuple, list)) else [out]


def _to_numpy(x):
  return np.from_dlpack(x)


# JAX's promotion and defaults where they differ from the standard's: the standard sums
# small ints into the default int and has 64-bit defaults; JAX keeps the input's width
# (and is 32-bit without x64). Values must still agree.
def _same_kind(a, b):
  return a.kind == b.kind or {a.kind, b.kind} <= {"i", "u"}


@pytest.mark.parametrize("label,fname,args,kwargs", _CALLS, ids=[c[0] for c in _CALLS])
def test_values_match_array_api_strict(xp, x64, label, fname, args, kwargs):
  """Every function of the standard on representative inputs, with 64-bit types on (as
  the standard's defaults are): jaxlite's values equal the reference implementation's,
  and the result dtypes are of the same kind."""
  x64(True)
  want = _leaves(_call(xp, fname, args, kwargs))
  got = _leaves(_call(jnp, fname, args, kwargs))
  assert len(got) == len(want)
  for g, w in zip(got, want):
    w = _to_numpy(w)
    g = np.asarray(g)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert _same_kind(g.dtype, w.dtype), (g.dtype, w.dtype)
    np.testing.assert_allclose(g.astype(w.dtype), w, rtol=2e-5, atol=2e-5)


def test_decompositions_reconstruct_and_agree_with_strict(xp):
  """svd, qr, eigh and slogdet return the standard's named tuples, whose fields
  reconstruct the input and agree with the reference (up to the sign freedom of vectors)."""
  m = jnp.asarray(M)
  u, s, vh = jnp.linalg.svd(m)
  np.testing.assert_allclose(np.asarray((u * s) @ vh), M, atol=1e-5)
  np.testing.assert_allclose(np.asarray(s), _to_numpy(xp.linalg.svd(xp.asarray(M)).S),
                             rtol=1e-5)
  qr = jnp.linalg.qr(m, mode="complete")
  np.testing.assert_allclose(np.asarray(qr.Q @ qr.R), M, atol=1e-5)
  eh = jnp.linalg.eigh(m)
  np.testing.assert_allclose(np.asarray(m @ eh.eigenvectors),
                             np.asarray(eh.eigenvectors * eh.eigenvalues), atol=1e-5)
  np.testing.assert_allclose(np.asarray(eh.eigenvalues),
                             _to_numpy(xp.linalg.eigh(xp.asarray(M)).eigenvalues), rtol=1e-5)
  sd = jnp.linalg.slogdet(m)
  ref = xp.linalg.slogdet(xp.asarray(M))
  assert float(sd.sign) == float(_to_numpy(ref.sign))
  np.testing.assert_allclose(float(sd.logabsdet), float(_to_numpy(ref.logabsdet)),
                             rtol=1e-6)


def test_results_of_decompositions_are_pytrees():
  m = jnp.asarray(M)
  out = jaxlite.jit(jnp.linalg.svd)(m)
  assert type(out).__name__ == "SVDResult"
  np.testing.assert_allclose(np.asarray(out.S), np.linalg.svd(M, compute_uv=False),
                             rtol=1e-5)
  batched = jaxlite.vmap(jnp.linalg.slogdet)(jnp.stack([m, 2 * m]))
  np.testing.assert_allclose(np.asarray(batched.logabsdet),
                             np.log(np.abs(np.linalg.det(np.stack([M, 2 * M])))), rtol=1e-5)


def _strict_name(dtype):
  return str(dtype).rsplit(".", 1)[-1]    # array_api_strict.int64 -> int64


def test_namespace_info_dtypes_match_strict(xp, x64):
  """With 64-bit types on, the dtypes offered are the standard's, kind by kind."""
  x64(True)
  ours, theirs = jnp.__array_namespace_info__(), xp.__array_namespace_info__()
  for kind in INFO_KINDS:
    assert sorted(ours.dtypes(kind=kind)) == sorted(theirs.dtypes(kind=kind)), kind
  assert {k: v.name for k, v in ours.default_dtypes().items()} == {
      k: _strict_name(v) for k, v in theirs.default_dtypes().items()}
  assert set(ours.capabilities()) <= set(theirs.capabilities()) | {"max dimensions"}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint16", "int32",
                                   "uint64"])
def test_finfo_iinfo_match_strict(xp, x64, dtype):
  x64(True)
  info = jnp.finfo if dtype.startswith("float") else jnp.iinfo
  ours, theirs = info(getattr(jnp, dtype)), getattr(xp, info.__name__)(getattr(xp, dtype))
  names = ["bits", "max", "min"] + (["eps", "smallest_normal"] if info is jnp.finfo else [])
  for name in names:
    assert getattr(ours, name) == getattr(theirs, name), name
  assert ours.dtype.name == _strict_name(theirs.dtype)


# ------------------------------------------------------------------- JAX-recorded answers

def _check_record(got, want):
  if "tuple" in want:
    assert isinstance(got, tuple) and len(got) == len(want["tuple"])
    for g, w in zip(got, want["tuple"]):
      _check_record(g, w)
  elif "repr" in want:
    assert repr(got) == want["repr"]
  else:
    value = np.asarray(got)
    assert value.dtype.name == want["dtype"] and list(value.shape) == want["shape"]
    expected = want["value"]
    if value.dtype.kind == "c":
      expected = np.asarray(expected[0]) + 1j * np.asarray(expected[1])
    expected = np.asarray(expected, dtype=np.float64 if value.dtype.kind == "V" else None
                          ).reshape(want["shape"])
    if value.dtype.kind in "fcV":
      np.testing.assert_allclose(value.astype(np.complex128 if value.dtype.kind == "c"
                                              else np.float64), expected,
                                 rtol=1e-6, equal_nan=True)
    else:
      np.testing.assert_array_equal(value, expected)


def _run_case(thunk, want):
  if "error" in want:
    with pytest.raises(Exception) as info:
      thunk()
    assert type(info.value).__name__ == want["error"]
    assert str(info.value).split("\n")[0] == want["message"]
  else:
    _check_record(thunk(), want)


@pytest.mark.parametrize("name", sorted(REF["cases_x32"]))
def test_matches_jax(name):
  _run_case(cases(jnp)[name], REF["cases_x32"][name])


@pytest.mark.parametrize("name", sorted(REF["cases_x64"]))
def test_matches_jax_x64(x64, name):
  x64(True)
  _run_case(cases(jnp)[name], REF["cases_x64"][name])


@pytest.mark.parametrize("mode", ["x32", "x64"])
def test_namespace_info_is_jaxs(x64, mode):
  x64(mode == "x64")
  want = REF[f"info_{mode}"]
  info = jnp.__array_namespace_info__()
  assert info.capabilities() == want["capabilities"]
  assert repr(info.default_device()) == want["default_device"]
  assert [repr(d) for d in info.devices()] == want["devices"]
  assert {k: v.name for k, v in info.default_dtypes().items()} == want["default_dtypes"]
  for kind, names in want["dtypes"]:
    kind = eval(kind)  # a repr of None, a str or a tuple of str, written by the recorder
    assert sorted(info.dtypes(kind=kind)) == names, kind
    assert all(np.dtype(n) == d for n, d in info.dtypes(kind=kind).items())


@pytest.mark.parametrize("dtype", FLOAT_TYPES + INT_TYPES)
def test_finfo_iinfo_are_jaxs(dtype):
  """Every attribute (with ``.dtype``), for bfloat16 and float16 too, and the scalar
  type of the float limits."""
  want = REF["finfo"][dtype]
  info = (jnp.finfo if dtype in FLOAT_TYPES else jnp.iinfo)(getattr(jnp, dtype))
  for attr in FINFO_ATTRS if dtype in FLOAT_TYPES else IINFO_ATTRS:
    value = getattr(info, attr)
    if attr == "dtype":
      assert value.name == want[attr]
    elif isinstance(want[attr], float):
      assert float(value) == want[attr], attr
    else:
      assert value == want[attr], attr
  for attr, type_name in want.get("scalar_types", {}).items():
    assert np.dtype(type(getattr(info, attr))).name == type_name, attr


# ---------------------------------------------------------------------------- DLPack

def test_numpy_reads_a_jaxlite_array_without_a_copy():
  x = jnp.arange(6.0)
  shared = np.from_dlpack(x)
  assert np.shares_memory(shared, x._value)
  assert not shared.flags.writeable    # an Array never changes
  copied = np.from_dlpack(x, copy=True)
  assert not np.shares_memory(copied, x._value)
  np.testing.assert_array_equal(copied, np.arange(6.0, dtype=np.float32))


def test_from_dlpack_shares_a_numpy_buffer():
  a = np.arange(8, dtype=np.float32)
  x = jnp.from_dlpack(a)
  a[0] = 7.0                          # DLPack shares: the write shows through
  assert float(x[0]) == 7.0
  assert float(jnp.from_dlpack(a, copy=True)[1]) == 1.0
  y = jnp.from_dlpack(a, copy=True)
  a[1] = -1.0
  assert float(y[1]) == 1.0           # a copy does not see it


def test_from_dlpack_of_a_jaxlite_array_and_a_strict_array(xp):
  x = jnp.arange(4, dtype=jnp.int16)
  y = jnp.from_dlpack(x)
  assert y.dtype == np.int16 and np.shares_memory(np.asarray(y), x._value)
  s = jnp.from_dlpack(xp.asarray([1.5, 2.5], dtype=xp.float32))
  np.testing.assert_array_equal(np.asarray(s), [1.5, 2.5])
  back = xp.from_dlpack(jnp.asarray([1, 2], dtype=jnp.int32))
  assert back.dtype == xp.int32


def test_dlpack_keywords():
  x = jnp.arange(3.0)
  dev = x.__dlpack_device__()
  assert dev == (1, 0) and dev[0].name == "kDLCPU"
  assert type(x.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)).__name__ \
      == "PyCapsule"
  with pytest.raises(RuntimeError, match="stream"):
    x.__dlpack__(stream=1)
  with pytest.raises(RuntimeError, match="kDLCUDA"):
    x.__dlpack__(dl_device=(2, 0))
  with pytest.raises(TypeError):
    x.__dlpack__(None)                # keyword-only, as the standard writes it


def test_dlpack_of_a_tracer_is_a_concretization_error():
  with pytest.raises(jaxlite.errors.ConcretizationTypeError, match="__dlpack__"):
    jaxlite.jit(lambda y: y.__dlpack__())(jnp.ones(2))


def test_asarray_copy_true_copies_an_array():
  x = jnp.arange(3.0)
  assert jnp.asarray(x) is x and jnp.asarray(x, copy=False) is x
  y = jnp.asarray(x, copy=True)
  assert y is not x and not np.shares_memory(y._value, x._value)
  np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
  a = np.arange(3.0, dtype=np.float32)
  z = jnp.asarray(a, copy=False)      # JAX copies a NumPy array whatever copy= says
  a[0] = 9.0
  assert float(z[0]) == 0.0


def test_to_device():
  x = jnp.arange(3.0)
  device = jaxlite.devices()[0]
  assert x.to_device(device).device == device and x.to_device(None).device == device
  with pytest.raises(NotImplementedError, match="stream"):
    x.to_device(device, stream=1)
  with pytest.raises(ValueError, match="invalid value: cpu"):
    x.to_device("cpu")


@pytest.mark.parametrize("name,nin,identity", [
    ("add", 2, 0), ("multiply", 2, 1), ("subtract", 2, None), ("maximum", 2, None),
    ("minimum", 2, None), ("bitwise_and", 2, -1), ("bitwise_or", 2, 0),
    ("bitwise_xor", 2, 0), ("logical_and", 2, True), ("logical_or", 2, False),
    ("logical_xor", 2, False), ("logaddexp", 2, -np.inf), ("logaddexp2", 2, -np.inf),
    ("negative", 1, None)])
def test_ufunc_objects_are_jaxs(name, nin, identity):
  """The names JAX makes ``jnp.ufunc`` objects, with JAX's ``nin`` and identities (those
  of NumPy's ufuncs); their methods agree with NumPy's."""
  u = getattr(jnp, name)
  assert isinstance(u, jnp.ufunc) and repr(u) == f"<jnp.ufunc '{name}'>"
  assert (u.nin, u.nout, u.identity) == (nin, 1, identity)
  if name.startswith(("logical", "bitwise")):
    a = np.array([[3, 5, 6], [1, 7, 2]], np.int32)
  else:
    a = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
  ref = getattr(np, name)
  if nin == 1:
    np.testing.assert_allclose(np.asarray(u(a)), ref(a))
    return
  np.testing.assert_allclose(np.asarray(u.reduce(a, axis=1)), ref.reduce(a, axis=1),
                             rtol=1e-6)
  np.testing.assert_allclose(np.asarray(u.accumulate(a, axis=1)),
                             ref.accumulate(a, axis=1), rtol=1e-6)
  np.testing.assert_allclose(np.asarray(u.outer(a[0], a[1])), ref.outer(a[0], a[1]),
                             rtol=1e-6)
  want = a[0].copy()
  ref.at(want, [0, 0, 2], a[1, 0])
  np.testing.assert_allclose(np.asarray(u.at(a[0], np.array([0, 0, 2]), a[1, 0],
                                             inplace=False)), want, rtol=1e-6)
