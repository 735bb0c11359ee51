"""Dtypes: canonical dtypes, weak types and JAX's type-promotion lattice.

Two ideas drive this module. *Canonicalization*: with ``jax_enable_x64`` off,
every 64-bit dtype is stored as its 32-bit counterpart. *Weak types*: a Python
scalar (and an array derived from one) has a dtype but no say in the width of a
result, so ``int8_array + 1`` stays int8. Promotion is the least upper bound on
a small lattice whose nodes are dtypes plus the three weak nodes ``int``,
``float`` and ``complex`` (JAX's "Type promotion semantics").

Everything the core calls per operation (``canonicalize_dtype``, ``dtype``,
``result_type``) is a dict lookup in the common case; the caches key on the
x64 flag and the promotion mode, so ``config.update`` needs no invalidation.

ml_dtypes (bfloat16, the float8 family, int4, ...) takes longer to import than the
rest of jaxlite, so it loads when first needed (:func:`ml_dtypes`): a public name
bound to one of its objects (``jnp.bfloat16``, ``jnp.finfo``, ``jnp.dtype``), a dtype
string naming one of its types, or a value of one of its dtypes (which exists only
once the user's code imported ml_dtypes). Until then the tables below hold NumPy's
own dtypes; loading adds bfloat16 to every one of them, and no result for another
dtype changes.
"""
import abc
import threading
import warnings

import numpy as np

from jaxlite._src.base.config import config, numpy_dtype_promotion

# Scalar types, under the names JAX uses.
bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128

# The dtype of tangents of integer and boolean values: zero bytes per element.
float0 = np.dtype([("float0", np.void, 0)])



class extended(np.generic):
  """Scalar type of JAX's extended dtypes (typed PRNG keys, flax's fp8 metadata), for
  ``issubdtype`` tests: ``issubdtype(jax.random.key(0).dtype, extended)`` is True."""


class prng_key(extended):
  """Scalar type of JAX's typed PRNG keys (``jax.random.key``), under ``extended``."""


DType = np.dtype   # JAX's annotation of a dtype object


class ExtendedDType(abc.ABC):
  """The base of JAX's extended dtype objects (a key's ``key<fry>``, lax/prng.py's KeyTy;
  flax's fp8 metadata subclasses it): ``type`` is its scalar type under ``extended``, and
  ``_rules`` the class of its rules (JAX's protocol, see core/extended.py). Avals and
  jaxprs carry such a dtype as they carry a NumPy one; NumPy never sees it."""

  @property
  @abc.abstractmethod
  def type(self) -> type:
    ...

  _rules = None

  @property
  def name(self) -> str:
    return str(self)


def is_extended(dtype) -> bool:
  """Whether ``dtype`` is an extended dtype (every other dtype an aval holds is NumPy's,
  which the first, cheap test answers)."""
  return not isinstance(dtype, np.dtype) and isinstance(dtype, ExtendedDType)


_b = np.dtype(bool)
_i8, _i16, _i32, _i64 = map(np.dtype, (int8, int16, int32, int64))
_u8, _u16, _u32, _u64 = map(np.dtype, (uint8, uint16, uint32, uint64))
_f16, _f32, _f64 = map(np.dtype, (float16, float32, float64))
_c64, _c128 = np.dtype(complex64), np.dtype(complex128)
_bf16 = None  # np.dtype(bfloat16) once ml_dtypes is loaded

_NUMPY_NUMERIC = (_b, _i8, _i16, _i32, _i64, _u8, _u16, _u32, _u64, _f16, _f32, _f64,
                  _c64, _c128)
_TO_32BIT = {_i64: _i32, _u64: _u32, _f64: _f32, _c128: _c64}

# The names NumPy's dtype parser learns when ml_dtypes is imported (np.sctypeDict).
_ML_DTYPE_NAMES = frozenset((
    "bcomplex32", "bfloat16", "complex32", "float4_e2m1fn", "float6_e2m3fn",
    "float6_e3m2fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e5m3fnu",
    "float8_e8m0fnu", "int1", "int2", "int4", "uint1", "uint2", "uint4"))
# The narrow types of ml_dtypes that JAX arrays hold: no implicit promotion reaches them
# but a weak scalar's (``int4_array + 1`` is int4), and none leaves them.
_NARROW_INTS = ("int1", "int2", "int4", "uint1", "uint2", "uint4")
_NARROW_FLOATS = ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
                  "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
                  "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")
_narrow = {}   # np.dtype -> what JAX's promotion error calls it, once ml_dtypes loads
_NARROW_ORDER = ("8-bit floats", "6-bit floats", "4-bit floats",
                 "1-bit, 2-bit and 4-bit integers")
