"""Names for values and the policies that decide what ``jax.checkpoint`` saves.

``checkpoint_name`` binds the ``name`` primitive (the identity, as JAX's), so a policy can
pick a value out by name. A policy is called as ``policy(prim, *in_avals, **params)`` on
each equation whose outputs the backward pass needs, and answers ``True`` / ``Saveable``
(keep the value from the forward pass), ``False`` / ``Recompute`` (compute it again in the
backward pass) or ``Offloadable(src, dst)``. ``split_by_policy`` applies a policy to the
known half of a partially evaluated jaxpr, as JAX's ``partial_eval_jaxpr_custom`` does.
"""
from __future__ import annotations

import dataclasses
import functools
import types
from typing import NamedTuple

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.core import core
from jaxlite._src.core.core import Primitive
from jaxlite._src.lax.bits import reduce_precision_p
from jaxlite._src.lax.convolution import conv_general_dilated_p
from jaxlite._src.lax.reductions import dot_general_p
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

# ----------------------------------------------------------------------------- name

name_p = Primitive("name")
name_p.def_abstract_eval(lambda x, *, name: x)
name_p.def_forwarding(lambda name: [0])   # eagerly, the operand as given (JAX's impl)


def _name_jvp(primals, tangents, *, name):
  # as JAX's: the primal is named, the tangent is not (a policy picks forward values)
  (x,), (t,) = primals, tangents
  return name_p.bind(x, name=name), t


ad.jvp_rules[name_p] = _name_jvp
batching.batching_rules[name_p] = lambda vals, dims, *, name: (name_p.bind(*vals, name=name),
                                                               dims[0])


def checkpoint_name(x, name):
  """Identify a value with a name within :func:`jax.checkpoint`.

  The identity at run time; in a trace it binds the ``name`` primitive, which policies
  such as ``checkpoint_policies.save_only_these_names`` select values by.

  Parameters
  ----------
  x : array or pytree of arrays
      The value to name.
  name : str
      The name to give it.

  Returns
  -------
  The input ``x``, unchanged.

  Examples
  --------
  >>> import jaxlite as jax
  >>> from jaxlite.ad_checkpoint import checkpoint_name
  >>> jax.make_jaxpr(lambda x: checkpoint_name(x * 2, 'a'))(1.)
  { lambda ; a:f32[]. let
      b:f32[] = mul a 2.0:f32[]
      c:f32[] = name[name=a] b
    in (c,) }
  """
  return tree.tree_map(functools.partial(name_p.bind, name=name), x)


# ----------------------------------------------------------------------------- what a policy says


class RecomputeType:
  """The type of ``Recompute``: compute the value again in the backward pass."""


class SaveableType:
  """The type of ``Saveable``: keep the value from the forward pass."""


Recompute = RecomputeType()
Saveable = SaveableType()


class Offloadable(NamedTuple):
  """Keep the value from the forward pass in memory ``dst``, moved there from ``src``."""
  src: str
  dst: str


def ensure_enum(case):
  """A policy's answer as ``Saveable``, ``Recompute`` or an ``Offloadable`` (JAX's check)."""
  if isinstance(case, bool):
    return Saveable if case else Recompute
  if not isinstance(case, (RecomputeType, SaveableType, Offloadable)):
    raise TypeError("Value returned by a remat policy should be a bool or"
                    " `ad_checkpoint.Recompute`, `ad_checkpoint.Saveable` or"
                    " `ad_checkpoint.Offloadable(...)`."
                    f" Got {case} of type {type(case)}.")
  return case


# ----------------------------------------------------------------------------- the policies


def everything_saveable(*_, **__) -> bool:
  """The default strategy, as if ``jax.checkpoint`` were not being used at all."""
  return True


def nothing_saveable(*_, **__) -> bool:
  """Rematerialize everything: the policy of ``jax.checkpoint`` given none."""
  return False


@dataclasses.dataclass(frozen=True)
class DotsSaveable:
  """Save the outputs of matrix multiplications and convolutions (with
  ``only_if_no_batch_dims``: of ``dot_general`` without batch dimensions only)."""
  only_if_no_batch_dims: bool

  def __call__(self, prim, *args, **params):
    if self.only_if_no_batch_dims:
      return prim is dot_general_p and _no_batch_dims(params)
    return prim in (dot_general_p, conv_general_dilated_p)


