"""JAX's "hijax" extension API (``jax.experimental.hijax``): high-level types.

A library defines a *high-level type* (an aval class deriving ``HiType``, or
``MutableHiType`` for a value whose contents' type may change: its "quasi-dynamic data",
qdd), registers the Python class of its values with ``register_hitype``, and operates on
them with ``HiPrimitive`` subclasses. flax.nnx's hijax Variables are such values.

How jaxlite runs them. A high-level value is never a tracer and never enters a jaxpr:

- a ``HiPrimitive`` bound eagerly, or while a function is staged (``jit``, ``eval_shape``,
  a loop body; the traces whose ``requires_low`` is set), runs its lowering ``to_lojax``
  on the values themselves, which stages the array operations it performs;
- under ``grad`` and ``vmap`` it runs its rules (``jvp``, ``transpose``, ``batch``), which
  this module enters in the transformations' tables when the primitive is made; a
  primitive none of whose operands is transformed binds below, as any other;
- a mutable high-level value is a ref whose value is its state (``state.types.HiState``:
  its qdd and the arrays ``read_loval`` gives): a staged region takes its arrays as inputs
  (an argument's in its place, a closed-over one's after the arguments), the value holds
  tracers of them while the region is traced, gets its value from outside back when the
  region ends, and the region's outputs end with the arrays of the values it changed,
  written back with ``update_from_loval`` after the call. ``jit``'s cache keys on the qdd
  of an argument and traces again when a closed-over value's qdd has changed. Loops,
  ``cond``, ``checkpoint`` and ``checkify`` carry the values their bodies write, as
  they carry refs, and a ``custom_jvp`` function writes them as it writes refs (under
  autodiff outside jit; under jit it is NotImplementedError, as in JAX);
- an immutable high-level argument of ``jit``, ``eval_shape`` or ``make_jaxpr`` enters
  as the arrays of ``lower_val``, and the function gets ``raise_val`` of their tracers;
  one that ``jit`` returns leaves as its arrays and is raised again from the results
  (``state.types.lower_outputs``, ``raised_tree``).

So jaxprs hold arrays only and both tiers run them unchanged (``make_jaxpr`` shows that
discharged form, where JAX shows the high-level types and their primitives).
"""
from __future__ import annotations

import dataclasses
import sys
import threading
from collections import namedtuple
from typing import Any

from jaxlite._src.core import core
from jaxlite._src.core import pytypes
from jaxlite._src.core.state import types as state_types
from jaxlite._src.core.core import AbstractValue, ShapedArray  # noqa: F401  (JAX's names here)
from jaxlite._src.base.effects import control_flow_allowed_effects  # noqa: F401
from jaxlite._src.core.state.types import AbstractRef  # noqa: F401
from jaxlite._src.transforms import ad, batching
from jaxlite._src.transforms.ad import Zero  # noqa: F401
from jaxlite._src.transforms.ad import instantiate_zeros, is_undefined_primal  # noqa: F401


# Markers on a high-level type that JAX's tracers read: an attribute found on the aval as
# ``aval_property(fget)`` is ``fget(tracer)``, as ``aval_method(fun)`` a bound method.
# jaxlite hands functions the values themselves, so they reach the value's own class.
aval_property = namedtuple("aval_property", ["fget"])
aval_method = namedtuple("aval_method", ["fun"])


class QuasiDynamicData:
  """Base class of quasi-dynamic data: what of a mutable value's type may change."""


class MutableQuasiDynamicData:
  """Quasi-dynamic data that shape rules update (``AvalMutableQDD.mutable_qdd``)."""

  def __init__(self, val):
    self.init_val = val
    self.cur_val = val

  def update(self, val):
    self.cur_val = val


@dataclasses.dataclass(frozen=True)
class AvalQDD:
  """A high-level type with its quasi-dynamic data, as a HiPrimitive's shape rule
  returns it."""
  aval: AbstractValue
  qdd: Any
  is_high = True
  has_qdd = True

  def lo_ty(self):
    return self.aval.lo_ty_qdd(self.qdd)

  def read_loval(self, val):
    return self.aval.read_loval(self.qdd, val)

  def new_from_loval(self, *lo_vals):
    return self.aval.new_from_loval(self.qdd, *lo_vals)

  def to_tangent_aval(self):
    return AvalQDD(self.aval.to_tangent_aval(), self.qdd and self.qdd.to_tangent_qdd())


