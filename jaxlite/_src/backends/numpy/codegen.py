"""Tier 0: compile a jaxpr into straight-line Python source over NumPy.

The source is ``exec``-ed once; calling the result costs one Python call per equation,
with no tracing, dispatch or abstract evaluation left. Common elementwise primitives are
written as direct NumPy ufunc calls, a speed form of the implementation table that can
also write into a dying operand's buffer (tests/test_codegen_templates.py proves each
computes the table's bits and dtype on every dtype it runs on); everything else calls the
eager implementation table. Runs of them on large arrays are evaluated in cache-sized
blocks, on threads (``blocks.py``): each block is the same code, emitted by ``emit_jaxpr``.
"""
from __future__ import annotations

import functools
import itertools
import warnings
import weakref

import numpy as np

from jaxlite._src.core import core
from jaxlite._src import passes
from jaxlite._src.backends import lowering
from jaxlite._src.backends.numpy import blocks
from jaxlite._src.backends.numpy import subnormals
from jaxlite._src.backends.numpy.impls import expanded_shape, impl_rules, inplace_rules
from jaxlite._src.base import dtypes
from jaxlite._src.base.config import config
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import shapes as sh
from jaxlite._src.lax.kernels import (max_with_plus_zero, min_with_minus_zero,
                                      zero_scalar_of_sign)
from jaxlite._src.transforms import ad

# primitive -> (the operand dtype kinds it serves, None for all; a NumPy expression
# template over the argument names {0}, {1}, ...): the elementwise specs' templates, in
# which ``_<name>`` is the primitive's own kernel
_TEMPLATES = {prim: (spec.template_kinds, spec.template)
              for prim, spec in ew.specs.items() if spec.template}
_TEMPLATES[ad.add_any_p] = (None, "_np.add({0}, {1})")
_TEMPLATE_KERNELS = {f"_{spec.name}": spec.kernel for spec in ew.specs.values()
                     if spec.template and f"_{spec.name}(" in spec.template}

# relu's max(x, +0) and min(x, -0) of floats: ``kernels.max_with_plus_zero``
_WITH_SIGNED_ZERO = {ew.max_p: "_max0({0}, {1})", ew.min_p: "_min0({0}, {1})"}


def _broadcast_view(eqn):
  shape = tuple(eqn.params["shape"])
  expanded = expanded_shape(eqn.invars[0].aval.shape, shape,
                            eqn.params["broadcast_dimensions"])
  if expanded == shape:   # only size-1 axes inserted
    return f"{{0}}.reshape({shape})"
  return f"_np.broadcast_to({{0}}.reshape({expanded}), {shape})"


# Shape primitives whose result is a view of their operand: primitive -> function(eqn) ->
# template, a method call in place of a call through the implementation table (about 3 us
# less each; autodiff and vmap leave many). Not allocations: the buffer owners see views.
_VIEWS = {
    sh.reshape_p: lambda eqn: (None if eqn.params["dimensions"] is not None
                               else f"{{0}}.reshape({tuple(eqn.params['new_sizes'])})"),
    sh.squeeze_p: lambda eqn: f"{{0}}.reshape({eqn.outvars[0].aval.shape})",
    sh.transpose_p: lambda eqn: f"{{0}}.transpose({tuple(eqn.params['permutation'])})",
    sh.broadcast_in_dim_p: _broadcast_view,
}

# primitive -> function(emitter, eqn, arg_names) -> expression, for control flow etc.
codegen_rules: dict = {}


class _Emitter:
  """Accumulates source lines and the namespace they refer to."""

  def __init__(self):
    # generated code belongs to the backend's package, so its NumPy floating-point
    # warnings fall under jaxlite's warning filter (core.QUIET_FILTER)
    self.namespace = {"_np": np, "_run_blocks": blocks.run, **_TEMPLATE_KERNELS,
                      "_max0": max_with_plus_zero, "_min0": min_with_minus_zero,
                      **subnormals.namespace(), "_warnings": warnings,
                      "_QUIET_FILTER": core.QUIET_FILTER, "_keep_quiet": core.keep_kernels_quiet,
                      "__name__": "jaxlite._src.backends.numpy.generated"}
    self.counter = itertools.count()
    self.lines = []
    self.functions = []   # source of the block functions the lines call

  def constant(self, value, prefix="_k") -> str:
    name = f"{prefix}{next(self.counter)}"
    self.namespace[name] = value
    return name