_KIND_ABSTRACT = {
    "f": {np.floating, np.inexact, np.number, np.generic},
    "c": {np.complexfloating, np.inexact, np.number, np.generic},
    "i": {np.signedinteger, np.integer, np.number, np.generic},
    "u": {np.unsignedinteger, np.integer, np.number, np.generic},
}


def _ml_kind(sctype):
  """'f', 'c', 'i' or 'u' for an ml_dtypes scalar type, else None.

  ml_dtypes' types are not placed in NumPy's type hierarchy (bfloat16 is not a
  subclass of np.floating), so their kind is read off their names ('bfloat16' ->
  'f', 'bcomplex32' -> 'c', 'int4' -> 'i', 'uint4' -> 'u', ...) without importing
  ml_dtypes.
  """
  if getattr(sctype, "__module__", None) != "ml_dtypes":
    return None
  return sctype.__name__.removeprefix("b")[0]


_SHORT_NAMES = {_b: "bool", _i8: "i8", _i16: "i16", _i32: "i32", _i64: "i64",
                _u8: "u8", _u16: "u16", _u32: "u32", _u64: "u64", _f16: "f16",
                _f32: "f32", _f64: "f64", _c64: "c64", _c128: "c128", float0: "float0"}

# Uncanonicalized dtype of each Python scalar type; bool is the only one that
# is never weak.
_PY_SCALAR_DTYPES = {bool: _b, int: _i64, float: _f64, complex: _c128}
_WEAK_TYPES = (int, float, complex)


class TypePromotionError(ValueError):
  """Raised when JAX type promotion fails."""


# ---------------------------------------------------------------------------
# Defaults and canonicalization.

def default_int_dtype():
  """``int64`` with x64 enabled, else ``int32``."""
  return _i64 if config.jax_enable_x64 else _i32


def default_uint_dtype():
  """``uint64`` with x64 enabled, else ``uint32``."""
  return _u64 if config.jax_enable_x64 else _u32


def default_float_dtype():
  """``float64`` with x64 enabled, else ``float32``."""
  return _f64 if config.jax_enable_x64 else _f32


def default_complex_dtype():
  """``complex128`` with x64 enabled, else ``complex64``."""
  return _c128 if config.jax_enable_x64 else _c64


_DEFAULT_OF_KIND = {"b": lambda: _b, "i": default_int_dtype, "u": default_uint_dtype,
                    "f": default_float_dtype, "c": default_complex_dtype}

def _known_canonical(x64):
  return {d: d if x64 else _TO_32BIT.get(d, d) for d in _JAX_DTYPES}


# {x64 flag: {dtype-like: canonical np.dtype}}; anything hashable np.dtype
# accepts ends up here after its first use. Filled by _build_tables.
_canonical = {}


def canonicalize_dtype(dtype, allow_extended_dtype=False):
  """Return the dtype that values of ``dtype`` are stored as.

  Parameters
  ----------
  dtype : dtype-like
    A ``np.dtype``, scalar type, Python type (``int`` means int64 before
    canonicalization) or dtype string such as ``'float32'``, ``'f4'`` or
    ``'bfloat16'``.
  allow_extended_dtype : bool
    Return an extended dtype (``key<fry>``) as it is; without it, such a dtype raises
    NumPy's ``TypeError``, as in JAX.

  Returns
  -------
  numpy.dtype
    ``dtype`` itself, except that with ``jax_enable_x64`` off the 64-bit types
    become int32, uint32, float32 and complex64.

  Examples
  --------
  >>> canonicalize_dtype('float64')  # with jax_enable_x64 off
  dtype('float32')
  >>> canonicalize_dtype(int)
  dtype('int32')
  >>> canonicalize_dtype('bfloat16')
  dtype(bfloat16)
  """
  x64 = config.jax_enable_x64
  try:
    return _canonical[x64][dtype]
  except (KeyError, TypeError):  # TypeError: unhashable dtype spec
    pass
  if allow_extended_dtype and isinstance(dtype, ExtendedDType):
    return dtype
  dt = np_dtype(dtype)  # raises numpy's TypeError for things that are not dtypes
  out = dt if x64 else _TO_32BIT.get(dt, dt)
  try:
    _canonical[x64][dtype] = out
  except TypeError:
    pass
  return out


def _kind(dtype):
  """NumPy's kind letter, with ml_dtypes types mapped to 'f', 'i', 'u' or 'c'."""
  try:
    return _KINDS[dtype]
  except (KeyError, TypeError):
    if isinstance(dtype, ExtendedDType):
      return "V"   # neither number nor bool
    dt = np_dtype(dtype)
    return _ml_kind(dt.type) or dt.kind


def is_integer(dtype):
  """True for signed and unsigned integer dtypes (not bool)."""
  return _kind(dtype) in ("i", "u")


def is_floating(dtype):
  """True for real floating dtypes, bfloat16 included."""
  return _kind(dtype) == "f"


def is_complex(dtype):
  """True for complex dtypes."""
  return _kind(dtype) == "c"