@dataclasses.dataclass(frozen=True)
class AvalMutableQDD:
  """A mutable high-level type with its quasi-dynamic data, which shape rules update."""
  aval: AbstractValue
  mutable_qdd: Any


def _must_define(obj, name):
  return NotImplementedError(
      f"the high-level type {type(obj).__name__} does not define {name}, which jaxlite "
      "(as JAX) needs to run it there: define it on the type.")


class HiType(AbstractValue):
  """Base class of an immutable high-level type (JAX's hijax ``HiType``): it lowers to
  the arrays of ``lo_ty()`` (``lower_val``, ``raise_val``)."""
  is_high = True
  has_qdd = False

  def lo_ty(self) -> list:
    raise _must_define(self, "lo_ty")

  def lower_val(self, hi_val) -> list:
    raise _must_define(self, "lower_val")

  def raise_val(self, *lo_vals):
    raise _must_define(self, "raise_val")

  def to_tangent_aval(self):
    raise _must_define(self, "to_tangent_aval")

  def to_ct_aval(self):
    return self.to_tangent_aval()


class MutableHiType(AbstractValue):
  """Base class of a mutable high-level type, whose contents' type may change (JAX's
  hijax ``MutableHiType``): with its qdd it lowers to the arrays of ``lo_ty_qdd(qdd)``
  (``read_loval``, ``new_from_loval``, ``update_from_loval``)."""
  is_high = True
  has_qdd = True
  is_writer = False

  def lo_ty_qdd(self, qdd, /) -> list:
    raise _must_define(self, "lo_ty_qdd")

  def lo_ty(self):
    raise TypeError("a mutable high-level type lowers by its quasi-dynamic data: call "
                    "lo_ty_qdd(qdd), not lo_ty().")

  def new_from_loval(self, qdd, /, *lo_vals):
    raise _must_define(self, "new_from_loval")

  def read_loval(self, qdd, val, /) -> list:
    raise _must_define(self, "read_loval")

  def read_loval_in(self, qdd, val, /) -> list:
    return self.read_loval(qdd, val)

  def update_from_loval(self, qdd, val, /, *lo_vals) -> None:
    raise _must_define(self, "update_from_loval")

  def to_tangent_aval(self):
    raise _must_define(self, "to_tangent_aval")

  def to_ct_aval(self):
    return self.to_tangent_aval()


class _Lowering(threading.local):
  """Whether the state of a high-level value is being read or written by its type's
  lowering functions (``read_loval``, ``update_from_loval``), on this thread: the
  primitives they bind then run their lowering as it is."""
  depth = 0


_lowering = _Lowering()


class HiPrimitive(core.Primitive):
  """Base class of a primitive on high-level values (JAX's hijax ``HiPrimitive``).

  A subclass defines ``abstract_eval``, ``to_lojax`` (the primitive in terms of array
  operations, on the values), ``jvp`` and ``transpose`` (when it is linear), and may
  define ``is_high`` (by default True). Binding it eagerly or while staging runs
  ``to_lojax``; under autodiff and ``vmap`` its ``jvp``, ``transpose`` and ``batch``.
  """

  def __init__(self, name):
    super().__init__(name)
    self._module = sys._getframe(1).f_globals.get("__name__", "")   # (the library's)
    ad.jvp_rules[self] = self.jvp
    ad.transpose_rules[self] = self.transpose
    batch = getattr(self, "batch", None)
    if batch is not None:
      batching.batching_rules[self] = batch
    core.abstract_eval_rules[self] = self._shape_rule

  def is_high(self, *avals, **params) -> bool:
    return True

  def is_effectful(self, params) -> bool:
    return False

  def abstract_eval(self, *avals, **params):
    raise NotImplementedError(f"the HiPrimitive {self.name!r} defines no abstract_eval.")

  def to_lojax(self, *args, **params):
    raise NotImplementedError(f"the HiPrimitive {self.name!r} defines no to_lojax, which "
                              "runs it (eagerly and under jit).")

  def jvp(self, primals, tangents, **params):
    raise NotImplementedError(f"the HiPrimitive {self.name!r} defines no jvp rule, which "
                              "differentiating it needs.")

  def transpose(self, *args, **params):
    raise NotImplementedError(f"the HiPrimitive {self.name!r} defines no transpose rule, "
                              "which reverse-mode differentiation needs.")

  def _shape_rule(self, *avals, **params):
    out = self.abstract_eval(*avals, **params)
    return out[0] if isinstance(out, tuple) and len(out) == 2 else out

  def bind(self, *args, **params):
    trace = core.current_trace()
    if _lowering.depth:
      return self.to_lojax(*args, **params)
    if getattr(trace, "requires_low", False) and self.is_high(*map(core.get_aval, args), **params):
      return _bind_lowered(self, trace, args, params)
    if trace is core.eval_trace and _defines(self, "impl"):
      return self.impl(*args, **params)
    return trace.process_primitive(self, args, params)

  def bind_with_trace(self, trace, args, *rest):
    with core.set_current_trace(trace):
      return self.bind(*args, **(rest[-1] if rest else {}))


