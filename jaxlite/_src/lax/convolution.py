"""``conv_general_dilated``: N-d convolution with strides, padding, dilations and groups;
and, composed from it, ``conv_transpose``, ``conv_general_dilated_patches``,
``conv_general_dilated_local`` and the output-shape helpers (``conv_shape_tuple``, ...).

The primitive is bilinear, so its JVP is a sum of two convolutions and reverse mode needs
a transpose for each operand; both transposes are convolutions again (JAX's rules,
including the reshapes that move feature groups and batch groups between axes).
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, NamedTuple

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import precision as precision_lib
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax import shapes as sh
from jaxlite._src.lax.sharding_constraint import (canonicalize_out_sharding,
                                                  constrain)
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching


class ConvDimensionNumbers(NamedTuple):
  """Axis positions: ``lhs_spec`` = (batch, feature, spatial...), ``rhs_spec`` = (out
  feature, in feature, spatial...), ``out_spec`` = (batch, feature, spatial...)."""
  lhs_spec: tuple
  rhs_spec: tuple
  out_spec: tuple


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
  """Canonicalise ``dimension_numbers`` (None, a ConvDimensionNumbers, or a triple of
  strings such as ``('NCHW', 'OIHW', 'NCHW')``) for operands of these shapes."""
  if isinstance(dimension_numbers, ConvDimensionNumbers):
    return dimension_numbers
  ndim = len(lhs_shape)
  if len(rhs_shape) != ndim:
    raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got {len(lhs_shape)} "
                    f"and {len(rhs_shape)}.")
  if dimension_numbers is None:
    iota = tuple(range(ndim))
    return ConvDimensionNumbers(iota, iota, iota)
  if not (isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3):
    raise TypeError("dimension_numbers must be None, a ConvDimensionNumbers or a tuple of "
                    f"three strings, got {dimension_numbers!r}.")
  specs = tuple(dimension_numbers)
  if all(isinstance(s, str) for s in specs):
    for s in specs:
      if len(s) != ndim:
        raise TypeError(f"convolution dimension_numbers {specs} must have one letter per "
                        f"operand axis ({ndim}).")
    return ConvDimensionNumbers(*_conv_general_permutations(specs))
  return ConvDimensionNumbers(*(tuple(operator.index(i) for i in s) for s in specs))


def _conv_general_permutations(specs):
  lhs, rhs, out = specs
  for spec, chars, name in ((lhs, "NC", "lhs"), (rhs, "OI", "rhs"), (out, "NC", "out")):
    for c in chars:
      if spec.count(c) != 1:
        raise TypeError(f"convolution {name} spec {spec!r} must contain '{c}' once.")
  if set(lhs) - set("NC") != set(rhs) - set("OI") or set(out) - set("NC") != set(rhs) - set(
      "OI"):
    raise TypeError(f"convolution dimension_numbers {specs}: the spatial letters of lhs, "
                    "rhs and out must be the same.")
  # spatial axes are ordered as they appear in the rhs spec
  def perm(spec, chars):
    spatial = sorted((i for i, c in enumerate(spec) if c not in chars),
                     key=lambda i: rhs.index(spec[i]))
    return (spec.index(chars[0]), spec.index(chars[1])) + tuple(spatial)
  return perm(lhs, "NC"), perm(rhs, "OI"), perm(out, "NC")


def dilate_shape(shape, dilation):
  return tuple(0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, dilation))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
  """Explicit (low, high) pairs for ``'SAME'``, ``'SAME_LOWER'`` or ``'VALID'``."""
  kind = padding.upper()
  if kind == "VALID":
    return [(0, 0)] * len(in_shape)
  if kind in ("SAME", "SAME_LOWER"):
    out = [-(-d // s) for d, s in zip(in_shape, window_strides)]
    sizes = [max((o - 1) * s + w - d, 0)
             for o, s, w, d in zip(out, window_strides, window_shape, in_shape)]
    if kind == "SAME":
      return [(p // 2, p - p // 2) for p in sizes]
    return [(p - p // 2, p // 2) for p in sizes]
  raise RuntimeError(f"Unrecognized padding type: expected 'VALID' or 'SAME', got {padding}.")


def _window_out(in_size, window, stride, lo, hi, base_dil, win_dil):
  padded = dilate_shape((in_size,), (base_dil,))[0] + lo + hi
  w = dilate_shape((window,), (win_dil,))[0]
  return 0 if padded < w else (padded - w) // stride + 1


# ----------------------------------------------------------------------------- the primitive
conv_general_dilated_p = Primitive("conv_general_dilated")


def _check_groups(lhs, rhs, dimension_numbers, feature_group_count, batch_group_count):
  """JAX's checks of the feature and batch group counts against the operand shapes."""
  lhs_spec, rhs_spec, _ = dimension_numbers
  G, B = feature_group_count, batch_group_count
  lhs_feat, rhs_in = lhs.shape[lhs_spec[1]], rhs.shape[rhs_spec[1]]
  out_feat, batch = rhs.shape[rhs_spec[0]], lhs.shape[lhs_spec[0]]
  if not G > 0:
    raise ValueError(f"conv_general_dilated feature_group_count must be a positive integer, "
                     f"got {G}.")
  if lhs_feat % G:
    raise ValueError(f"conv_general_dilated feature_group_count must divide lhs feature "
                     f"dimension size, but {G} does not divide {lhs_feat}.")
  if lhs_feat // G != rhs_in:
    raise ValueError(f"conv_general_dilated lhs feature dimension size divided by "
                     f"feature_group_count must equal the rhs input feature dimension size, "
                     f"but {lhs_feat} // {G} != {rhs_in}.")
  if out_feat % G:
    raise ValueError(f"conv_general_dilated rhs output feature dimension size must be a "
                     f"multiple of feature_group_count, but {out_feat} is not a multiple of "
                     f"{G}.")
  if not B > 0:
    raise ValueError(f"conv_general_dilated batch_group_count must be a positive integer, "
                     f"got {B}.")
  if batch % B:
    raise ValueError(f"conv_general_dilated batch_group_count must divide lhs batch "
                     f"dimension size, but {B} does not divide {batch}.")
  if out_feat % B:
    raise ValueError(f"conv_general_dilated rhs output feature dimension size must be a "
                     f"multiple of batch_group_count, but {out_feat} is not a multiple of "
                     f"{B}.")
  if G > 1 and B > 1:
    raise ValueError(f"At most one of batch_group_count and feature_group_count may be > 1, "
                     f"got batch_group_count={B} and feature_group_count={G}")