def is_inexact(dtype):
  """True for floating and complex dtypes."""
  return _kind(dtype) in ("f", "c")


def has_tangent(dtype):
  """Whether values of ``dtype`` are differentiated: inexact dtypes, and extended dtypes
  whose rules give a tangent dtype other than float0 (flax's fp8 metadata; not keys)."""
  return is_inexact(dtype) or (is_extended(dtype)
                               and dtype._rules.tangent_dtype(dtype) != float0)


def is_narrow(dtype):
  """True for ml_dtypes' narrow types (int4, float8_e4m3fn, ...): NumPy computes them in
  ml_dtypes' loops, whose results may come back wider (``-int4`` is int8)."""
  return dtype in _narrow


def is_half_float(dtype):
  """True for float16 and bfloat16, which JAX computes reductions and some functions in
  float32 (checked without importing ml_dtypes: a bfloat16 value implies it is loaded)."""
  return dtype == _f16 or (_bf16 is not None and dtype == _bf16)


def to_inexact_dtype(dtype):
  """The floating type a ``dtype`` computes in where an inexact one is needed: itself if
  inexact, float64 for 64-bit integers, else float32 (also with x64 on, as JAX)."""
  dtype = np_dtype(dtype)
  if is_inexact(dtype):
    return dtype
  return canonicalize_dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def to_complex_dtype(dtype):
  """The complex type an inexact computation on ``dtype`` returns (JAX's
  ``dtypes.to_complex_dtype``): complex128 for float64 and complex128, else complex64."""
  if to_inexact_dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128)):
    return np.dtype(np.complex128)
  return np.dtype(np.complex64)


def lowest(dtype):
  """The identity of ``max`` over ``dtype``: False, -inf (the lowest finite value where
  the dtype has no infinity, as float8_e4m3fn) or the integer minimum."""
  if dtype == np.bool_:
    return False
  if is_inexact(dtype):
    return -np.inf if _has_inf(dtype) else finfo(dtype).min
  return iinfo(dtype).min


def highest(dtype):
  """The identity of ``min`` over ``dtype``: True, inf (or the highest finite value) or
  the integer maximum."""
  if dtype == np.bool_:
    return True
  if is_inexact(dtype):
    return np.inf if _has_inf(dtype) else finfo(dtype).max
  return iinfo(dtype).max


def _has_inf(dtype):
  return dtype not in _narrow or bool(np.isinf(np.array(np.inf).astype(dtype)))


def short_name(dtype):
  """The spelling of ``dtype`` in printed jaxprs: ``f32``, ``i8``, ``bool``, ...

  Examples
  --------
  >>> short_name(np.dtype('float32')), short_name(np.dtype('uint8'))
  ('f32', 'u8')
  """
  try:
    return _SHORT_NAMES[dtype]
  except (KeyError, TypeError):
    if isinstance(dtype, ExtendedDType):
      return dtype.name   # key<fry>, as JAX prints it
    name = np_dtype(dtype).name
    return (name.replace("float", "f").replace("uint", "u").replace("int", "i")
            .replace("complex", "c"))


def itemsize_bits(dtype):
  """Number of bits per element of ``dtype`` (4 for int4; 8 for bool)."""
  if dtype is None:
    raise ValueError("dtype cannot be None.")
  dt = np_dtype(dtype)
  kind = _kind(dt)
  if kind in ("i", "u"):
    return iinfo(dt).bits
  if kind in ("f", "c"):
    return finfo(dt).bits * (2 if kind == "c" else 1)
  if dt == _b:
    return 8
  raise ValueError(f"unexpected input: dtype={dt}")


# ---------------------------------------------------------------------------
# The dtype of a value.

def is_python_scalar(x):
  """True for Python ``bool``, ``int``, ``float`` and ``complex`` values (not subclasses)."""
  return type(x) in _PY_SCALAR_DTYPES


def python_scalar_dtype(x):
  """The canonical dtype given to a Python scalar (or Python scalar type).

  Parameters
  ----------
  x : bool, int, float, complex, or one of those types
    For an ``int`` value, the value is also checked to fit the dtype.

  Returns
  -------
  numpy.dtype
    bool, the default int, float or complex dtype (32-bit unless x64 is on).
    Apart from bool, values of this dtype are weakly typed.

  Raises
  ------
  OverflowError
    If ``x`` is an ``int`` outside the range of the default int dtype.

  Examples
  --------
  >>> python_scalar_dtype(1.5), python_scalar_dtype(int)
  (dtype('float32'), dtype('int32'))
  """
  typ = x if isinstance(x, type) else type(x)
  try:
    dt = canonicalize_dtype(_PY_SCALAR_DTYPES[typ])
  except KeyError:
    raise TypeError(f"{x!r} is not a Python scalar or Python scalar type") from None
  if typ is int and x is not int:
    info = iinfo(dt)
    if not info.min <= x <= info.max:
      raise OverflowError(f"Python int {x} too large to convert to {dt}")
  return dt