def _literal_value(lit: core.Literal):
  return np.asarray(lit.val, lit.aval.dtype)[()]


def emit_jaxpr(em: _Emitter, jaxpr: core.Jaxpr, arg_names, indent: str,
               blocked: bool = True, out_targets=None, scratch=None,
               donated=()) -> list[str]:
  """Emit the body of ``jaxpr`` given names for its constvars+invars; returns out names.
  With ``blocked`` (and ``jaxlite_tier0_blocks``), large elementwise runs become blocked
  regions. ``out_targets`` maps outvars to expressions of buffers that a direct ufunc
  computing them writes into; with ``scratch`` (a ``_Scratch``), every other direct ufunc
  writes into a scratch buffer, one freed when its value dies. ``donated`` invars hold
  buffers the function may overwrite once they die. Sets ``em.fresh``: per output,
  whether it is a buffer nothing else returned or passed in can see."""
  names = dict(zip(list(jaxpr.constvars) + list(jaxpr.invars), arg_names))

  def read(v):
    if type(v) is core.Literal:
      return em.constant(_literal_value(v), "_l")
    return names[v]

  # Free each intermediate after its last use: large arrays are then recycled by the
  # allocator instead of all living until the function returns.
  items = (blocks.plan(jaxpr, _blockable) if blocked and config.jaxlite_tier0_blocks
           else jaxpr.eqns)
  last_use = {}
  for i, item in enumerate(items):
    for v in item.invars:
      if type(v) is core.Var:
        last_use[v] = i
  donated = set(donated)
  keep = set(jaxpr.outvars) | set(jaxpr.constvars) | (set(jaxpr.invars) - donated)
  buffers = _BufferOwners()
  buffers.allocate(donated)
  for i, item in enumerate(items):
    dying = [v for v in item.invars
             if type(v) is core.Var and v not in keep and last_use[v] == i]
    if type(item) is blocks.Region:
      _emit_region(em, item, names, indent)
      buffers.allocate(item.outvars)
      _emit_del(em, names, dying, indent)
      continue
    eqn = item
    args = [read(v) for v in eqn.invars]
    reusable = _reusable(eqn, dying, buffers, names, keep, last_use, i)
    if eqn.primitive in inplace_rules:
      reusable = _overwritable(eqn, dying, buffers, names, keep, last_use, i)
    template = _template(eqn)   # (None: another rule computes it; see _allocates)
    out_to = template is not None and (out_targets or {}).get(eqn.outvars[0])
    slot = None
    if scratch is not None and template is not None and not (out_to or reusable):
      slot = scratch.take(eqn.outvars[0].aval.dtype)
      out_to = f"t{slot}"
    expr, in_place = _expression(em, eqn, args, indent, template, out_to or reusable)
    in_place = None if out_to else in_place
    outs = [in_place or f"v{next(em.counter)}"] if in_place else [
        f"v{next(em.counter)}" for _ in eqn.outvars]
    for v, n in zip(eqn.outvars, outs):
      names[v] = n
    if template is not None or eqn.primitive in inplace_rules:
      buffers.allocate(v for v in eqn.outvars if v.aval.shape)
    else:
      buffers.may_alias(eqn.outvars, [v for v in eqn.invars if type(v) is core.Var])
    if eqn.primitive.multiple_results:
      target = ", ".join(outs) + ("," if len(outs) == 1 else "")
      em.lines.append(f"{indent}{target} = {expr}" if outs else f"{indent}{expr}")
    else:
      em.lines.append(f"{indent}{outs[0]} = {expr}")
    dead = _emit_del(em, names, dying, indent, in_place)
    if scratch is not None:
      scratch.held[outs[0]] = slot if slot is not None else scratch.held.get(in_place)
      scratch.release(dead)
  seen = [v for v in list(jaxpr.outvars) + list(jaxpr.constvars)
          + [v for v in jaxpr.invars if v not in donated] if type(v) is core.Var]
  em.fresh = [type(v) is core.Var and v in buffers.owners and jaxpr.outvars.count(v) == 1
              and not any(u in buffers.group[v] for u in seen if u is not v)
              for v in jaxpr.outvars]
  return [read(v) for v in jaxpr.outvars]