def _no_batch_dims(params):
  (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
  return not lhs_b and not rhs_b


checkpoint_dots = dots_saveable = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
  """As ``dots_with_no_batch_dims_saveable``, but offload to memory ``offload_dst``
  instead of keeping the value where it is."""
  def policy(prim, *_, **params):
    if prim is dot_general_p and _no_batch_dims(params):
      return Offloadable(src=offload_src, dst=offload_dst)
    return Recompute
  return policy


def save_anything_except_these_names(*names_not_to_save):
  """Save any values (not just named ones) excluding the names given (JAX 0.10.2's saves
  every value, the named ones too)."""
  return lambda *_, **__: True


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
  """The policy ``save_only_these_names`` returns."""
  saveable_names: frozenset

  def __call__(self, prim, *_, **params):
    return prim is name_p and params["name"] in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
  """The policy ``save_any_names_but_these`` returns."""
  names: frozenset

  def __call__(self, prim, *_, **params):
    return prim is name_p and params["name"] not in self.names


def save_any_names_but_these(*names_not_to_save):
  """Save only named values (outputs of ``checkpoint_name``), excluding the names given."""
  return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_only_these_names(*names_which_can_be_saved):
  """Save only named values, and only among the names given."""
  return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src,
                                      offload_dst):
  """As ``save_only_these_names``, but the names in ``names_which_can_be_offloaded`` are
  offloaded to memory ``offload_dst``."""
  names_which_can_be_saved = set(names_which_can_be_saved)
  names_which_can_be_offloaded = set(names_which_can_be_offloaded)
  intersection = names_which_can_be_saved.intersection(names_which_can_be_offloaded)
  if intersection:
    raise ValueError(
        "The names should be exclusive and should not intersect in"
        " `names_which_can_be_saved` and `names_which_can_be_offloaded`. Got"
        f" names_which_can_be_saved={names_which_can_be_saved},"
        f" names_which_can_be_offloaded={names_which_can_be_offloaded} and the"
        f" intersection={intersection}")

  def policy(prim, *_, **params):
    if prim is name_p and params["name"] in names_which_can_be_saved:
      return Saveable
    if prim is name_p and params["name"] in names_which_can_be_offloaded:
      return Offloadable(src=offload_src, dst=offload_dst)
    return Recompute
  return policy


def save_from_both_policies(policy_1, policy_2):
  """Logical OR of the given policies: a value is saved when either policy saves it."""
  def policy(prim, *args, **params):
    out1 = policy_1(prim, *args, **params)
    out2 = policy_2(prim, *args, **params)
    if not (isinstance(out1, bool) and isinstance(out2, bool)):
      raise ValueError(
          "The return value of the policies should be a boolean. Got:"
          f" {out1} and {out2}. Please write a custom policy function directly,"
          " rather than using this helper function.")
    return out1 or out2
  return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names)


# ----------------------------------------------------------------------------- applying one


def split_by_policy(known: core.ClosedJaxpr, n_res: int, policy):
  """Which residuals of ``known`` (the known half of ``pe.partial_eval_jaxpr``, whose last
  ``n_res`` outputs are the residuals) are saved, and how the others are recomputed.

  Walking back from the residuals, an equation the policy saves (or one with effects,
  which must not run twice) hands its outputs over as saved values; any other is
  recomputed, and so are the equations its inputs need. Returns ``(saved, recompute)``:
  the saved variables of ``known``, and a jaxpr that takes ``known``'s inputs followed by
  the saved values and returns the residuals.
  """
  jaxpr = known.jaxpr
  residuals = jaxpr.outvars[len(jaxpr.outvars) - n_res:]
  given = set(jaxpr.invars) | set(jaxpr.constvars)
  need = {v for v in residuals if type(v) is core.Var and v not in given}
  saved, recomputed = [], []
  for eqn in reversed(jaxpr.eqns):
    outs = [v for v in eqn.outvars if v in need]
    if not outs:
      continue
    decision = ensure_enum(policy(eqn.primitive, *[v.aval for v in eqn.invars],
                                  **eqn.params))
    if eqn.effects or not isinstance(decision, RecomputeType):
      saved.extend(reversed(outs))   # (no host memory here: an Offloadable stays saved)
    else:
      recomputed.append(eqn)
      need.update(v for v in eqn.invars if type(v) is core.Var and v not in given)
    need.difference_update(outs)
  saved.reverse()
  recompute = core.ClosedJaxpr(
      core.Jaxpr(jaxpr.constvars, list(jaxpr.invars) + saved, residuals,
                 recomputed[::-1]), known.consts)
  return saved, recompute


def round_residuals(closed: core.ClosedJaxpr, n_res: int) -> core.ClosedJaxpr:
  """``closed`` with each of its last ``n_res`` outputs that is a float read by one of
  its equations rounded by ``reduce_precision`` to its own dtype where it is made, so the
  forward pass and the backward pass see the same value even where a compiler would keep
  extra precision (JAX's ``_insert_reduce_precision``, jax-ml/jax#22244)."""
  jaxpr = closed.jaxpr
  residuals = jaxpr.outvars[len(jaxpr.outvars) - n_res:]
  read = {v for e in jaxpr.eqns for v in e.invars if type(v) is core.Var}
  invars, constvars, eqns = list(jaxpr.invars), list(jaxpr.constvars), list(jaxpr.eqns)
  for v in residuals:
    if (type(v) is not core.Var or v not in read
        or not dtypes.issubdtype(v.aval.dtype, np.inexact)):
      continue
    fresh = core.Var(v.aval)
    finfo = dtypes.finfo(v.aval.dtype)
    params = dict(exponent_bits=finfo.nexp, mantissa_bits=finfo.nmant)
    if v in invars or v in constvars:
      given = invars if v in invars else constvars
      given[given.index(v)] = fresh
      eqns.insert(0, core.new_jaxpr_eqn([fresh], [v], reduce_precision_p, params))
      continue
    i, eqn = next((i, e) for i, e in enumerate(eqns) if v in e.outvars)
    if eqn.primitive is reduce_precision_p and eqn.params == params:
      continue
    eqns[i] = eqn.replace(outvars=[fresh if o is v else o for o in eqn.outvars])
    eqns.insert(i + 1, core.new_jaxpr_eqn([fresh], [v], reduce_precision_p, params,
                                          source_info=eqn.source_info))
  return core.ClosedJaxpr(jaxpr.replace(invars=invars, constvars=constvars, eqns=eqns),
                          closed.consts)