def is_weakly_typed(x):
  """True for Python int/float/complex values and values with ``weak_type=True``.

  Python ``bool`` is never weak; NumPy arrays and scalars are never weak.
  """
  return (type(x) in _WEAK_TYPES or bool(getattr(x, "weak_type", False))
          or _is_typed_number(x))


def _is_typed_number(x):
  """A jaxpr literal's TypedInt/TypedFloat/TypedComplex (a Python number carrying its
  dtype, weakly typed as JAX's are); NumPy scalars subclass float too but are strong."""
  return (isinstance(x, _WEAK_TYPES) and not isinstance(x, np.generic)
          and hasattr(x, "dtype"))


def _invalid_dtype(x, dt):
  return TypeError(f"Value '{x}' with dtype {dt} is not a valid JAX array type. "
                   "Only arrays of numeric types are supported by JAX.")


def _dtype_of_spec(x):
  """Dtype of anything without a ``.dtype``: a dtype-like, a type, or a sequence."""
  if x is None:
    raise ValueError(f"Invalid argument to dtype: {x}.")
  if isinstance(x, type):
    dt = _PY_SCALAR_DTYPES.get(x)
    if dt is not None:
      return dt
    if issubclass(x, np.generic):
      return np.dtype(x)
  if isinstance(x, (str, np.dtype)):
    dt = np_dtype(x)
  else:
    try:
      dt = np.result_type(x)
    except TypeError as e:
      raise TypeError(f"Cannot determine dtype of {x}") from e
  if not is_jax_dtype(dt):
    raise _invalid_dtype(x, dt)
  return dt


def dtype(x, canonicalize=False):
  """The dtype of a value or of a dtype-like.

  Parameters
  ----------
  x : Any
    A Python scalar (``int`` is int64, ``float`` float64, ``complex``
    complex128 before canonicalization), an array, NumPy scalar or tracer (any
    object with a ``.dtype``), or a dtype-like (``np.float32``, ``'int8'``,
    ``int``, ...).
  canonicalize : bool
    If True, apply :func:`canonicalize_dtype` to the result.

  Returns
  -------
  numpy.dtype

  Raises
  ------
  TypeError
    If ``x`` has no dtype JAX can hold (object, strings of fixed width, ...).

  Examples
  --------
  >>> dtype(1.0), dtype(1.0, canonicalize=True)
  (dtype('float64'), dtype('float32'))
  """
  dt = _PY_SCALAR_DTYPES.get(type(x))
  if dt is None:
    dt = getattr(x, "dtype", None)
    if not isinstance(dt, np.dtype):
      if isinstance(dt, ExtendedDType):   # a key array
        return dt
      dt = _dtype_of_spec(x)
    elif dt not in _JAX_DTYPES and not is_jax_dtype(dt):  # the common case makes no call
      raise _invalid_dtype(x, dt)
  return canonicalize_dtype(dt) if canonicalize else dt


def scalar_type_of(x):
  """The Python scalar type (bool, int, float or complex) matching ``x``'s dtype.

  Examples
  --------
  >>> scalar_type_of(np.float16(1)), scalar_type_of(np.uint8(1))
  (<class 'float'>, <class 'int'>)
  """
  kind = _kind(dtype(x))
  typ = {"b": bool, "i": int, "u": int, "f": float, "c": complex}.get(kind)
  if typ is None:
    raise TypeError(f"Invalid scalar value {x}")
  return typ


def _truncation_message(dt, canonical, fun_name):
  where = f" requested in {fun_name}" if fun_name else ""
  return (f"Explicitly requested dtype {dt}{where} is not available, and will be "
          f"truncated to dtype {canonical.name}. To enable more dtypes, set the "
          "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
          "environment variable. See https://github.com/jax-ml/jax#current-gotchas "
          "for more.")