def _emit_del(em, names, dying, indent, in_place=None):
  dead = sorted({names[v] for v in dying} - {in_place})
  if dead:
    em.lines.append(f"{indent}del {', '.join(dead)}")
  return dead


class _Scratch:
  """The scratch buffers of one block function: parameters ``t0, t1, ...`` (a block's
  length, each of one dtype), which its intermediates are written into. A buffer is
  taken again once the value in it dies, so a block allocates nothing, and its few
  buffers stay in the cache from block to block (``blocks.run`` passes each thread's)."""

  def __init__(self):
    self.dtypes = []   # buffer index -> dtype
    self.free = {}     # dtype -> indices of the buffers holding no live value
    self.held = {}     # name of a live value -> the buffer it is in (None: not scratch)

  def take(self, dtype) -> int:
    free = self.free.setdefault(dtype, [])
    if not free:
      free.append(len(self.dtypes))
      self.dtypes.append(dtype)
    return free.pop()

  def release(self, names):
    for name in names:
      slot = self.held.pop(name, None)
      if slot is not None:
        self.free[self.dtypes[slot]].append(slot)


def _blockable(eqn) -> bool:
  """Whether ``eqn`` is one elementwise ufunc call (a direct template or a small power)
  on operands a region can slice."""
  direct = _template(eqn) is not None or _small_power(eqn)
  return direct and blocks.blockable_shapes(eqn)


def _small_power(eqn) -> bool:
  return eqn.primitive is ew.integer_pow_p and 1 <= eqn.params["y"] <= 4


def _emit_region(em, region, names, indent):
  """Emit ``region`` as a function of one block, and the line that runs it over all blocks.
  The block's body is ``emit_jaxpr`` of the region's equations on slices of its array
  operands; a direct ufunc writes each output's block in place (other outputs are
  copied)."""
  if not region.outvars:   # nothing reads it (and ufuncs have no effects)
    return
  arrays = [v for v in region.invars if v.aval.shape]
  scalars = [v for v in region.invars if not v.aval.shape]
  body = core.Jaxpr([], arrays + scalars, region.outvars, region.eqns)
  params = [f"x{i}" for i in range(len(arrays))] + [f"y{i}" for i in range(len(scalars))]
  out_params = [f"o{i}" for i in range(len(region.outvars))]
  outer_lines, em.lines = em.lines, [f"  x{i} = x{i}[s]" for i in range(len(arrays))]
  direct = {v for e in region.eqns if _allocates(e) for v in e.outvars}
  targets = {v: f"{o}[s]" for v, o in zip(region.outvars, out_params) if v in direct}
  scratch = _Scratch()
  outs = emit_jaxpr(em, body, params, "  ", blocked=False, out_targets=targets,
                    scratch=scratch)
  block_lines, em.lines = em.lines, outer_lines
  fn = f"_block{next(em.counter)}"
  tmp_params = [f"t{j}" for j in range(len(scratch.dtypes))]
  em.functions.append("\n".join(
      [f"def {fn}({', '.join(['s'] + params + out_params + tmp_params)}):", *block_lines,
       *(f"  {o}[s] = {out}" for v, o, out in zip(region.outvars, out_params, outs)
         if v not in targets)]))
  layout = em.constant(blocks.layout(region, scratch.dtypes), "_layout")
  results = [f"v{next(em.counter)}" for _ in region.outvars]
  for v, n in zip(region.outvars, results):
    names[v] = n
  tup = lambda vs: f"({''.join(names[v] + ', ' for v in vs)})"
  em.lines.append(f"{indent}{', '.join(results)}, = _run_blocks({fn}, {layout}, "
                  f"{tup(arrays)}, {tup(scalars)})")


