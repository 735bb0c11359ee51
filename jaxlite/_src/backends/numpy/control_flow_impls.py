"""Tier 0's implementations of the primitives that hold jaxprs (a nested jit call, cond,
while, scan and reduce with a computation): Python loops over bodies compiled by the code
generator.

A ``while`` or ``scan`` loop still running after ``HANDOFF_AFTER`` seconds asks the tier
policy (``handoffs``, where ``tiers`` registers it) for its remaining iterations
elsewhere: the policy compiles the rest of the loop with XLA beside it, and the loop hands
its state over from the iteration where that is ready (the carry, and for a scan its step
and the outputs so far: what the remaining iterations depend on)."""
import time

import numpy as np

from jaxlite._src.base import tuning
from jaxlite._src.core import core
from jaxlite._src.backends.numpy import codegen
from jaxlite._src.backends.numpy.impls import impl_rules, inplace_rules
from jaxlite._src.lax import call
from jaxlite._src.lax import control_flow as cf
from jaxlite._src.lax import custom_derivatives as cd
from jaxlite._src.lax import reductions as red


# ``eager_call(jaxpr, name, values) -> outputs, or None``: runs a ``jit`` equation bound
# outside any trace (vmap or jvp of a jitted function called eagerly) with the tier policy
# of jitted functions, as JAX compiles such a call; registered by ``jit`` (none, or None
# returned: tier 0 runs it). Tier 0's own code never gets here: ``passes.inline`` inlines
# every nested call before it compiles.
eager_calls: list = []


def _jit_impl(*args, jaxpr, name):
  if eager_calls:
    outs = eager_calls[0](jaxpr, name, args)
    if outs is not None:
      return outs
  return codegen.compiled(jaxpr, name)(*args)


def _cond_impl(index, *args, branches):
  return codegen.compiled(branches[int(index)])(*args)


HANDOFF_AFTER = tuning.LOOP_HANDOFF_AFTER
CHECK_EVERY = 16   # iterations between two looks at the clock or at the handoff

# ``handoff(prim, params, values, start) -> object with ready() and run(values), or
# None``: the tier policy's, registered by it (none: loops stay here); with ``start``
# False it only gives a handoff made for the same loop before (by an earlier call)
handoffs: list = []


class _NoHandoff:
  @staticmethod
  def ready() -> bool:
    return False


class _Watch:
  """When a loop asks for a handoff, and whether its handoff is ready (asked every
  ``CHECK_EVERY`` iterations). At the first look, a handoff that an earlier call of the
  same loop made is taken if it is ready: that call ran long, and this one would too."""
  __slots__ = ("started", "handoff", "looked")

  def __init__(self):
    self.started, self.handoff, self.looked = time.perf_counter(), None, False

  def ready(self, prim, params, values) -> bool:
    if self.handoff is None:
      if not self.looked:
        self.looked = True
        earlier = handoffs[0](prim, params, values, False)
        if earlier is not None and earlier.ready():
          self.handoff = earlier
          return True
      if time.perf_counter() - self.started > HANDOFF_AFTER:
        self.handoff = handoffs[0](prim, params, values, True) or _NoHandoff
      return False
    return self.handoff.ready()


def _updated_in_place(jaxpr, first, count):
  """The indices among ``jaxpr``'s invars ``first .. first + count`` that an in-place
  rule may overwrite (the first operand of one): a loop's carries it updates."""
  updated = {e.invars[0] for e in jaxpr.eqns if e.primitive in inplace_rules}
  return tuple(i for i in range(first, first + count) if jaxpr.invars[i] in updated)


def _owned(x):
  return np.array(x, order="C", copy=True)