def check_user_dtype_supported(dtype, fun_name=None, stacklevel=3):
  """Validate a ``dtype=`` argument given by a user and return it canonicalized.

  Parameters
  ----------
  dtype : dtype-like
    The requested dtype. ``bool``, ``int``, ``float`` and ``complex`` mean the
    default dtype of that kind.
  fun_name : str, optional
    The public function that received ``dtype``, named in messages.
  stacklevel : int
    Passed to ``warnings.warn``; the default blames the caller of the
    function that calls this one, i.e. the user's line.

  Returns
  -------
  numpy.dtype
    The canonical dtype. When x64 is off, a 64-bit request emits a
    ``UserWarning`` saying it was truncated (with JAX's wording).

  Raises
  ------
  ValueError
    If ``dtype`` is None or an array.
  TypeError
    If ``dtype`` is not a number, bool or string dtype.
  """
  if dtype is None:
    raise ValueError("dtype must be specified.")
  if hasattr(dtype, "weak_type"):  # a jaxlite Array or tracer
    raise ValueError("Passing an array as a dtype argument is no longer supported; "
                     "instead of dtype=arr use dtype=arr.dtype.")
  if isinstance(dtype, type) and dtype in _PY_SCALAR_DTYPES:
    return canonicalize_dtype(_PY_SCALAR_DTYPES[dtype])
  if isinstance(dtype, ExtendedDType):   # key<fry>: jnp.zeros_like and full make keys
    return dtype
  dt = np_dtype(dtype)
  if not is_jax_dtype(dt):
    raise TypeError("JAX only supports number, bool, and string dtypes, got dtype "
                    f"{dtype}" + (f" in {fun_name}" if fun_name else ""))
  canonical = canonicalize_dtype(dt)
  if canonical != dt:
    warnings.warn(_truncation_message(dt, canonical, fun_name), stacklevel=stacklevel)
  return canonical


# ---------------------------------------------------------------------------
# Subtypes.

def _sctype(x):
  if isinstance(x, type) and issubclass(x, np.generic):
    return x
  if isinstance(x, ExtendedDType):
    return x.type
  return np_dtype(x).type


_subdtype_cache = {}


def issubdtype(a, b):
  """True if ``a`` is a subtype of ``b`` in NumPy's scalar type hierarchy.

  Like :func:`numpy.issubdtype`, but bfloat16 and the other ml_dtypes types sit
  where they belong (``issubdtype(bfloat16, np.floating)`` is True).

  Examples
  --------
  >>> bf16 = ml_dtypes().bfloat16
  >>> issubdtype(bf16, np.floating), np.issubdtype(bf16, np.floating)
  (True, False)
  >>> issubdtype('int8', np.signedinteger)
  True
  """
  try:
    return _subdtype_cache[a, b]
  except (KeyError, TypeError):
    pass
  a_t, b_t = _sctype(a), _sctype(b)
  kind = _ml_kind(a_t)
  out = (b_t is a_t or b_t in _KIND_ABSTRACT[kind] if kind is not None
         else bool(np.issubdtype(a_t, b_t)))
  try:
    _subdtype_cache[a, b] = out
  except TypeError:
    pass
  return out


def finfo(dtype):
  """``ml_dtypes.finfo(dtype)`` (JAX's ``jnp.finfo``) for jaxlite's own use.

  NumPy's float types get ``np.finfo``, whose values ml_dtypes' finfo returns for
  them, so asking about float32 does not import ml_dtypes. The public
  ``jnp.finfo`` is ``ml_dtypes.finfo`` itself, as in JAX.
  """
  dt = np_dtype(dtype)
  return ml_dtypes().finfo(dt) if _ml_kind(dt.type) else np.finfo(dt)


# the float8 types without infinities, as JAX 0.10.2 lists them (it leaves out the other
# types without one, float8_e8m0fnu and the float4/float6 types)
_NO_INF = frozenset({"float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
                     "float8_e5m2fnuz"})


def supports_inf(dtype) -> bool:
  """Whether ``dtype`` has infinities (JAX's ``dtypes.supports_inf``): True for the
  inexact dtypes but the float8 types that have none.

  Examples
  --------
  >>> supports_inf(np.float32), supports_inf(np.int32)
  (True, False)
  """
  dt = np_dtype(dtype)
  return dt.name not in _NO_INF and issubdtype(dt, np.inexact)


def iinfo(dtype):
  """``ml_dtypes.iinfo(dtype)`` (JAX's ``jnp.iinfo``) for jaxlite's own use; NumPy's
  integer types get ``np.iinfo`` without importing ml_dtypes (see :func:`finfo`)."""
  dt = np_dtype(dtype)
  return ml_dtypes().iinfo(dt) if _ml_kind(dt.type) else np.iinfo(dt)


# ---------------------------------------------------------------------------
# The promotion lattice.