def _validate_preferred_element_type(input_dtype, preferred_element_type):
  """JAX's rules for a convolution's preferred type: within the input's kind (integers
  may also become floats), of the same signedness, and no narrower."""
  if not (dtypes.issubdtype(input_dtype, np.integer)
          and dtypes.issubdtype(preferred_element_type, np.floating)):
    if any(dtypes.issubdtype(input_dtype, t) and not dtypes.issubdtype(preferred_element_type, t)
           for t in (np.integer, np.floating, np.complexfloating)):
      raise TypeError("Input type is incompatible with `preferred_element_type`. The "
                      "compatible combinations of (input_type, preferred_element_type) are "
                      "(integral, integral), (integral, floating), (floating, floating), "
                      "(complex, complex.")
    if dtypes.issubdtype(input_dtype, np.signedinteger) and not dtypes.issubdtype(
        preferred_element_type, np.signedinteger):
      raise TypeError("`preferred_element_type` must have the same signedness as the "
                      "original type.")
  if np.dtype(preferred_element_type).itemsize < np.dtype(input_dtype).itemsize:
    raise TypeError("`preferred_element_type` must not be narrower than the original type.")


@conv_general_dilated_p.def_abstract_eval
def _conv_rule(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision,
               preferred_element_type, out_sharding):
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  _check_groups(lhs, rhs, dimension_numbers, feature_group_count, batch_group_count)
  n = lhs.ndim - 2
  # JAX: a TypeError for the pads, ValueErrors for the others (its lowering's, for the
  # dilations)
  for name, v, error in (("window_strides", window_strides, ValueError),
                         ("padding", padding, TypeError),
                         ("lhs_dilation", lhs_dilation, ValueError),
                         ("rhs_dilation", rhs_dilation, ValueError)):
    if len(v) != n:
      raise error(f"conv_general_dilated {name} must have one entry per spatial axis "
                  f"({n}), got {v}.")
  # as JAX: the shape rule's ValueErrors come before the dtype rule's TypeError
  if lhs.dtype != rhs.dtype:
    raise TypeError(f"conv_general_dilated requires operands of one dtype, got "
                    f"{lhs.dtype.name} and {rhs.dtype.name}.")
  if preferred_element_type is not None:
    _validate_preferred_element_type(lhs.dtype, preferred_element_type)
  B = batch_group_count
  out_feat = rhs.shape[rhs_spec[0]]
  batch = lhs.shape[lhs_spec[0]]
  spatial = [_window_out(lhs.shape[lhs_spec[i + 2]], rhs.shape[rhs_spec[i + 2]],
                         window_strides[i], *padding[i], lhs_dilation[i], rhs_dilation[i])
             for i in range(n)]
  canonical = [batch // B, out_feat] + spatial
  shape = [0] * lhs.ndim
  for i, axis in enumerate(out_spec):
    shape[axis] = canonical[i]
  return ShapedArray(shape, preferred_element_type or lhs.dtype)


core.param_printers[(conv_general_dilated_p, "padding")] = lambda v: str(
    tuple(tuple(int(x) for x in p) for p in v))


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
  """General dilated convolution (``jax.lax.conv_general_dilated``).

  Parameters
  ----------
  lhs, rhs : arrays
    Input and kernel, laid out as ``dimension_numbers`` says (default NC... / OI...).
  window_strides : sequence of int
  padding : 'SAME', 'SAME_LOWER', 'VALID' or a sequence of (low, high) pairs
  lhs_dilation, rhs_dilation : sequence of int, optional
    Input dilation (transposed convolution) and kernel (atrous) dilation.
  dimension_numbers : None, ConvDimensionNumbers or (lhs, rhs, out) strings
  feature_group_count, batch_group_count : int
  precision : None, str, Precision, a pair of them, DotAlgorithm or DotAlgorithmPreset
    On accelerators, how float32 operands are multiplied (see ``lax.dot_general``);
    None takes ``jax.default_matmul_precision``. The CPU and tier 0 compute in full
    precision whatever it says.
  preferred_element_type : dtype, optional
    The accumulation and result type: of the input's kind (an integer input may also
    give floats), its signedness, and no narrower.
  out_sharding : NamedSharding, optional
    How to lay out the result over the devices of its mesh
    (``lax.with_sharding_constraint``); None, the default, leaves it to the compiler. It
    changes no value.

  Returns
  -------
  array laid out as ``dimension_numbers``' output spec.
  """
  lhs_shape, rhs_shape = core.get_aval(lhs).shape, core.get_aval(rhs).shape
  dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
  sharding = canonicalize_out_sharding(out_sharding, "dot_general")   # (JAX's name for it)
  n = len(lhs_shape) - 2
  lhs_dilation = (1,) * n if lhs_dilation is None else tuple(map(int, lhs_dilation))
  rhs_dilation = (1,) * n if rhs_dilation is None else tuple(map(int, rhs_dilation))
  window_strides = tuple(map(int, window_strides))
  if isinstance(padding, str):
    if padding.upper() != "VALID" and any(d != 1 for d in lhs_dilation):
      raise ValueError("String padding is not implemented for transposed convolution "
                       "using this op. Please either exactly specify the required padding "
                       "or use conv_transpose.")
    rhs_spatial = [rhs_shape[i] for i in dnums.rhs_spec[2:]]
    effective = dilate_shape(rhs_spatial, rhs_dilation)
    padding = padtype_to_pads([lhs_shape[i] for i in dnums.lhs_spec[2:]], effective,
                              window_strides, padding)
  padding = tuple((int(lo), int(hi)) for lo, hi in padding)
  pref = None if preferred_element_type is None else dtypes.canonicalize_dtype(
      preferred_element_type)
  out = conv_general_dilated_p.bind(
      lhs, rhs, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
      rhs_dilation=rhs_dilation, dimension_numbers=dnums,
      feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
      precision=precision_lib.canonicalize_precision(precision),
      preferred_element_type=pref, out_sharding=None)
  return out if sharding is None else constrain(out, sharding)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
  """Convolution with NC.../OI... layouts and no dilation (``jax.lax.conv``)."""
  return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                              preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
  """Convolution with explicit padding and dilations, NC.../OI... layouts."""
  return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=precision,
                              preferred_element_type=preferred_element_type)


