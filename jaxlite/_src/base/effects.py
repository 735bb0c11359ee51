"""Effects: what running a primitive does besides computing its outputs (JAX's
``jax._src.effects``).

A library's primitive declares side effects with an effectful shape rule
(``Primitive.def_effectful_abstract_eval``), which returns the output avals and a set of
effects. An effect is an instance of a subclass of ``Effect`` (``jax.extend.core.Effect``);
the class says what kind of side effect it is. jaxlite keeps every primitive that reported
an effect from being dropped, merged or folded by its passes, and reports the effects in
``jaxpr.effects``. jaxlite's own effectful primitives (the callbacks and checks) stand for
their own effects there, as they did before this module existed.

``EffectTypeSet`` is JAX's registry of effect classes with a common property;
``control_flow_allowed_effects`` lists those JAX accepts inside ``cond``, ``while_loop`` and
``scan``. jaxlite's control flow accepts every effect, so registering a class there only
matters under JAX.
"""
from __future__ import annotations

from collections.abc import Iterable


class Effect:
  """A side effect of a primitive (``jax.extend.core.Effect``).

  Subclass it for each kind of side effect, and return instances from a shape rule given
  to ``Primitive.def_effectful_abstract_eval``.

  Examples
  --------
  >>> from jaxlite.extend import core as jex
  >>> class LogEffect(jex.Effect):
  ...   pass
  >>> log_effect = LogEffect()
  >>> isinstance(log_effect, jex.Effect)
  True
  """


class EffectTypeSet:
  """A set of effect classes; an effect belongs to it when it is an instance of one of them
  (JAX's ``jax._src.effects.EffectTypeSet``)."""

  def __init__(self):
    self._effect_types: set[type[Effect]] = set()

  def __repr__(self):
    return f"EffectTypeSet({self._effect_types})"

  def add_type(self, effect_type: type[Effect]):
    """Add the class ``effect_type`` (and so its subclasses) to the set."""
    self._effect_types.add(effect_type)

  def contains(self, eff: Effect) -> bool:
    """Whether ``eff`` is an instance of a class in the set."""
    return any(isinstance(eff, eff_type) for eff_type in self._effect_types)

  def filter_in(self, effects: Iterable[Effect]) -> list[Effect]:
    """The effects of ``effects`` that belong to the set."""
    return [eff for eff in effects if self.contains(eff)]

  def filter_not_in(self, effects: Iterable[Effect]) -> list[Effect]:
    """The effects of ``effects`` that do not belong to the set."""
    return [eff for eff in effects if not self.contains(eff)]


no_effects: frozenset = frozenset()

# The effect classes JAX accepts inside cond, while_loop and scan (JAX raises
# NotImplementedError for others). jaxlite's control flow accepts every effect.
control_flow_allowed_effects: EffectTypeSet = EffectTypeSet()
