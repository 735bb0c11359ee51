"""Tier 0 implementations of the linalg, FFT, convolution and windowed primitives.

Linear algebra uses NumPy's stacked LAPACK routines, one call for the whole batch; their
last bits depend on the LAPACK/BLAS build and the CPU kernel it picks, as jaxlib's do.
LU is written out (NumPy has none) as a loop over columns vectorised over the
batch. Convolution extracts
windows with ``sliding_window_view`` and contracts them with one ``einsum`` per call.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from jaxlite._src.core import core
from jaxlite._src.backends.numpy import codegen
from jaxlite._src.base import dtypes
from jaxlite._src.backends.numpy.impls import impl_rules
from jaxlite._src.lax import convolution as conv
from jaxlite._src.lax import fft as lax_fft
from jaxlite._src.lax import linalg as la
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax import windowed as win


# ----------------------------------------------------------------------------- linalg

def _stacked(fn, x):
  """``fn`` (a stack of matrices -> list of arrays) on the stack ``x``, with NaN outputs
  for the matrices where LAPACK fails (not positive definite, no convergence), as XLA
  gives them. NumPy raises for the whole stack then, so that stack is redone one matrix
  at a time."""
  with np.errstate(all="ignore"):
    try:
      return fn(x)
    except np.linalg.LinAlgError:
      failed = [np.full_like(t, np.nan) for t in fn(np.eye(*x.shape[-2:], dtype=x.dtype))]
      outs = [_or_failed(fn, m, failed) for m in x.reshape((-1,) + x.shape[-2:])]
      return [np.stack(o).reshape(x.shape[:-2] + o[0].shape) for o in zip(*outs)]


def _or_failed(fn, m, failed):
  try:
    return fn(m)
  except np.linalg.LinAlgError:
    return failed


def _cholesky(x):
  return _stacked(lambda a: [np.linalg.cholesky(a)], x)[0]


def _triangular_solve(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  n = a.shape[-1]
  mask = np.tri(n, dtype=bool) if lower else np.tri(n, dtype=bool).T
  a = np.where(mask, a, 0)
  if unit_diagonal:
    a = np.where(np.eye(n, dtype=bool), 1, a).astype(b.dtype)
  if conjugate_a:
    a = a.conj()
  if transpose_a:
    a = np.swapaxes(a, -1, -2)
  lower = lower != transpose_a   # (whether a, as it now is, is lower triangular)
  if left_side:
    return _solve_triangular(a, b, lower).astype(b.dtype)
  # x a = b  <=>  a^T x^T = b^T
  out = _solve_triangular(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not lower)
  return np.swapaxes(out, -1, -2).astype(b.dtype)


# Stacks of matrices up to this order are solved by substitution over the whole stack at
# once (one NumPy step per row); larger ones one matrix at a time by LAPACK.
_SUBSTITUTE_UP_TO = 16


def _solve_triangular(a, b, lower):
  """x with ``a @ x = b``, ``a`` triangular: by substitution (LAPACK's ``trtrs`` per matrix,
  or row by row over the stack), so that a triangular right side gives an exactly
  triangular ``x``, as XLA's solve does (a general LU solve pivots and fills the other
  triangle with rounding). A singular ``a`` is substituted through too, giving XLA's inf
  and nan where LAPACK refuses it."""
  batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
  dtype = np.result_type(a, b)
  n = a.shape[-1]
  if n > _SUBSTITUTE_UP_TO or not batch:
    import scipy.linalg   # (loaded on first use: `import jaxlite` stays light)
    count = (int(np.prod(batch)),)   # -1 fails for empty matrices
    a_b = np.broadcast_to(a, batch + a.shape[-2:]).reshape(count + a.shape[-2:])
    b_b = np.broadcast_to(b, batch + b.shape[-2:]).reshape(count + b.shape[-2:])
    try:
      x = np.stack([scipy.linalg.solve_triangular(m, v, lower=lower, check_finite=False)
                    for m, v in zip(a_b, b_b)]) if len(a_b) else np.zeros(b_b.shape, dtype)
      return x.reshape(batch + b.shape[-2:]).astype(dtype, copy=False)
    except np.linalg.LinAlgError:   # singular: substituted below, as XLA does
      pass
  x = np.zeros(batch + b.shape[-2:], dtype)
  with np.errstate(all="ignore"):
    for i in (range(n) if lower else range(n - 1, -1, -1)):
      known = slice(0, i) if lower else slice(i + 1, n)
      total = (a[..., i, known, None] * x[..., known, :]).sum(-2)
      x[..., i, :] = (b[..., i, :] - total) / a[..., i, i, None]
  return x


def _lu(x):
  *batch, m, n = x.shape
  a = np.array(x.reshape((int(np.prod(batch)), m, n)), copy=True)   # -1 fails when empty
  nb = a.shape[0]
  k = min(m, n)
  pivots = np.zeros((nb, k), np.int32)
  perm = np.tile(np.arange(m, dtype=np.int32), (nb, 1))
  rows = np.arange(nb)
  for j in range(k):
    p = j + np.argmax(np.abs(a[:, j:, j]), axis=1)
    pivots[:, j] = p
    a[rows, j], a[rows, p] = a[rows, p], a[rows, j].copy()
    perm[rows, j], perm[rows, p] = perm[rows, p], perm[rows, j].copy()
    diag = a[:, j, j]
    safe = np.where(diag == 0, 1, diag)
    a[:, j + 1:, j] = np.where(diag[:, None] == 0, 0, a[:, j + 1:, j] / safe[:, None])
    a[:, j + 1:, j + 1:] -= a[:, j + 1:, j, None] * a[:, j, None, j + 1:]
  return [a.reshape(x.shape), pivots.reshape((*batch, k)), perm.reshape((*batch, m))]


def _qr(x, *, pivoting, full_matrices, use_magma):
  q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
  return [q.astype(x.dtype), r.astype(x.dtype)]


def _geqrf(x):
  # NumPy's raw mode is LAPACK's geqrf in Fortran order: the packed matrix transposed
  h, taus = np.linalg.qr(x, mode="raw")
  return [np.ascontiguousarray(np.swapaxes(h, -1, -2)).astype(x.dtype), taus.astype(x.dtype)]


def _svd(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
  real = la._real_dtype(x.dtype)

  def svd(a):
    if not compute_uv:
      return [np.linalg.svd(a, compute_uv=False).astype(real)]
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return [s.astype(real), u, vh]
  return _stacked(svd, x)


def _eigh(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  real = la._real_dtype(x.dtype)

  def eigh(a):
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return [v, w.astype(real)]
  return _stacked(eigh, x)


def _eig(x, *, compute_left_eigenvectors, compute_right_eigenvectors, use_magma):
  ctype = np.complex128 if la._real_dtype(x.dtype) == np.float64 else np.complex64
  w, vr = np.linalg.eig(x)
  outs = [w.astype(ctype)]
  if compute_left_eigenvectors:
    # rows of vr^{-1} are left eigenvectors (y^H x = w y^H): conjugate, normalise columns
    with np.errstate(all="ignore"):   # a defective matrix: V is (nearly) singular
      vl = np.swapaxes(np.linalg.inv(vr), -1, -2).conj()
      vl = vl / np.linalg.norm(vl, axis=-2, keepdims=True)
    outs.append(vl.astype(ctype))
  if compute_right_eigenvectors:
    outs.append(vr.astype(ctype))
  return outs


def _schur(x, *, compute_schur_vectors, sort_eig_vals, select_callable):
  """LAPACK's gees through SciPy (as jaxlib calls it), one matrix at a time; a matrix
  that is not finite or where gees fails gives NaNs, as JAX's lowering does."""
  import scipy.linalg   # (loaded on first use: `import jaxlite` stays light)
  n = x.shape[-1]
  mats = x.reshape((int(np.prod(x.shape[:-2])), n, n))   # -1 fails when empty
  t, z = np.empty_like(mats), np.empty_like(mats)
  output = "complex" if np.iscomplexobj(x) else "real"
  for i, m in enumerate(mats):
    try:
      if not np.all(np.isfinite(m)):
        raise np.linalg.LinAlgError
      t[i], z[i] = scipy.linalg.schur(m, output=output, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
      t[i], z[i] = np.nan, np.nan
  outs = [t.reshape(x.shape), z.reshape(x.shape)]
  return outs if compute_schur_vectors else outs[:1]


def _hessenberg(x):
  """LAPACK's gehrd through SciPy (as jaxlib calls it), one matrix at a time."""
  from scipy.linalg import lapack   # (loaded on first use: `import jaxlite` stays light)
  n = x.shape[-1]
  mats = x.reshape((int(np.prod(x.shape[:-2])), n, n))   # -1 fails when empty
  out, taus = np.empty_like(mats), np.zeros((len(mats), max(n - 1, 0)), x.dtype)
  gehrd = lapack.get_lapack_funcs("gehrd", dtype=x.dtype)
  for i, m in enumerate(mats):
    if n <= 1:
      out[i] = m
      continue
    out[i], taus[i], _ = gehrd(m)
  return [out.reshape(x.shape), taus.reshape(x.shape[:-2] + (max(n - 1, 0),))]


impl_rules.update({
    la.cholesky_p: _cholesky,
    la.triangular_solve_p: _triangular_solve,
    la.lu_p: _lu,
    la.qr_p: _qr,
    la.geqrf_p: _geqrf,
    la.svd_p: _svd,
    la.eigh_p: _eigh,
    la.eig_p: _eig,
    la.schur_p: _schur,
    la.hessenberg_p: _hessenberg,
})


# ----------------------------------------------------------------------------- fft

def _fft(x, *, fft_type, fft_lengths):
  # (NumPy's fft warns from its own module, which core.QUIET_FILTER leaves alone)
  with np.errstate(all="ignore"):
    return _numpy_fft(x, fft_type, fft_lengths)


def _numpy_fft(x, fft_type, fft_lengths):
  axes = tuple(range(-len(fft_lengths), 0))
  T = lax_fft.FftType
  if fft_type == T.FFT:
    out, dtype = np.fft.fftn(x, axes=axes), x.dtype
  elif fft_type == T.IFFT:
    out, dtype = np.fft.ifftn(x, axes=axes), x.dtype
  elif fft_type == T.RFFT:
    out, dtype = np.fft.rfftn(x, axes=axes), lax_fft._complex_dtype(x.dtype)
  else:
    out = np.fft.irfftn(x, s=fft_lengths, axes=axes)
    dtype = lax_fft._real_dtype(x.dtype)
  return np.asarray(out).astype(dtype, copy=False)


impl_rules[lax_fft.fft_p] = _fft


# ----------------------------------------------------------------------------- windows

def _dilate_and_pad(x, fill, padding, dilation):
  """``x`` with ``dilation - 1`` fills between elements and (low, high) padding (negative
  padding crops), as lax.pad with interior padding."""
  shape = [0 if d == 0 else (d - 1) * r + 1 for d, r in zip(x.shape, dilation)]
  full = [max(lo, 0) + s + max(hi, 0) for s, (lo, hi) in zip(shape, padding)]
  out = np.full(full, fill, dtype=x.dtype)
  out[tuple(slice(max(lo, 0), max(lo, 0) + s, r)
            for s, (lo, _), r in zip(shape, padding, dilation))] = x
  return out[tuple(slice(-min(lo, 0), f + min(hi, 0)) for f, (lo, hi) in zip(full, padding))]


def _window_view(x, window, strides, dilation, axes):
  """Windows along ``axes``: ``x``'s axes (strided) then one axis per window axis."""
  spans = [(w - 1) * d + 1 for w, d in zip(window, dilation)]
  view = sliding_window_view(x, spans, axis=axes)
  index = [slice(None)] * x.ndim + [slice(None, None, d) for d in dilation]
  for a, s in zip(axes, strides):
    index[a] = slice(None, None, s)
  return view[tuple(index)]


def _reduce_window(np_reduce, fill_of):
  def impl(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    fill = fill_of(x.dtype)
    padded = _dilate_and_pad(x, fill, padding, base_dilation)
    out_shape = win._window_shape("reduce_window", _Aval(x.shape), window_dimensions,
                                  window_strides, padding, base_dilation, window_dilation)
    if any(n == 0 for n in out_shape) or any(
        s < (w - 1) * d + 1 for s, w, d in zip(padded.shape, window_dimensions,
                                                window_dilation)):
      return np.full(out_shape, fill, x.dtype)
    view = _window_view(padded, window_dimensions, window_strides, window_dilation,
                        tuple(range(x.ndim)))
    out = np_reduce(view, axis=tuple(range(x.ndim, 2 * x.ndim)))
    return np.asarray(out).astype(x.dtype, copy=False)
  return impl


class _Aval:
  def __init__(self, shape):
    self.shape, self.ndim = shape, len(shape)


impl_rules[win.reduce_window_sum_p] = _reduce_window(np.sum, lambda d: 0)
impl_rules[win.reduce_window_max_p] = _reduce_window(np.max, dtypes.lowest)
impl_rules[win.reduce_window_min_p] = _reduce_window(np.min, dtypes.highest)


def _window_rows(x, init, *, window_dimensions, window_strides, padding, base_dilation,
                 window_dilation):
  """The elements of every window of ``x`` (padded with ``init``) as a (window size,
  number of windows) array: row i holds the i-th element of each window."""
  padded = _dilate_and_pad(x, init, padding, base_dilation)
  view = _window_view(padded, window_dimensions, window_strides, window_dilation,
                      tuple(range(x.ndim)))
  count = int(np.prod(view.shape[:x.ndim], dtype=np.int64))
  return np.ascontiguousarray(view.reshape(count, -1).T)


def _reduce_window_computation(*args, jaxpr, consts, **params):
  # the windows' elements as rows, then the tree reduction that the reduce primitive
  # uses on tier 0: the init value applied once per window and padding skipped, as
  # XLA's CPU backend does (it differs only where init_value is not an identity)
  n = len(args) // 2
  operands, inits = [np.asarray(x) for x in args[:n]], [np.asarray(i) for i in args[n:]]
  out_shape = win._window_shape("reduce_window", _Aval(operands[0].shape), **params)
  if 0 in out_shape:
    return [np.full(out_shape, i, i.dtype) for i in inits]
  rows = [_window_rows(x, i, **params) for x, i in zip(operands, inits)]
  padded = any(p != (0, 0) for p in params["padding"]) or any(
      d != 1 for d in params["base_dilation"])
  mask = [_window_rows(np.ones(operands[0].shape, bool), False, **params)] if padded else []
  avals = [core.ShapedArray(v.shape, v.dtype) for v in rows + inits + mask]
  tree = red.reduce_as_tree_jaxpr(avals, jaxpr, consts, (0,), masked=padded)
  outs = codegen.compiled(tree)(*rows, *inits, *mask)
  return [np.asarray(o).reshape(out_shape) for o in outs]


impl_rules[win.reduce_window_p] = _reduce_window_computation


# ----------------------------------------------------------------------------- convolution

def _conv(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
          dimension_numbers, feature_group_count, batch_group_count, precision,
          preferred_element_type, out_sharding):
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  dtype = np.dtype(preferred_element_type or lhs.dtype)
  # integers accumulate exactly (wrapping at the end); half floats in float32, and boolean
  # or integer operands in a floating preferred type, as XLA
  compute = (np.int64 if dtype.kind in "iub" else
             dtype if lhs.dtype.kind in "biu" else
             np.float32 if dtypes._kind(lhs.dtype) == "f" and lhs.dtype.itemsize < 4 else None)
  x = np.transpose(lhs, lhs_spec)   # N, C, spatial...
  k = np.transpose(rhs, rhs_spec)   # O, I, spatial...
  if compute is not None:
    x, k = x.astype(compute), k.astype(compute)
  n = x.ndim - 2
  N, C = x.shape[:2]
  O, I = k.shape[:2]
  G, B = feature_group_count, batch_group_count
  zero = np.zeros((), x.dtype)
  x = _dilate_and_pad(x, zero, ((0, 0), (0, 0)) + tuple(padding), (1, 1) + tuple(lhs_dilation))
  out_spatial = [
      conv._window_out(lhs.shape[lhs_spec[i + 2]], rhs.shape[rhs_spec[i + 2]],
                       window_strides[i], *padding[i], lhs_dilation[i], rhs_dilation[i])
      for i in range(n)]
  if any(o == 0 for o in out_spatial):
    canon = np.zeros((N // B, O) + tuple(out_spatial), dtype)
  else:
    axes = tuple(range(2, 2 + n))
    patches = _window_view(x, k.shape[2:], window_strides, rhs_dilation, axes)
    patches = patches[(slice(None), slice(None)) + tuple(slice(0, o) for o in out_spatial)]
    sp = "".join(chr(ord("p") + i) for i in range(n))   # output spatial letters
    kw = "".join(chr(ord("d") + i) for i in range(n))   # window letters
    # patches: (N, C, out..., k...); groups are the major part of the split axes
    patches = patches.reshape((B, N // B, G, C // G) + patches.shape[2:])
    kernel = k.reshape((B * G, O // (B * G), I) + k.shape[2:])
    kernel = kernel.reshape((B, G, O // (B * G), I) + k.shape[2:])
    spec = f"bngc{sp}{kw},bgoc{kw}->nbgo{sp}"
    with np.errstate(all="ignore"):   # (einsum warns from NumPy's module: see _fft)
      canon = np.einsum(spec, patches, kernel, optimize=True)
    canon = canon.reshape((N // B, O) + tuple(out_spatial))
  return np.transpose(canon, np.argsort(out_spec)).astype(dtype, copy=False)


impl_rules[conv.conv_general_dilated_p] = _conv