# ------------------------------------------------- shapes, transposed, patch and local forms
ConvGeneralDilatedDimensionNumbers = Any


def conv_general_permutations(dimension_numbers):
  """The axis permutations ``(lhs_perm, rhs_perm, out_perm)`` that bring operands laid
  out as the ``(lhs, rhs, out)`` spec strings into NC.../OI.../NC... order."""
  specs = tuple(dimension_numbers)
  if len(specs) != 3 or not all(isinstance(s, str) for s in specs):
    raise TypeError("dimension_numbers must be a tuple of three strings, got "
                    f"{dimension_numbers!r}")
  return _conv_general_permutations(specs)


def _stride_shape(in_shape, window, strides):
  return tuple((int(i) - int(w)) // int(s) + 1 for i, w, s in zip(in_shape, window, strides))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
  """Output shape of a convolution with NC.../OI... layouts and explicit or named
  padding."""
  if isinstance(pads, str):
    pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
  if len(pads) != len(lhs_shape) - 2:
    raise ValueError(f"Wrong number of explicit pads for convolution: expected "
                     f"{len(lhs_shape) - 2}, got {len(pads)}.")
  padded = [d + lo + hi for d, (lo, hi) in zip(lhs_shape[2:], pads)]
  if any(p < 0 for p in padded):
    raise ValueError("Negative padding is larger than the size of the corresponding "
                     f"dimension: got padding={pads}.")
  space = tuple(builtins.max(0, d) for d in _stride_shape(padded, rhs_shape[2:], strides))
  batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
  return (int(batch), int(rhs_shape[0])) + space


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
  """Output shape of ``conv_general_dilated`` (no dilation) in the output layout."""
  lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
  lhs_t, rhs_t = np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm)
  out_t = conv_shape_tuple(tuple(lhs_t), tuple(rhs_t), window_strides, padding)
  return tuple(int(d) for d in np.take(out_t, np.argsort(out_perm)))