def _defines(prim, name) -> bool:
  return getattr(type(prim), name) is not getattr(HiPrimitive, name, None)


def _bind_lowered(prim, trace, args, params):
  # Run the lowering on the values, bringing each mutable one into the region being
  # traced (state.types): it holds the region's state while the lowering reads and
  # writes it, and is marked written when the lowering changed it.
  mutables = [x for x in args if state_types.is_hi_mutable(x)]
  in_region = state_types.in_scope()
  # (a staging trace outside every region, a custom_jvp body's, may read them only)
  watch = in_region or trace is not core.eval_trace
  before = [state_types.current_value(x) for x in mutables] if watch else []
  outs = prim.to_lojax(*args, **params)
  for x, old in zip(mutables, before):
    if _changed(old, state_types.current_value(x)):
      if not in_region:
        state_types.put_back(x, old)
        raise state_types.unsupported_write(x, trace)
      state_types.mark_written(x)
  if in_region:
    for out in (outs if prim.multiple_results else [outs]):
      if state_types.is_hi_mutable(out):
        state_types.adopt(out)
  return outs


def _changed(old, new) -> bool:
  return (old.qdd != new.qdd or len(old.vals) != len(new.vals)
          or any(a is not b for a, b in zip(old.vals, new.vals)))


class _HiRules:
  """How ``state.types`` reads and replaces the state of a registered type's values."""

  def __init__(self, typeof_fn):
    self.typeof = typeof_fn

  def mutable(self, x) -> bool:
    return self.typeof(x).has_qdd

  def read(self, x):
    aval = self.typeof(x)
    qdd = x.cur_qdd()
    _lowering.depth += 1
    try:
      return state_types.HiState(qdd, aval.read_loval_in(qdd, x))
    finally:
      _lowering.depth -= 1

  def write(self, x, state):
    _lowering.depth += 1
    try:
      self.typeof(x).update_from_loval(state.qdd, x, *state.vals)
    finally:
      _lowering.depth -= 1

  def lower(self, x) -> list:
    return list(self.typeof(x).lower_val(x))

  def raise_val(self, x, lo_vals):
    return self.typeof(x).raise_val(*lo_vals)

  def describe(self, x) -> str:
    return self.typeof(x).str_short()


def register_hitype(val_cls, typeof_fn) -> None:
  """Record that values of ``val_cls`` have the high-level type ``typeof_fn(value)``.

  Parameters
  ----------
  val_cls : type
    The Python class of the values.
  typeof_fn : callable
    ``typeof_fn(value)`` gives the value's type, a ``HiType`` or ``MutableHiType``
    (whose values also define ``cur_qdd()``, their quasi-dynamic data now).
  """
  if getattr(val_cls, "__hash__", None) is None:
    raise TypeError(
        f"register_hitype: values of {val_cls.__name__} are unhashable, but jaxlite "
        "keeps the state of each value a traced function uses by the value itself. "
        "Keep object's __hash__ (identity) on the class.")
  pytypes.pytype_aval_mappings[val_cls] = typeof_fn
  core.hitype_avals[val_cls] = typeof_fn
  state_types.hi_rules[val_cls] = _HiRules(typeof_fn)


def cur_qdd(x):
  """The quasi-dynamic data of the mutable high-level value ``x`` where the program now
  is (``jax.experimental.cur_qdd``)."""
  if not state_types.is_hi_mutable(x):
    raise TypeError(f"cur_qdd takes a value of a mutable high-level type, not "
                    f"{type(x).__name__}.")
  return x.cur_qdd()