class _BufferOwners:
  """Which variables may share memory. A direct ufunc call allocates a new buffer that its
  output alone owns; any other implementation may return a view of (or the very object
  of) an operand: reshape, transpose, slicing, broadcast_to, a same-dtype conversion. Such
  outputs join their operands' group, so a buffer is overwritten only when every variable
  that may see it is dead."""

  def __init__(self):
    self.owners = set()   # vars holding a buffer that this function allocated
    self.group = {}       # var -> the set of vars that may share its memory

  def allocate(self, outvars):
    for v in outvars:
      self.owners.add(v)
      self.group[v] = {v}

  def may_alias(self, outvars, invars):
    merged = set(outvars)
    for v in invars:
      merged |= self.group.get(v, {v})
    for v in merged:
      self.group[v] = merged

  def sole_owner_dies(self, v, keep, last_use, i) -> bool:
    """Whether ``v`` owns its buffer and every sharer of it dies by equation ``i``."""
    return v in self.owners and all(
        u not in keep and last_use.get(u, -1) <= i for u in self.group[v])


def _template(eqn):
  """The direct NumPy ufunc template computing ``eqn`` (its output is a new buffer), or
  None when another rule computes it; it flushes subnormal operands where XLA's result
  depends on it (``subnormals.template``)."""
  return subnormals.template(eqn, _ieee_template(eqn))


def _ieee_template(eqn):
  prim = eqn.primitive
  if prim in codegen_rules or _narrow_output(eqn):
    return None
  kinds, template = _TEMPLATES.get(prim, (None, None))
  if kinds is None:
    return template
  if not eqn.invars:
    return None
  kind = eqn.invars[0].aval.dtype.kind
  if kind == "f" and prim in _WITH_SIGNED_ZERO and any(
      isinstance(v, core.Literal) and zero_scalar_of_sign(v.val, prim is ew.min_p)
      for v in eqn.invars):   # decided here, not checked on every call
    return _WITH_SIGNED_ZERO[prim]
  return template if kind in kinds else None


def _allocates(eqn) -> bool:
  return _template(eqn) is not None


def _reusable(eqn, dying, buffers, names, keep, last_use, i):
  """A dying operand whose buffer the (elementwise) output can be written into: one that
  holds memory no live variable can see."""
  if eqn.primitive.multiple_results or len(eqn.outvars) != 1:
    return None
  out = eqn.outvars[0].aval
  for v in dying:
    if (v.aval.shape == out.shape and v.aval.dtype == out.dtype
        and buffers.sole_owner_dies(v, keep, last_use, i)):
      return names[v]
  return None


def _narrow_output(eqn):
  """The narrow dtype (int4, float8...) of ``eqn``'s one output, or None."""
  if len(eqn.outvars) == 1 and dtypes.is_narrow(eqn.outvars[0].aval.dtype):
    return eqn.outvars[0].aval.dtype
  return None


def _overwritable(eqn, dying, buffers, names, keep, last_use, i):
  """The name of ``eqn``'s first operand when an in-place rule may write into it: it dies
  here and no live value can see its buffer."""
  v = eqn.invars[0]
  if (v in dying and eqn.invars.count(v) == 1
      and buffers.sole_owner_dies(v, keep, last_use, i)):
    return names[v]
  return None


def _expression(em, eqn, args, indent, template, reusable=None):
  """The Python expression computing ``eqn`` (whose ``_template`` is ``template``), and
  the operand name it writes into (or None): a direct ufunc call may reuse a dying
  operand's buffer with ``out=``. A narrow output is cast back from the wider type
  ml_dtypes' loops may give (``-int4``: int8)."""
  narrow = _narrow_output(eqn)
  expr, in_place = _wide_expression(em, eqn, args, indent, template, reusable)
  if narrow is None:
    return expr, in_place
  return f"_np.asarray({expr}).astype({em.constant(narrow, '_d')}, copy=False)", None