def _conv_transpose_padding(k, s, padding):
  if padding == "SAME":
    pad_len = k + s - 2
    pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
  elif padding == "VALID":
    pad_len = k + s - 2 + builtins.max(k - s, 0)
    pad_a = k - 1
  elif isinstance(padding, tuple):
    pads = tuple(k - p - 1 for p in padding)
    pad_a, pad_len = pads[0], sum(pads)
  else:
    raise ValueError(f"Invalid padding mode: {padding}")
  return pad_a, pad_len - pad_a


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
  """Output shape of ``conv_transpose`` in the output layout."""
  lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
  lhs_t, rhs_t = np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm)
  if isinstance(padding, str):
    padding = [_conv_transpose_padding(int(k), int(s), padding)
               for k, s in zip(rhs_t[2:], window_strides)]
  pad_sums = [int(np.sum(p)) for p in padding]
  space = [(int(i) - 1) * int(s) - int(k) + 2 + p
           for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, pad_sums)]
  out_t = (int(lhs_t[0]), int(rhs_t[0])) + tuple(space)
  return tuple(int(d) for d in np.take(out_t, np.argsort(out_perm)))


_TRANSPOSE_DEFAULT_DNUMS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                            4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
  """Transposed ("deconvolution") convolution, computed as a convolution with the
  input dilated by ``strides`` (``jax.lax.conv_transpose``; layouts default to
  NHWC/HWIO/NHWC)."""
  lhs, rhs = _operand(lhs), _operand(rhs)
  la, ra = core.get_aval(lhs), core.get_aval(rhs)
  ndims = la.ndim
  if ndims != ra.ndim or ndims < 2:
    raise ValueError("conv_transpose requires lhs and rhs of equal rank >= 2")
  if dimension_numbers is None:
    if ndims not in _TRANSPOSE_DEFAULT_DNUMS:
      raise ValueError("No 4+ dimensional dimension_number defaults.")
    dimension_numbers = _TRANSPOSE_DEFAULT_DNUMS[ndims]
  dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
  k_sdims = [ra.shape[i] for i in dn.rhs_spec[2:]]
  rhs_dilation = (1,) * (ndims - 2) if rhs_dilation is None else tuple(rhs_dilation)
  if use_consistent_padding or (isinstance(padding, str) and padding in {"SAME", "VALID"}):
    eff = [(k - 1) * r + 1 for k, r in zip(k_sdims, rhs_dilation)]
    rep = [padding] * len(strides) if isinstance(padding, str) else padding
    pads = tuple(_conv_transpose_padding(k, s, p) for k, s, p in zip(eff, strides, rep))
  else:
    pads = padding
  if transpose_kernel:
    rhs = sh.rev(rhs, tuple(dn.rhs_spec[2:]))
    perm = list(range(ndims))
    perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
    rhs = sh.transpose(rhs, tuple(perm))
  return conv_general_dilated(lhs, rhs, (1,) * (ndims - 2), pads, strides,
                              rhs_dilation, dn, precision=precision,
                              preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                 lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
  """The patches a convolution with a kernel of ``filter_shape`` would see, flattened
  into the feature axis (feature-major: channel ``c``, then the window position)."""
  lhs = _operand(lhs)
  la = core.get_aval(lhs)
  filter_shape = tuple(int(d) for d in filter_shape)
  dn = conv_dimension_numbers(la.shape, (1, 1) + filter_shape, dimension_numbers)
  spatial = math.prod(filter_shape)
  n_channels = la.shape[dn.lhs_spec[1]]
  eye = Array(np.eye(spatial, dtype=la.dtype))
  rhs = sh.broadcast_in_dim(eye, (n_channels, spatial, spatial), (1, 2))
  rhs = sh.reshape(rhs, (n_channels * spatial, 1) + filter_shape)
  # lay the kernel out as dn.rhs_spec says: axis rhs_spec[i] holds logical axis i
  perm = [0] * len(dn.rhs_spec)
  for logical, physical in enumerate(dn.rhs_spec):
    perm[physical] = logical
  rhs = sh.transpose(rhs, tuple(perm))
  # the kernel is exact (ones and zeros): the precision is the input's alone
  return conv_general_dilated(
      lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn,
      feature_group_count=n_channels,
      precision=None if precision is None else (precision, precision_lib.Precision.DEFAULT),
      preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None,
                               dimension_numbers=None, precision=None):
  """Locally connected ("unshared") convolution: a different kernel at every output
  position. ``rhs`` holds, at each output position, a ``(C * prod(filter_shape), O)``
  kernel laid out as ``dimension_numbers``' rhs spec."""
  lhs, rhs = _operand(lhs), _operand(rhs)
  c_precision = precision_lib.canonicalize_precision(precision)
  if c_precision is not None and type(c_precision) is not tuple:
    raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
  patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                         lhs_dilation, rhs_dilation, dimension_numbers,
                                         precision=c_precision and c_precision[0])
  _, rhs_spec, out_spec = conv_dimension_numbers(
      core.get_aval(lhs).shape, (1, 1) + tuple(filter_shape), dimension_numbers)
  lhs_b, rhs_b = list(out_spec[2:]), list(rhs_spec[2:])
  rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
  lhs_b = sorted(lhs_b)
  out = red.dot_general(patches, rhs, (((out_spec[1],), (rhs_spec[1],)),
                                       (tuple(lhs_b), tuple(rhs_b))), precision=precision)
  # dot_general gives (batch dims..., lhs free (N), rhs free (O)): move N, O into place
  nd = core.get_aval(out).ndim
  order = [None] * nd
  order[out_spec[0]], order[out_spec[1]] = nd - 2, nd - 1
  rest = iter(range(nd - 2))
  order = [next(rest) if o is None else o for o in order]
  return sh.transpose(out, tuple(order))