def _lattice_upper_bounds(strict, bf16, narrow=()):
  """Map each node to the set of nodes at or above it (its upper bounds).

  ``bf16`` is bfloat16's dtype, or None before ml_dtypes is loaded: the node is
  then left out, which changes no join of the other nodes (none of them has
  bfloat16 as its join). ``narrow``: ml_dtypes' narrow types (int4, float8_e4m3fn...),
  each above its kind's weak node and below nothing.
  """
  i_, f_, c_ = _WEAK_TYPES
  if strict:
    # Only weak types promote: a weak scalar adapts to any dtype of its kind or
    # a higher kind, and strong dtypes never mix.
    ints, floats = (_i8, _i16, _i32, _i64, _u8, _u16, _u32, _u64), (bf16, _f16, _f32, _f64)
    up = {i_: [f_, *ints], f_: [c_, *floats], c_: [_c64, _c128],
          **{d: [] for d in (*_NUMPY_NUMERIC, bf16)}}
  else:
    up = {_b: [i_], i_: [_u8, _i8], _u8: [_i16, _u16], _u16: [_i32, _u32],
          _u32: [_i64, _u64], _u64: [f_], _i8: [_i16], _i16: [_i32], _i32: [_i64],
          _i64: [f_], f_: [bf16, _f16, c_], bf16: [_f32], _f16: [_f32],
          _f32: [_f64, _c64], _f64: [_c128], c_: [_c64], _c64: [_c128], _c128: []}
  for d in narrow:
    up[f_ if _kind(d) == "f" else i_].append(d)
    up[d] = []
  up = {n: [m for m in ups if m is not None] for n, ups in up.items() if n is not None}
  # JAX also keeps an x64-off variant where u32 x i32 -> i32 instead of i64;
  # since results here are always canonicalized, both variants agree.

  def close(node, seen):
    if node not in seen:
      seen.add(node)
      for nxt in up[node]:
        close(nxt, seen)
    return seen
  return {n: frozenset(close(n, set())) for n in up}


def _build_tables(bf16, narrow=()):
  """Set the module's dtype tables for NumPy's dtypes plus, if given, bfloat16 and the
  ``narrow`` types.

  Each table is built whole and then bound, so a thread reading them meanwhile
  sees the old or the new one, never half of one.
  """
  global _NUMERIC, _JAX_DTYPES, _KINDS, _UPPER_BOUNDS
  numeric = _NUMPY_NUMERIC if bf16 is None else (*_NUMPY_NUMERIC, bf16, *narrow)
  # What a JAX array may hold (JAX also admits NumPy's variable-width strings).
  jax_dtypes = frozenset((*numeric, float0, np.dtypes.StringDType()))
  _KINDS = {d: _ml_kind(d.type) or d.kind for d in jax_dtypes}
  _UPPER_BOUNDS = {"standard": _lattice_upper_bounds(False, bf16, narrow),
                   "strict": _lattice_upper_bounds(True, bf16, narrow)}
  _NUMERIC, _JAX_DTYPES = numeric, jax_dtypes
  for dts, predicate in _derived_sets:
    dts.update(d for d in numeric if predicate(d))
  clear_caches()


_derived_sets = []  # (set, predicate) of numeric_dtypes_where, updated by _build_tables


def numeric_dtypes_where(predicate):
  """The set of numeric dtypes arrays may hold for which ``predicate(dtype)`` is true,
  kept current: bfloat16 joins it when ml_dtypes loads. For fast paths' membership
  tests, built once at import (the caller must not modify it).
  """
  dts = {d for d in _NUMERIC if predicate(d)}
  _derived_sets.append((dts, predicate))
  return dts


_ml_dtypes = None
_ml_dtypes_lock = threading.RLock()


def ml_dtypes():
  """The ml_dtypes module, imported on the first call, which adds bfloat16 and the narrow
  types to the tables."""
  global _ml_dtypes, _bf16
  if _ml_dtypes is None:
    with _ml_dtypes_lock:
      if _ml_dtypes is None:
        import ml_dtypes as module
        _bf16 = np.dtype(module.bfloat16)
        for name in (*_NARROW_INTS, *_NARROW_FLOATS):
          d = np.dtype(getattr(module, name))
          # (a float's width is in its name: float8_e4m3fn)
          _narrow[d] = ("1-bit, 2-bit and 4-bit integers" if name in _NARROW_INTS
                        else f"{name[len('float')]}-bit floats")
        _build_tables(_bf16, tuple(_narrow))
        _ml_dtypes = module
  return _ml_dtypes


def np_dtype(spec):
  """``np.dtype(spec)``, loading ml_dtypes first if ``spec`` names one of its types
  (``'bfloat16'``, ``'int4'``, ...): NumPy learns those names from ml_dtypes."""
  if _ml_dtypes is None and isinstance(spec, str) and spec in _ML_DTYPE_NAMES:
    ml_dtypes()
  return np.dtype(spec)


def aval_dtype(spec):
  """The dtype an aval holds for ``spec``: ``np_dtype(spec)``, or an extended dtype
  (``key<fry>``) as it is."""
  try:
    return np_dtype(spec)
  except TypeError:
    if isinstance(spec, ExtendedDType):
      return spec
    raise


def is_jax_dtype(dt):
  """Whether a JAX array may hold values of the ``np.dtype`` ``dt``.

  A dtype of ml_dtypes loads its table entries first: an array of one exists only
  if the user's code imported ml_dtypes, so loading costs nothing more.
  """
  if dt in _JAX_DTYPES:
    return True
  if _ml_dtypes is None and _ml_kind(getattr(dt, "type", None)):
    ml_dtypes()
    return dt in _JAX_DTYPES
  return False