def _wide_expression(em, eqn, args, indent, template, reusable):
  prim = eqn.primitive
  rule = codegen_rules.get(prim)
  if rule is not None:
    return rule(em, eqn, args, indent), None
  if reusable is not None and prim in inplace_rules and not core.has_user_impl(prim):
    fn = em.constant(functools.partial(inplace_rules[prim], **eqn.params), "_f")
    return f"{fn}({', '.join(args)})", reusable
  if _small_power(eqn):
    # small powers as products, the fastest NumPy spelling (dtype is preserved)
    y = eqn.params["y"]
    return ("_np.multiply(" * (y - 1) + args[0] + "".join(
        f", {args[0]})" for _ in range(y - 1)) if y > 1 else args[0]), None
  view = _VIEWS.get(prim)
  view = view(eqn) if view is not None else None
  if view is not None:
    return view.format(*args), None
  if template is not None:
    expr = template.format(*args)
    if reusable is not None:
      return f"{expr[:-1]}, out={reusable})", reusable
    return expr, None
  impl = impl_rules.get(prim)
  if impl is None or core.has_user_impl(prim):
    lowered = lowering.lowered_fun(prim)
    if lowered is not None:
      try:
        return _inline_lowered(em, eqn, lowered, args, indent), None
      except lowering.RuleNotTraceable:
        if impl is None:
          raise
  if impl is None:
    raise NotImplementedError(f"The NumPy backend has no implementation of '{prim.name}'.")
  fn = em.constant(functools.partial(impl, **eqn.params) if eqn.params else impl, "_f")
  return f"{fn}({', '.join(args)})", None


def _inline_lowered(em, eqn, lowered, args, indent) -> str:
  """A library's primitive lowered with ``lower_fun`` (``jax.interpreters.mlir``): its
  function, traced on the equation's types, is emitted in place, as XLA's lowering inlines
  it (its ``impl`` is what eager evaluation runs, and what a primitive without such a
  lowering calls here)."""
  closed = passes.optimize(lowered.trace([v.aval for v in eqn.invars], eqn.params))
  consts = [em.constant(np.asarray(c), "_c") for c in closed.consts]
  outs = emit_jaxpr(em, closed.jaxpr, consts + list(args), indent, blocked=False)
  if eqn.primitive.multiple_results:
    return "(" + "".join(f"{o}, " for o in outs) + ")"
  return outs[0]


def compile_jaxpr(closed: core.ClosedJaxpr, name: str = "fn", donated=()):
  """Compile ``closed`` into ``(python_function, source)``.

  The function takes NumPy values for the jaxpr's invars and returns a list of NumPy
  values whose dtypes are those of the jaxpr's outvars. It may overwrite the arrays passed
  for the invars at indices ``donated``, which must be C-contiguous buffers nothing else
  sees; its attribute ``fresh`` says per output whether it is such a buffer.
  """
  em = _Emitter()
  jaxpr = closed.jaxpr
  const_names = [em.constant(np.asarray(c), "_c") for c in closed.consts]
  arg_names = [f"a{i}" for i in range(len(jaxpr.invars))]
  fn_name = "".join(ch if ch.isalnum() else "_" for ch in name) or "fn"
  header = f"def {fn_name}({', '.join(arg_names)}):"
  outs = emit_jaxpr(em, jaxpr, const_names + arg_names, "  ",
                    donated=[jaxpr.invars[i] for i in donated])
  lines = [header] + [f"  {line}" for line in _QUIET] + em.lines + [
      f"  return [{', '.join(outs)}]"]
  source = "\n\n".join(em.functions + ["\n".join(lines)]) + "\n"
  code = compile(source, f"<jaxlite tier0: {name}>", "exec")
  exec(code, em.namespace)
  fn = em.namespace[fn_name]
  fn.fresh = em.fresh
  return fn, source


# a program's first lines: NumPy's floating-point warnings stay silent, as XLA is, whatever
# filters the caller set (see core.QUIET_FILTER)
_QUIET = ["try:",
          "  if _warnings.filters[0] is not _QUIET_FILTER:",
          "    _keep_quiet()",
          "except IndexError:",
          "  _keep_quiet()"]


# The one cache of compiled jaxprs: nested ``jit`` calls, control-flow bodies and the
# composed implementations all compile a jaxpr object once, optimized as jit optimizes it.
_compiled: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def compiled(closed: core.ClosedJaxpr, name: str = "body", donated=()):
  """The tier-0 executable of ``closed`` after the jit pass pipeline, compiled once per
  jaxpr object (and ``donated``: ``compile_jaxpr``'s)."""
  fns = _compiled.get(closed)
  if fns is None:
    fns = _compiled[closed] = {}
  fn = fns.get(donated)
  if fn is None:
    fn, _ = compile_jaxpr(passes.optimize(closed), name, donated)
    fns[donated] = fn
  return fn


def clear_cache():
  """Forget every compiled jaxpr."""
  _compiled.clear()