# ----------------------------------------------------------------------------- helpers

def _reshape_axis_into(src, dst, x):
  # `dst` counts axes after `src` is removed; `src` becomes the major part of `dst`
  shape = core.get_aval(x).shape
  perm = [i for i in range(len(shape)) if i != src]
  perm.insert(dst, src)
  new_shape = [shape[i] for i in range(len(shape)) if i != src]
  new_shape[dst] *= shape[src]
  return sh.reshape(x, new_shape, perm)


def _reshape_axis_out_of(src, size1, x):
  shape = list(core.get_aval(x).shape)
  size2, ragged = divmod(shape[src], size1)
  assert not ragged
  shape[src:src + 1] = [size1, size2]
  return sh.reshape(x, shape)


def _spec_transpose(spec):
  return (spec[1], spec[0]) + tuple(spec[2:])


def _vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dil, rhs_dil):
  lhs_d = dilate_shape(in_shape, lhs_dil)
  rhs_d = dilate_shape(window, rhs_dil)
  out_d = dilate_shape(out_shape, strides)
  before = [r - lo - 1 for r, (lo, _) in zip(rhs_d, padding)]
  after = [l + r - 1 - o - b for l, r, o, b in zip(lhs_d, rhs_d, out_d, before)]
  return tuple(zip(before, after))


