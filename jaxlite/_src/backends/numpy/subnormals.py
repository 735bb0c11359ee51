"""Subnormal operands in tier 0, as XLA treats them.

XLA's CPU code runs with the processor's denormals-are-zero and flush-to-zero modes on
(TPUs and GPUs flush too): a float32, float64 or bfloat16 operand smaller in magnitude
than its dtype's smallest normal number counts as a zero of its sign. NumPy follows IEEE
754. For most primitives (add, mul, sin, sums, dots) the two differ by no more than a
subnormal, and tier 0 leaves them alone, at no cost. The table below lists those whose
result changes materially, measured against JAX 0.10.2 on the CPU
(``tests/data/make_subnormal_reference.py``): a comparison's bool, ``sign``, ``floor``
and ``ceil`` (0 instead of +-1), ``log`` of a subnormal (-inf), ``sqrt`` and ``rsqrt`` of a
negative one (-0 and -inf, not NaN), ``x / 0`` (inf or NaN instead of a finite number),
``argmax`` and sorting (subnormals tie with the zeros). ``install`` wraps those rows of
the implementation table, which eager evaluation and tier 0 share, so that they see their
operands flushed; ``template`` does the same to tier 0's direct ufunc templates.

float16 is left alone: XLA computes it in float32, where its subnormals are normal. A
conversion of bfloat16 to bool is left alone too: XLA converts it by its bits (measured).
So are ``pow``, ``atan2`` and ``cbrt``, whose XLA CPU expansions treat a subnormal neither
as a zero nor as IEEE 754 does, and ``mul``, whose material differences (a subnormal
times an infinity, or times more than about 1e32) would cost a check on a hot path
(docs/sharp_bits.md lists what differs).
"""
import sys

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax import sorting
from jaxlite._src.lax import special


class _Limits(dict):
  """dtype -> ``(tiny, tiny_array, subnormal, minus_subnormal)`` where XLA flushes the
  dtype's subnormals, else None: its smallest normal number as a Python float and as a 0-d
  array (which a ufunc takes fastest), and its largest subnormal number and its negation
  as 0-d arrays.
  bfloat16 is entered when first met: ml_dtypes loads lazily, and a bfloat16 value means
  that it has loaded."""

  def __missing__(self, dtype):
    limits = None
    if dtype in (np.dtype(np.float32), np.dtype(np.float64)) or dtype.name == "bfloat16":
      info = dtypes.finfo(dtype)
      tiny = dtype.type(info.tiny)
      subnormal = tiny - dtype.type(info.smallest_subnormal)
      limits = (float(tiny), np.array(tiny), np.array(subnormal), np.array(-subnormal))
    self[dtype] = limits
    return limits


_LIMITS = _Limits()


def _small(x, tiny_array):
  """The mask of the elements of the array ``x`` that XLA counts as zeros, or None if
  there is none (the common case; two ufunc calls and a count, about as much again as a
  cheap ufunc on a small array)."""
  small = np.less(np.abs(x), tiny_array)   # NaN compares false
  return small if np.count_nonzero(small) else None


def flush(x):
  """``x`` (a NumPy array or scalar) with its subnormals replaced by zeros of their sign,
  where XLA flushes ``x``'s dtype (other dtypes are returned as they are); ``x`` itself
  when nothing changes, the common case."""
  limits = _LIMITS[x.dtype]
  if limits is None:
    return x
  if not x.ndim:   # a scalar: Python's comparison is cheaper than a ufunc's
    return x * 0 if 0 < abs(float(x)) < limits[0] else x
  small = _small(x, limits[1])   # (the zeros too, which the product keeps as they are)
  return x if small is None else np.where(small, x * 0, x)


def _flush_complex(x):
  """``x`` with the real and imaginary parts of complex numbers flushed each."""
  if x.dtype.kind != "c":
    return flush(x)
  real, imag = x.real, x.imag
  flushed_real, flushed_imag = flush(real), flush(imag)
  if flushed_real is real and flushed_imag is imag:
    return x
  out = np.empty_like(x)
  out.real, out.imag = flushed_real, flushed_imag
  return out


# -- the rows: each takes the table's implementation and returns the flushing one

def _operand(kernel):
  """``kernel`` of one operand seeing it flushed."""
  def impl(x, **params):
    return kernel(flush(x), **params)
  return impl


def _div(kernel):
  """Division of flushed operands. By a scalar of magnitude 1 or more (``x / 2``) nothing
  needs flushing: a subnormal dividend gives a subnormal quotient, where XLA's is a zero
  of the same sign."""
  def impl(x, y):
    if _LIMITS[x.dtype] is None or not y.ndim and abs(float(y)) >= 1:
      return kernel(x, y)
    return kernel(flush(x), flush(y))
  return impl


def _rem(kernel):
  """``rem(x, y)`` differs materially only where ``y`` is subnormal (NaN, as for 0)."""
  def impl(x, y):
    return kernel(x, flush(y))
  return impl


