"""JAX's "hijax" extension API (``jax.experimental.hijax``), as far as jaxlite goes.

In JAX, hijax lets a library define *high-level types*: values such as a mutable box or
flax.nnx's ``HijaxVariable`` that flow through ``jit``, ``grad`` and ``vmap`` as themselves,
with primitives (``HiPrimitive``) that operate on them and a lowering (``to_lojax``) to
ordinary arrays. jaxlite's traces know one kind of value, the array (``ShapedArray``), and
have no lowering from high-level types, so it does not run hijax programs.

What is here:

- the names that are jaxlite's own objects: ``AbstractValue``, ``ShapedArray``, ``Zero``,
  ``instantiate_zeros``, ``is_undefined_primal``, ``control_flow_allowed_effects`` and
  ``AbstractRef``;
- what a library needs to *define* hijax types and primitives at import time, which is
  harmless: the base classes ``HiType`` and ``MutableHiType``, ``HiPrimitive`` (a primitive
  may be made), the data classes ``AvalQDD`` and ``AvalMutableQDD``, the markers
  ``aval_method`` and ``aval_property``, and ``register_hitype`` (it records the type's
  aval function in ``pytype_aval_mappings``, as JAX does);
- what *runs* a hijax program raises NotImplementedError: binding a ``HiPrimitive`` (the
  only way a jaxlite program meets a high-level value).

flax.nnx defines its hijax variable types at import and binds their primitives only for
Variables made with ``hijax=True`` (the default when the ``flax_hijax_variable`` flag is on;
it is off by default), so nnx runs on jaxlite with both off.
"""
from __future__ import annotations

import dataclasses
from collections import namedtuple
from typing import Any

from jaxlite._src.core import core
from jaxlite._src.core import pytypes
from jaxlite._src.core.core import AbstractValue, ShapedArray  # noqa: F401  (JAX's names here)
from jaxlite._src.base.effects import control_flow_allowed_effects  # noqa: F401
from jaxlite._src.core.state.types import AbstractRef  # noqa: F401
from jaxlite._src.transforms.ad import Zero  # noqa: F401
from jaxlite._src.transforms.ad import instantiate_zeros, is_undefined_primal  # noqa: F401

UNSUPPORTED = (
    "jaxlite does not support hijax primitives (jax.experimental.hijax.HiPrimitive "
    "{name!r}): its traces carry arrays only and have no lowering from high-level types. "
    "Run the program with the real jax. (flax.nnx binds them only for Variables made with "
    "hijax=True, the default when the flax_hijax_variable flag is on; leave both off.)")


# Markers that JAX's tracers read on a high-level type: a tracer's attribute found on its
# aval as ``aval_property(fget)`` is ``fget(tracer)``, as ``aval_method(fun)`` a method
# bound to the tracer. jaxlite's tracers have array avals only, so nothing reads them.
aval_property = namedtuple("aval_property", ["fget"])
aval_method = namedtuple("aval_method", ["fun"])


@dataclasses.dataclass(frozen=True)
class AvalQDD:
  """A high-level type with its quasi-dynamic data (the current contents type of a
  mutable value), as a HiPrimitive's shape rule returns it."""
  aval: AbstractValue
  qdd: Any
  is_high = True
  has_qdd = True


@dataclasses.dataclass(frozen=True)
class AvalMutableQDD:
  """A mutable high-level type with its quasi-dynamic data, which shape rules update, as a
  HiPrimitive's shape rule receives it."""
  aval: AbstractValue
  mutable_qdd: Any


class HiType(AbstractValue):
  """Base class of an immutable high-level type (JAX's hijax ``HiType``)."""
  is_high = True
  has_qdd = False


class MutableHiType(AbstractValue):
  """Base class of a mutable high-level type, whose contents' type may change (JAX's
  hijax ``MutableHiType``)."""
  is_high = True
  has_qdd = True
  is_writer = False


class HiPrimitive(core.Primitive):
  """Base class of a primitive on high-level types (JAX's hijax ``HiPrimitive``).

  A subclass defines ``abstract_eval``, ``to_lojax``, ``jvp`` and ``transpose`` as methods,
  and making one is allowed. Binding one raises NotImplementedError: jaxlite cannot trace
  high-level types.
  """

  def bind(self, *args, **params):
    raise NotImplementedError(UNSUPPORTED.format(name=self.name))

  def bind_with_trace(self, trace, args, *rest):
    raise NotImplementedError(UNSUPPORTED.format(name=self.name))


def register_hitype(val_cls, typeof_fn) -> None:
  """Record that values of ``val_cls`` have the high-level type ``typeof_fn(value)``.

  As JAX does, the function goes into ``pytype_aval_mappings``. jaxlite's conversions do
  not consult that table, so such a value given to a jaxlite function is rejected as not
  an array.
  """
  pytypes.pytype_aval_mappings[val_cls] = typeof_fn