def _vjp_rhs_padding(in_shape, window, strides, out_shape, padding, lhs_dil, rhs_dil):
  lhs_d = dilate_shape(in_shape, lhs_dil)
  rhs_d = dilate_shape(window, rhs_dil)
  out_d = dilate_shape(out_shape, strides)
  los = [lo for lo, _ in padding]
  his = [o - l + r - lo - 1 for o, l, r, lo in zip(out_d, lhs_d, rhs_d, los)]
  return tuple(zip(los, his))


def _take(shape, idx):
  return [shape[i] for i in idx]


# ----------------------------------------------------------------------------- differentiation

def _transpose_lhs(g, lhs_aval, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  t_rhs_spec = _spec_transpose(rhs_spec)
  if feature_group_count > 1:
    # the feature groups move from the kernel's output features to its input features
    rhs = _reshape_axis_out_of(rhs_spec[0], feature_group_count, rhs)
    rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
  elif batch_group_count > 1:
    rhs = _reshape_axis_out_of(rhs_spec[0], batch_group_count, rhs)
    rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    feature_group_count = batch_group_count
  rhs_shape = core.get_aval(rhs).shape
  trans_dnums = ConvDimensionNumbers(out_spec, t_rhs_spec, lhs_spec)
  pads = _vjp_lhs_padding(_take(lhs_aval.shape, lhs_spec[2:]), _take(rhs_shape, rhs_spec[2:]),
                          window_strides, _take(core.get_aval(g).shape, out_spec[2:]),
                          padding, lhs_dilation, rhs_dilation)
  revd = sh.rev(rhs, tuple(rhs_spec[2:]))
  out = conv_general_dilated(g, revd, window_strides=lhs_dilation, padding=pads,
                             lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
                             dimension_numbers=trans_dnums,
                             feature_group_count=feature_group_count, batch_group_count=1,
                             precision=precision, preferred_element_type=preferred_element_type)
  if batch_group_count > 1:
    out = _reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
    out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
  return out


def _transpose_rhs(g, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  lhs_trans, rhs_trans, out_trans = map(_spec_transpose, dimension_numbers)
  if batch_group_count > 1:
    feature_group_count, batch_group_count = batch_group_count, 1
  elif feature_group_count > 1:
    batch_group_count, feature_group_count = feature_group_count, 1
  trans_dnums = ConvDimensionNumbers(lhs_trans, out_trans, rhs_trans)
  pads = _vjp_rhs_padding(_take(core.get_aval(lhs).shape, lhs_spec[2:]),
                          _take(rhs_aval.shape, rhs_spec[2:]), window_strides,
                          _take(core.get_aval(g).shape, out_spec[2:]), padding, lhs_dilation,
                          rhs_dilation)
  return conv_general_dilated(lhs, g, window_strides=rhs_dilation, padding=pads,
                              lhs_dilation=lhs_dilation, rhs_dilation=window_strides,
                              dimension_numbers=trans_dnums,
                              feature_group_count=feature_group_count,
                              batch_group_count=batch_group_count, precision=precision,
                              preferred_element_type=preferred_element_type)


def _conv_transpose(ct, lhs, rhs, *, out_sharding, **params):
  if type(ct) is ad.Zero:
    return [None if not ad.is_undefined(v) else ad.Zero(v.aval) for v in (lhs, rhs)]
  pref = params.pop("preferred_element_type")
  if ad.is_undefined(lhs):
    out = _transpose_lhs(ct, lhs.aval, rhs, preferred_element_type=pref and lhs.aval.dtype,
                         **params)
    return [out, None]
  if core.get_aval(ct).size == 0:
    return [None, ad.Zero(rhs.aval)]
  out = _transpose_rhs(ct, lhs, rhs.aval, preferred_element_type=pref and rhs.aval.dtype,
                       **params)
  return [None, out]


ad.defbilinear(conv_general_dilated_p)
ad.transpose_rules[conv_general_dilated_p] = _conv_transpose


# ----------------------------------------------------------------------------- batching

def _conv_batcher(vals, dims, **params):
  (lhs, rhs), (ld, rd) = vals, dims
  lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
  G, B = params["feature_group_count"], params["batch_group_count"]
  bind = lambda l, r, **kw: conv_general_dilated_p.bind(l, r, **{**params, **kw})
  if ld is not None and rd is not None:
    size = core.get_aval(lhs).shape[ld]
    if B > 1:
      new_lhs = _reshape_axis_into(ld, lhs_spec[0], lhs)
      kw = dict(batch_group_count=B * size)
    else:
      new_lhs = _reshape_axis_into(ld, lhs_spec[1], lhs)
      kw = dict(feature_group_count=G * size)
    new_rhs = _reshape_axis_into(rd, rhs_spec[0], rhs)
    out = bind(new_lhs, new_rhs, **kw)
    return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
  if ld is not None:
    size = core.get_aval(lhs).shape[ld]
    if B == 1:
      new_lhs = _reshape_axis_into(ld, lhs_spec[0], lhs)
    else:
      # batch groups stay outermost in the batch axis; the vmapped axis goes inside them
      new_lhs = _reshape_axis_out_of(lhs_spec[0] + int(ld <= lhs_spec[0]), B, lhs)
      new_lhs = _reshape_axis_into(ld + int(lhs_spec[0] < ld), lhs_spec[0] + 1, new_lhs)
      new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
    out = bind(new_lhs, rhs)
    return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
  size = core.get_aval(rhs).shape[rd]
  if G == 1 and B == 1:
    new_rhs = _reshape_axis_into(rd, rhs_spec[0], rhs)
    out = bind(lhs, new_rhs)
    return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
  groups = G if G > 1 else B
  new_rhs = _reshape_axis_out_of(rhs_spec[0] + int(rd <= rhs_spec[0]), groups, rhs)
  new_rhs = _reshape_axis_into(rd + int(rhs_spec[0] < rd), rhs_spec[0] + 1, new_rhs)
  new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
  out = bind(lhs, new_rhs)
  out = _reshape_axis_out_of(out_spec[1], groups, out)
  out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
  return _reshape_axis_into(out_spec[1], out_spec[1] + 1, out), out_spec[1]


batching.batching_rules[conv_general_dilated_p] = _conv_batcher