def _nextafter(kernel):
  """XLA's nextafter steps ``x`` by its bits, but answers ``y`` where ``x == y`` after
  flushing (so from a subnormal towards 0 it gives 0, as from 0). NumPy's float16 loop
  answers ``x`` there, which differs for 0 and -0."""
  def impl(x, y):
    out = kernel(x, y)
    fx, fy = flush(x), flush(y)
    if fx is x and fy is y and x.dtype != np.float16:
      return out
    return np.where(np.equal(fx, fy), y, out).astype(out.dtype, copy=False)
  return impl


def _integer_pow(kernel):
  """``x ** y`` with ``y < 0`` divides by a power of ``x``: 1 / 0 for a subnormal."""
  def impl(x, *, y):
    return kernel(flush(x) if y < 0 else x, y=y)
  return impl


def _to_bool(kernel):
  """A conversion to bool is a comparison with 0 (bfloat16's goes by its bits in XLA)."""
  def impl(x, *, new_dtype, **params):
    if new_dtype == np.bool_ and x.dtype.name != "bfloat16":
      x = _flush_complex(x)
    return kernel(x, new_dtype=new_dtype, **params)
  return impl


def _sort(kernel):
  """Sorting orders by flushed keys (subnormals tie with the zeros) and moves the values
  as they are: the flushed keys are sorted as extra leading operands."""
  def impl(*operands, num_keys, **params):
    keys = [flush(k) for k in operands[:num_keys]]
    if all(k is o for k, o in zip(keys, operands)):
      return kernel(*operands, num_keys=num_keys, **params)
    return kernel(*keys, *operands, num_keys=num_keys, **params)[num_keys:]
  return impl


# A comparison with a zero, as one comparison with the neighbouring normal numbers: with
# s the largest subnormal, x > 0 after flushing is x > s; equality needs |x| < tiny.
_AGAINST_ZERO = {
    np.greater: lambda x, tiny, s, minus_s: np.greater(x, s),
    np.greater_equal: lambda x, tiny, s, minus_s: np.greater_equal(x, minus_s),
    np.less: lambda x, tiny, s, minus_s: np.less(x, minus_s),
    np.less_equal: lambda x, tiny, s, minus_s: np.less_equal(x, s),
    np.equal: lambda x, tiny, s, minus_s: np.less(np.abs(x), tiny),
    np.not_equal: lambda x, tiny, s, minus_s: np.logical_not(np.less(np.abs(x), tiny)),
}
_MIRROR = {np.greater: np.less, np.less: np.greater, np.greater_equal: np.less_equal,
           np.less_equal: np.greater_equal, np.equal: np.equal, np.not_equal: np.not_equal}


def _comparison(ufunc):
  """A comparison of flushed operands (the table's comparison rows are NumPy's ufuncs). Flushing is monotonic, so it changes a comparison
  only where both operands count as zeros, which then compare equal: one operand without
  such elements proves the plain comparison exact. Against a scalar nothing is flushed:
  against a normal number a subnormal compares as its zero would, and against a zero the
  comparison moves to the nearest normal numbers (``_AGAINST_ZERO``). Takes ``out=`` as a
  ufunc does (tier 0's generated code calls it so)."""
  mirrored, tie = _MIRROR[ufunc], bool(ufunc(0, 0))

  def impl(x, y, out=None):
    limits = _LIMITS[x.dtype]
    if limits is None:
      if x.dtype.kind == "c":
        x, y = _flush_complex(x), _flush_complex(y)
      return ufunc(x, y, out=out)
    if not y.ndim or not x.ndim:
      scalar, other, against = (y, x, ufunc) if not y.ndim else (x, y, mirrored)
      if not abs(float(scalar)) < limits[0]:
        return ufunc(x, y, out=out)
      result = _AGAINST_ZERO[against](other, limits[1], limits[2], limits[3])
      if out is None:
        return result
      np.copyto(out, result)
      return out
    small_x = _small(x, limits[1])
    small_y = None if small_x is None else _small(y, limits[1])
    result = ufunc(x, y, out=out)
    if small_y is not None:
      np.copyto(result, tie, where=small_x & small_y)
    return result
  return impl


# primitive -> function(the table's implementation) -> the implementation to use
ROWS = {
    ew.sign_p: _operand, ew.floor_p: _operand, ew.ceil_p: _operand,
    ew.log_p: _operand, ew.sqrt_p: _operand, ew.rsqrt_p: _operand,
    ew.div_p: _div, ew.rem_p: _rem, ew.nextafter_p: _nextafter,
    ew.integer_pow_p: _integer_pow, ew.convert_element_type_p: _to_bool,
    special.lgamma_p: _operand, special.digamma_p: _operand,
    red.argmax_p: _operand, red.argmin_p: _operand, sorting.sort_p: _sort,
    **{p: _comparison for p in (ew.eq_p, ew.ne_p, ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p)},
}


