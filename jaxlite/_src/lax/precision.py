"""Matmul precision and transcendental accuracy: JAX's ``lax.Precision``,
``DotAlgorithm``, ``DotAlgorithmPreset``, ``Tolerance`` and ``AccuracyMode``, and the
canonical forms that ``dot_general``, ``conv_general_dilated`` and the transcendental
functions carry as params.

On a TPU, the precision of a float32 matmul or convolution decides whether XLA computes
it in one bfloat16 pass (``DEFAULT``), three (``HIGH``) or six (``HIGHEST``); on a GPU,
whether it may use TensorFloat-32. The CPU computes float32 products in float32 whatever
the precision, and so does tier 0 (NumPy). jaxlite records the precision in the jaxpr and
in the StableHLO as JAX does, so that an accelerator's XLA honours it.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Any, NamedTuple

from jaxlite._src.base.config import config


class Precision(enum.Enum):
  """Precision of matmuls and convolutions (``jax.lax.Precision``).

  Only accelerators read it, and only for float32 operands: ``DEFAULT`` (aliases
  ``'default'``, ``'bfloat16'``, ``'fastest'``) is one bfloat16 pass on a TPU and
  TensorFloat-32 on a recent GPU; ``HIGH`` (``'high'``, ``'bfloat16_3x'``,
  ``'tensorfloat32'``) three bfloat16 passes; ``HIGHEST`` (``'highest'``, ``'float32'``)
  full float32. The CPU and tier 0 compute in full precision at every level.
  """
  DEFAULT = 0
  HIGH = 1
  HIGHEST = 2

  @classmethod
  def _missing_(cls, value):
    return _PRECISION_STRINGS.get(value)

  def __repr__(self):
    return f"Precision.{self.name}"

  def __str__(self):
    return self.name


# in JAX's order, which its error message lists
_PRECISION_STRINGS = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST, "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT,
    "fastest": Precision.DEFAULT, None: Precision.DEFAULT}


class DotAlgorithm(NamedTuple):
  """An explicit dot algorithm (``jax.lax.DotAlgorithm``): the types the operands are
  rounded to, the accumulation type, and how many passes emulate a higher precision.

  jaxlite records an algorithm in the jaxpr as JAX does, but lowers the dot without it
  (``precision_config`` DEFAULT, XLA's choice of algorithm), as the CPU computes it."""
  lhs_precision_type: Any
  rhs_precision_type: Any
  accumulation_type: Any
  lhs_component_count: int = 1
  rhs_component_count: int = 1
  num_primitive_operations: int = 1
  allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
  """Named dot algorithms (``jax.lax.DotAlgorithmPreset``), ``LHS_RHS_ACCUMULATOR``; an
  ``_X3`` suffix emulates a higher precision in three passes. Recorded and lowered as a
  ``DotAlgorithm`` is."""
  DEFAULT = enum.auto()
  ANY_F8_ANY_F8_F32 = enum.auto()
  ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
  ANY_F8_ANY_F8_ANY = enum.auto()
  ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
  F16_F16_F16 = enum.auto()
  F16_F16_F32 = enum.auto()
  BF16_BF16_BF16 = enum.auto()
  BF16_BF16_F32 = enum.auto()
  BF16_BF16_F32_X3 = enum.auto()
  BF16_BF16_F32_X6 = enum.auto()
  BF16_BF16_F32_X9 = enum.auto()
  TF32_TF32_F32 = enum.auto()
  TF32_TF32_F32_X3 = enum.auto()
  F32_F32_F32 = enum.auto()
  F64_F64_F64 = enum.auto()

  def __repr__(self):
    return f"DotAlgorithmPreset.{self.name}"

  def __str__(self):
    return self.name


# what JAX's signatures accept as ``precision``: anything canonicalize_precision takes
PrecisionLike = Any


def canonicalize_precision(precision):
  """The ``precision`` param of a dot or convolution: ``None``, a pair of ``Precision``
  values (lhs, rhs), or a ``DotAlgorithm`` / ``DotAlgorithmPreset``.

  ``None`` takes the ``jax_default_matmul_precision`` option (``jax.default_matmul_precision``)
  at trace time, as JAX does, so a function traced under another value is traced anew.

  Parameters
  ----------
  precision : None, str, Precision, a pair of them, DotAlgorithm or DotAlgorithmPreset
    A string is a ``Precision`` alias (``'highest'``, ``'float32'``, ``'tensorfloat32'``,
    ...) or a preset's name (``'F32_F32_F32'``).

  Returns
  -------
  None, (Precision, Precision), DotAlgorithm or DotAlgorithmPreset

  Raises
  ------
  ValueError
    ``precision`` is none of these.

  Examples
  --------
  >>> canonicalize_precision("float32")
  (Precision.HIGHEST, Precision.HIGHEST)
  >>> canonicalize_precision(("high", "default"))
  (Precision.HIGH, Precision.DEFAULT)
  """
  if precision is None:
    default = config.jax_default_matmul_precision
    if default is None:
      return None
    try:
      return canonicalize_precision(default)
    except ValueError:
      raise ValueError(
          "jax_default_matmul_precision flag must be set to None, a value in "
          f"{list(_PRECISION_STRINGS)}, or the name of a lax.DotAlgorithmPreset, but got "
          f"{default}") from None
  if isinstance(precision, str):
    if precision in _PRECISION_STRINGS:
      return Precision(precision), Precision(precision)
    if precision in DotAlgorithmPreset.__members__:
      return DotAlgorithmPreset[precision]
  elif isinstance(precision, Precision):
    return precision, precision
  elif isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
    return precision
  elif isinstance(precision, (list, tuple)) and len(precision) == 2:
    if all(isinstance(p, Precision) for p in precision):
      return tuple(precision)
    if all(isinstance(p, str) for p in precision):
      return tuple(canonicalize_precision(p)[0] for p in precision)
  raise ValueError(
      "Precision argument must be one of:\n"
      "- None,\n"
      f"- a string in {list(_PRECISION_STRINGS)},\n"
      "- a lax.Precision value,\n"
      "- a tuple of two lax.Precision values or strings,\n"
      "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
      "- a lax.DotAlgorithm value;\n"
      f"but got {precision}.")


def precision_pair(precision) -> tuple:
  """The (lhs, rhs) ``Precision`` pair that StableHLO's ``precision_config`` holds for a
  canonical ``precision``: ``DEFAULT`` twice for None and for an algorithm (which an
  attribute of its own names)."""
  return precision if type(precision) is tuple else (Precision.DEFAULT, Precision.DEFAULT)


class AccuracyMode(enum.Enum):
  """Accuracy request for transcendental functions (``jax.lax.AccuracyMode``): XLA
  picks the implementation; with one implementation (the CPU's) it changes nothing."""
  HIGHEST = 1
  DEFAULT = 2


@dataclasses.dataclass(frozen=True)
class Tolerance:
  """Error tolerance for transcendental functions (``jax.lax.Tolerance``): at most two of
  an absolute tolerance, a relative one and units in the last place.

  Unlike JAX's, equal tolerances are equal (and hash alike), so they print and cache by
  value.

  Raises
  ------
  ValueError
    A tolerance is negative, or none is set.
  """
  atol: float = 0.0
  rtol: float = 0.0
  ulps: int = 0

  def __post_init__(self):
    if self.atol < 0.0 or self.rtol < 0.0 or self.ulps < 0.0:
      raise ValueError("Tolerances must be non-negative.")
    if self.atol == 0.0 and self.rtol == 0.0 and self.ulps == 0:
      raise ValueError("At least one of atol, rtol, or ulps must be set.")


def check_accuracy(accuracy):
  """``accuracy`` if it is None, a ``Tolerance`` or an ``AccuracyMode``; else JAX's
  error, raised where the function is called (JAX raises it when lowering)."""
  if accuracy is None or isinstance(accuracy, (Tolerance, AccuracyMode)):
    return accuracy
  raise NotImplementedError(f"Accuracy {accuracy} not supported")