def __getattr__(name):
  # bfloat16 and ml_dtypes' other scalar types, under their JAX names
  if name in _ML_DTYPE_NAMES:
    return getattr(ml_dtypes(), name)
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _least_upper_bound(mode, nodes):
  """Join of ``nodes`` (dtypes and weak types) on the lattice of ``mode``."""
  try:
    ub = _UPPER_BOUNDS[mode]
  except KeyError:
    raise ValueError(
        f"Unexpected value of jax_numpy_dtype_promotion={mode!r}") from None
  try:
    bounds = [ub[n] for n in nodes]
  except KeyError:
    bad = next(n for n in nodes if n not in ub)
    if _ml_dtypes is None and isinstance(bad, np.dtype) and is_jax_dtype(bad):
      return _least_upper_bound(mode, nodes)  # bfloat16's node is in the lattice now
    raise ValueError(f"dtype={bad!r} is not a valid dtype for JAX type promotion.") from None
  common = frozenset.intersection(*bounds)
  # The join is the common upper bound below all others (a lattice has one).
  least = [c for c in common if common <= ub[c]]
  if len(least) == 1:
    return least[0]
  names = tuple(str(n) for n in dict.fromkeys(nodes))
  if mode == "strict":
    raise TypePromotionError(
        f"Input dtypes {names} have no available implicit dtype promotion path when "
        "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the "
        "desired output type, or set jax_numpy_dtype_promotion=standard.")
  narrow = [_narrow[n] for n in nodes if n in _narrow]
  if narrow:   # (named in JAX's order of checks)
    what = min(narrow, key=_NARROW_ORDER.index)
    raise TypePromotionError(
        f"Input dtypes {names} have no available implicit dtype promotion path. To avoid "
        f"unintended promotion, {what} do not support implicit promotion. If you'd like "
        "your inputs to be promoted to another type, you can do so explicitly using e.g. "
        f"x.astype('{'int32' if what.startswith('1-bit') else 'float32'}')")
  raise TypePromotionError(
      f"Input dtypes {names} have no available implicit dtype promotion path. Try "
      "explicitly casting inputs to the desired output type.")


def _node(dt, weak):
  """Lattice node of a (dtype, weak) operand: a weak one becomes int/float/complex."""
  if not weak or dt == _b:
    return dt
  return {"i": int, "u": int, "f": float, "c": complex}[_kind(dt)]


def _node_dtype(node):
  # Test the type first: a dict lookup would find np.dtype('int64') == int.
  return canonicalize_dtype(_PY_SCALAR_DTYPES[node] if isinstance(node, type) else node)


def promote_types(a, b):
  """The dtype to which a binary operation casts operands of dtypes ``a`` and ``b``.

  JAX's ``jnp.promote_types``: the join on the promotion lattice, with the
  Python types ``int``, ``float`` and ``complex`` standing for weak types.

  Parameters
  ----------
  a, b : dtype-like or int, float, complex

  Returns
  -------
  numpy.dtype
    Canonicalized for the current x64 setting. (JAX returns the uncanonical
    join, e.g. float64 for ``promote_types(int, float)`` even with x64 off.)

  Examples
  --------
  >>> promote_types('int32', 'float32')
  dtype('float32')
  >>> promote_types('uint8', int), np.promote_types('uint8', int)
  (dtype('uint8'), dtype('int64'))
  """
  nodes = [t if any(t is w for w in _WEAK_TYPES) else np_dtype(t) for t in (a, b)]
  return _node_dtype(_least_upper_bound(numpy_dtype_promotion(), nodes))


def _operand_key(x):
  """A hashable summary of one operand that fixes its promotion behaviour.

  Python values map to their type; values with a dtype to ``(dtype, weak)``,
  where ``weak`` is None for NumPy values (which have no ``weak_type``); dtype
  specifiers (np.float32, 'int8', int, None, ...) to themselves.
  """
  typ = type(x)
  if typ in _PY_SCALAR_DTYPES:
    return typ
  dt = getattr(x, "dtype", None)
  if isinstance(dt, np.dtype):
    weak = getattr(x, "weak_type", None)
    if weak is None and _is_typed_number(x):
      weak = True
    return dt, weak
  if isinstance(dt, ExtendedDType):   # a key array: promotes only with its own dtype
    return dt, False
  return x