def install(impl_rules):
  """Wrap the rows of ``impl_rules`` (the NumPy backend's table) that ``ROWS`` lists;
  each wrapper keeps the implementation it wraps as ``__wrapped__``."""
  for prim, wrap in ROWS.items():
    kernel = impl_rules[prim]
    impl = wrap(kernel)
    impl.__wrapped__ = kernel
    impl.__name__ = getattr(kernel, "__name__", prim.name)
    impl_rules[prim] = impl


# -- tier 0's direct templates: the same flushes, written into the generated call

def namespace() -> dict:
  """The names the templates below use, for the generated code's namespace: ``_flush``,
  the comparisons (``_flushed_less``, ...) and, per flushed dtype loaded, its smallest
  normal and largest subnormal numbers."""
  names = {"_flush": flush, **{f"_flushed_{u.__name__}": _comparison(u) for u in _MIRROR}}
  loaded = [np.float32, np.float64] + (
      [sys.modules["ml_dtypes"].bfloat16] if "ml_dtypes" in sys.modules else [])
  for dtype in map(np.dtype, loaded):
    _, tiny, subnormal, minus_subnormal = _LIMITS[dtype]
    names.update({f"_tiny_{dtype.name}": tiny, f"_sub_{dtype.name}": subnormal,
                  f"_nsub_{dtype.name}": minus_subnormal})
  return names


# ``_AGAINST_ZERO`` as templates of the other operand ({v}) and the dtype's name ({t})
_AGAINST_ZERO_TEMPLATES = {
    ew.gt_p: "_np.greater({v}, _sub_{t})", ew.ge_p: "_np.greater_equal({v}, _nsub_{t})",
    ew.lt_p: "_np.less({v}, _nsub_{t})", ew.le_p: "_np.less_equal({v}, _sub_{t})",
    ew.eq_p: "_np.less(_np.abs({v}), _tiny_{t})",
    ew.ne_p: "_np.logical_not(_np.less(_np.abs({v}), _tiny_{t}))",
}
_MIRRORED = {ew.gt_p: ew.lt_p, ew.lt_p: ew.gt_p, ew.ge_p: ew.le_p, ew.le_p: ew.ge_p,
             ew.eq_p: ew.eq_p, ew.ne_p: ew.ne_p}


def _plain_literal(v, tiny) -> bool:
  """Whether ``v`` is a literal that flushing leaves as it is (not a subnormal)."""
  return type(v) is core.Literal and not 0 < abs(float(v.val)) < tiny


def _flushing(template, eqn, tiny, keep=()):
  """``template`` with each operand not in ``keep`` and not a plain literal flushed."""
  for i, v in enumerate(eqn.invars):
    if i not in keep and not _plain_literal(v, tiny):
      template = template.replace(f"{{{i}}}", f"_flush({{{i}}})")
  return template


def _comparison_template(eqn, template, tiny):
  x, y = eqn.invars
  if x is y:   # x == x, x != x (NaN tests): flushing changes nothing
    return template
  for literal, other, prim in ((y, 0, eqn.primitive), (x, 1, _MIRRORED[eqn.primitive])):
    if type(literal) is core.Literal:
      if not abs(float(literal.val)) < tiny:
        return template   # a normal number, infinity or NaN: see _comparison
      return _AGAINST_ZERO_TEMPLATES[prim].format(v=f"{{{other}}}",
                                                  t=literal.aval.dtype.name)
  return template.replace("_np.", "_flushed_", 1)   # _np.less(...) -> _flushed_less(...)


def _div_template(eqn, template, tiny):
  y = eqn.invars[1]
  big_literal = type(y) is core.Literal and abs(float(y.val)) >= 1   # see _div
  return _flushing(template, eqn, tiny, keep=(0,) if big_literal else ())


_TEMPLATES = {
    **{p: _comparison_template for p in _AGAINST_ZERO_TEMPLATES},
    ew.div_p: _div_template,
    ew.log_p: lambda eqn, template, tiny: _flushing(template, eqn, tiny),
    ew.sqrt_p: lambda eqn, template, tiny: _flushing(template, eqn, tiny),
}


def template(eqn, template):
  """``template``, tier 0's direct ufunc template of ``eqn`` (or None), in the form that
  flushes what ``ROWS`` flushes on the dtypes XLA flushes. A literal operand is decided
  here: a comparison with a normal one needs no flush, one with a zero becomes one
  comparison with the nearest normal numbers (``_AGAINST_ZERO``)."""
  rule = _TEMPLATES.get(eqn.primitive)
  if template is None or rule is None:
    return template
  dtype = eqn.invars[0].aval.dtype
  limits = _LIMITS[dtype]
  if limits is None:
    # complex comparisons flush the parts of their operands (``_comparison``)
    if dtype.kind == "c" and eqn.primitive in _AGAINST_ZERO_TEMPLATES:
      return template.replace("_np.", "_flushed_", 1)
    return template
  return rule(eqn, template, limits[0])