class _Carry:
  """A loop's body compiled to update the carries it scatters into in place: the loop
  owns those buffers (its own copies, made once, and what the body returns, copied again
  only where the body may return a buffer something else sees)."""

  def __init__(self, body, first, count):
    self.donated = _updated_in_place(body.jaxpr, first, count)
    self.fn = codegen.compiled(body, donated=self.donated)
    self.carries = [i - first for i in self.donated]
    self.shared = [i for i in self.carries if not self.fn.fresh[i]]

  @property
  def run(self):
    """The body as the loop calls it: ``step``, or the compiled body itself where no
    output needs copying (a frame less per iteration)."""
    return self.step if self.shared else self.fn

  def own(self, carry):
    for i in self.carries:
      carry[i] = _owned(carry[i])
    return carry

  def step(self, *args):
    outs = self.fn(*args)
    for i in self.shared:
      outs[i] = _owned(outs[i])
    return outs


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  cond_consts = args[:cond_nconsts]
  body_consts = args[cond_nconsts:cond_nconsts + body_nconsts]
  carry = list(args[cond_nconsts + body_nconsts:])
  cond_fn = codegen.compiled(cond_jaxpr)
  body = _Carry(body_jaxpr, body_nconsts, len(carry))
  carry = body.own(carry)
  watch, steps, step = _Watch(), 0, body.run
  while cond_fn(*cond_consts, *carry)[0]:
    carry = step(*body_consts, *carry)
    steps += 1
    if not steps % CHECK_EVERY and handoffs and watch.ready(cf.while_p, dict(
        cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
        body_nconsts=body_nconsts), args):
      return watch.handoff.run([*cond_consts, *body_consts, *carry])
  return carry


def _scan_impl(*args, jaxpr, length, reverse, num_consts, num_carry, unroll, linear):
  consts = args[:num_consts]
  carry = list(args[num_consts:num_consts + num_carry])
  xs = args[num_consts + num_carry:]
  body = _Carry(jaxpr, num_consts, num_carry)
  carry = body.own(carry)
  ys_avals = jaxpr.out_avals[num_carry:]
  ys = [np.empty((length,) + a.shape, a.dtype) for a in ys_avals]
  watch, run = _Watch(), body.run
  for step in range(length):
    i = length - 1 - step if reverse else step
    outs = run(*consts, *carry, *[x[i] for x in xs]) if xs else run(*consts, *carry)
    carry = outs[:num_carry]
    if ys:
      for buf, y in zip(ys, outs[num_carry:]):
        buf[i] = y
    if not (step + 1) % CHECK_EVERY and handoffs and step + 1 < length and watch.ready(cf.scan_p, dict(
        jaxpr=jaxpr, length=length, reverse=reverse, num_consts=num_consts,
        num_carry=num_carry, unroll=unroll, linear=linear), [*args, *ys]):
      # (the rest takes the step to go on from, and the outputs so far)
      return watch.handoff.run([np.int32(step + 1), *consts, *carry, *xs, *ys])
  return carry + ys


impl_rules[call.jit_p] = _jit_impl
impl_rules[call.closed_call_p] = lambda *args, call_jaxpr: codegen.compiled(call_jaxpr)(*args)
impl_rules[call.call_p] = lambda *args, call_jaxpr: codegen.compiled(
    call.closed_of_call(call_jaxpr))(*args)
# In tier 0's code a custom derivative's or a checkpoint's function runs compiled, as a
# call's does: its eager impl binds the jaxpr's primitives one by one (a custom_jvp
# function in a loop body dispatched each of its operations at every iteration).
def _compiled_call(param):
  """Tier 0's impl of a primitive that calls the jaxpr held in its param ``param``."""
  return lambda *args, **params: codegen.compiled(params[param])(*args)


impl_rules[cd.custom_jvp_call_p] = _compiled_call("call_jaxpr")
impl_rules[cd.custom_vjp_call_p] = _compiled_call("call_jaxpr")
impl_rules[cd.remat_p] = _compiled_call("jaxpr")
impl_rules[cf.cond_p] = _cond_impl
impl_rules[cf.while_p] = _while_impl
impl_rules[cf.scan_p] = _scan_impl


def _reduce_computation(*args, computation, jaxpr, dimensions):
  # reduced as a tree of vectorised applications of the computation, compiled once per
  # computation and shapes
  avals = [core.ShapedArray(np.shape(x), np.asarray(x).dtype) for x in args]
  tree = red.reduce_as_tree_jaxpr(avals, jaxpr.jaxpr, jaxpr.consts, dimensions)
  return codegen.compiled(tree)(*args)


impl_rules[red.reduce_p] = _reduce_computation