def _resolve(key, arg):
  """(dtype, weak, truncated explicit dtype or None) of one operand."""
  if type(key) is tuple:
    dt, weak = key
    if not is_jax_dtype(dt):
      if isinstance(dt, ExtendedDType):
        return dt, False, None
      raise _invalid_dtype(arg, dt)
    if weak is None:  # a NumPy value: stored canonicalized once it enters jaxlite
      return canonicalize_dtype(dt), False, None
    # A jaxlite value keeps the dtype it was made with (say int64 while x64
    # was on), as JAX arrays do; only the promoted result is canonicalized.
    return dt, bool(weak), None
  if key is None:  # as in JAX, None stands for the default float dtype
    return default_float_dtype(), False, None
  if isinstance(key, type) and key in _PY_SCALAR_DTYPES:
    return canonicalize_dtype(_PY_SCALAR_DTYPES[key]), key is not bool, None
  dt = _dtype_of_spec(key)
  canonical = canonicalize_dtype(dt)
  explicit = isinstance(key, (str, np.dtype, type))
  return canonical, False, (dt if explicit and canonical != dt else None)


def _promote(keys, args, mode):
  """(lattice dtype, weak, result_type dtype, truncated explicit dtypes) of operands."""
  resolved = [_resolve(k, a) for k, a in zip(keys, args)]
  dts = [r[0] for r in resolved]
  weaks = [r[1] for r in resolved]
  if len(dts) == 1:
    out, weak = canonicalize_dtype(dts[0], True), weaks[0]
  elif len(set(dts)) == 1 and not all(weaks):
    out, weak = canonicalize_dtype(dts[0], True), False
  elif all(weaks) and mode != "strict":
    # Join the strong counterparts and re-apply weakness, so two weak operands
    # never produce a weak type of non-default width by accident.
    out, weak = _node_dtype(_least_upper_bound(mode, dts)), True
  else:
    node = _least_upper_bound(mode, [_node(d, w) for d, w in zip(dts, weaks)])
    out, weak = _node_dtype(node), isinstance(node, type)  # int, float or complex
  weak = weak and out != _b
  # result_type reports weak results at the default width of their kind.
  final = _DEFAULT_OF_KIND[_kind(out)]() if weak else out
  return out, weak, final, tuple(r[2] for r in resolved if r[2] is not None)


_result_cache = {}
_RESULT_CACHE_LIMIT = 4096


def _promote_cached(args):
  """``_promote`` memoized on the operand keys, the x64 flag and the mode."""
  if not args:
    raise ValueError("at least one array or dtype is required")
  x64, mode = config.jax_enable_x64, numpy_dtype_promotion()
  keys = tuple(map(_operand_key, args))
  try:
    hit = _result_cache.get((x64, mode, keys))
  except TypeError:  # an unhashable operand, e.g. a list
    return _promote(keys, args, mode)
  if hit is None:
    hit = _promote(keys, args, mode)
    if len(_result_cache) >= _RESULT_CACHE_LIMIT:
      _result_cache.clear()
    _result_cache[x64, mode, keys] = hit
  return hit


def _warn_truncated(dts):
  for dt in dts:  # stacklevel 3: past this helper and result_type, at the caller
    warnings.warn(_truncation_message(dt, canonicalize_dtype(dt), "dtype"), stacklevel=3)


def lattice_result_type(*args):
  """The promoted ``(dtype, weak_type)`` of ``args``, keeping weak widths.

  Unlike :func:`result_type`, a weak result keeps the width the lattice gives
  it (a weak bfloat16 array plus ``1`` is weak bfloat16, where ``result_type``
  says weak float32), which is what elementwise operations should produce.
  """
  hit = _promote_cached(args)
  if hit[3]:
    _warn_truncated(hit[3])
  return hit[0], hit[1]


def result_type(*args, return_weak_type_flag=False):
  """The dtype JAX promotes ``args`` to (JAX's ``jnp.result_type``).

  Parameters
  ----------
  *args : arrays, scalars or dtype-likes
    Python ``int``, ``float`` and ``complex`` values or types, and values with
    ``weak_type=True``, are weakly typed. ``None`` means the default float.
  return_weak_type_flag : bool
    If True, also return whether the result is weakly typed.

  Returns
  -------
  numpy.dtype or (numpy.dtype, bool)
    The canonical result dtype; a weak result is given the default width of
    its kind.

  Raises
  ------
  TypePromotionError
    Under ``jax_numpy_dtype_promotion='strict'``, if operands of different
    strong dtypes would need implicit promotion.

  Examples
  --------
  >>> result_type(np.int8, 1), result_type(np.int8, 1.0)
  (dtype('int8'), dtype('float32'))
  >>> result_type(np.uint8, np.int8)
  dtype('int16')
  >>> result_type(2, 3.0, return_weak_type_flag=True)
  (dtype('float32'), True)
  """
  hit = _promote_cached(args)
  if hit[3]:
    _warn_truncated(hit[3])
  return (hit[2], hit[1]) if return_weak_type_flag else hit[2]


def clear_caches():
  """Forget cached canonicalization, subtype and promotion results."""
  _result_cache.clear()
  _subdtype_cache.clear()
  for x64 in (False, True):
    _canonical[x64] = _known_canonical(x64)


_build_tables(None)
