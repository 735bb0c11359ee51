"""The table of lowering rules (primitive -> StableHLO), and JAX's way of adding to it.

``lowering_rules`` is the XLA tier's table (``backends/xla/stablehlo.py`` fills it with
jaxlite's own rules): each rule is ``rule(builder, eqn, *operands, **params)`` and
returns the lowered results. It lives here, outside ``backends/xla``, so that a library
registering a rule (``jax.interpreters.mlir.register_lowering``, at import) loads nothing
of XLA.

JAX's rules have another signature, ``rule(ctx, *operands, **params)``: ``ctx`` is a
``LoweringRuleContext`` (``avals_in``, ``avals_out``). ``register_lowering`` adapts such
a rule once, here, into jaxlite's. The rules a library can write for jaxlite are made of
``lower_fun(fun)`` (``fun`` is traced on the operands' types and its jaxpr emitted in
place of the equation) and ``emit_python_callback`` (a host function called when the
program runs); a rule that builds MLIR with JAX's ``ir``/``hlo`` bindings cannot run:
jaxlite writes StableHLO text with its own emitter. The NumPy tier compiles such a rule
too, traced into a jaxpr (``lowered_fun``, ``RuleFun``).
"""
from __future__ import annotations

from typing import Callable

from jaxlite._src.core import core
from jaxlite._src.lax import callbacks
from jaxlite._src.transforms import staging

# primitive -> rule(builder, eqn, *lowered operands, **params) -> list[V] | V
lowering_rules: dict = {}
# primitives whose rule was registered for one platform only (any other rule replaces it)
_platform_specific: set = set()


class ModuleContext:
  """What a JAX-style rule reads as ``ctx.module_context``: the platforms the program is
  lowered for, and the objects it must keep alive (``add_keepalive``)."""
  __slots__ = ("platforms", "keepalives")

  def __init__(self, platforms=("cpu",)):
    self.platforms = tuple(platforms)
    self.keepalives = []

  def add_keepalive(self, keepalive):
    if keepalive is not None:
      self.keepalives.append(keepalive)


class LoweringRuleContext:
  """What a JAX-style lowering rule gets as ``ctx``: the types of the equation's operands
  and results (``avals_in``, ``avals_out``), the ``module_context`` and, for jaxlite, the
  ``builder`` that emits what the rule makes (StableHLO, or binds for tier 0: see
  ``RuleFun``) and the equation itself (None where the rule is traced)."""
  __slots__ = ("builder", "eqn", "avals_in", "avals_out", "module_context")

  def __init__(self, builder, eqn, avals_in=None, avals_out=None, module_context=None):
    self.builder = builder
    self.eqn = eqn
    self.avals_in = ([v.aval for v in eqn.invars] if avals_in is None else list(avals_in))
    self.avals_out = ([v.aval for v in eqn.outvars] if avals_out is None
                      else list(avals_out))
    self.module_context = ModuleContext() if module_context is None else module_context

  def replace(self, **changes) -> LoweringRuleContext:
    fields = {name: getattr(self, name) for name in self.__slots__}
    fields.update(changes)
    return LoweringRuleContext(**fields)

  # JAX's ordered effects thread tokens through rules; jaxlite's lowering orders them itself
  tokens_in = None

  def set_tokens_out(self, tokens):
    pass

  def __repr__(self):
    return (f"LoweringRuleContext(avals_in={self.avals_in}, "
            f"avals_out={self.avals_out})")


class _JaxRule:
  """A rule written for JAX (``rule(ctx, *operands, **params)``) as a rule of jaxlite's
  table: the one place the two conventions meet."""
  __slots__ = ("rule",)

  def __init__(self, rule):
    self.rule = rule

  def __call__(self, builder, eqn, *args, **params):
    outs = self.rule(LoweringRuleContext(builder, eqn), *args, **params)
    if type(outs) is not list and type(outs) is not tuple:
      return outs   # one lowered value
    # JAX allows each result to be a sequence of values (one per IR value of its type);
    # every jaxlite type is a single value
    return [o[0] if type(o) in (list, tuple) and len(o) == 1 else o for o in outs]


# the traces of one lower_fun kept for the tiers to share (oldest dropped first)
_TRACES_KEPT = 256


class LoweredFun:
  """``lower_fun(fun, multiple_results)``: a lowering rule that traces
  ``fun(*operands, **params)`` on the equation's operand types and emits its jaxpr
  inline. ``multiple_results=False``: ``fun`` returns one value rather than a sequence."""
  __slots__ = ("fun", "multiple_results", "_traced")

  def __init__(self, fun: Callable, multiple_results: bool = True):
    self.fun = fun
    self.multiple_results = multiple_results
    self._traced = {}   # (avals, param ids) -> (params, closed jaxpr), oldest first

  def trace(self, avals_in, params) -> core.ClosedJaxpr:
    """``fun`` on ``avals_in`` with ``params``, as a closed jaxpr of a list of outputs.

    An equation is traced once for both tiers (tier 0 and XLA lower the same equations),
    as JAX lowers a program once: the trace is kept for these very param values."""
    key = (tuple(avals_in), tuple((k, id(v)) for k, v in sorted(params.items())))
    hit = self._traced.get(key)
    if hit is not None and all(hit[0][k] is v for k, v in params.items()):
      return hit[1]
    fun, multiple = self.fun, self.multiple_results

    def flat(*xs):
      out = fun(*xs, **params)
      return list(out) if multiple else [out]
    closed = staging.trace_to_jaxpr(flat, list(avals_in))
    if len(self._traced) >= _TRACES_KEPT:
      self._traced.pop(next(iter(self._traced)))
    self._traced[key] = (dict(params), closed)   # the values kept: their ids stay theirs
    return closed

  def __call__(self, ctx: LoweringRuleContext, *args, **params):
    return ctx.builder.inline(self.trace(ctx.avals_in, params), list(args))

  def __repr__(self):
    return f"lower_fun({getattr(self.fun, '__name__', self.fun)!r})"


class _Binder:
  """The builder of a rule traced into a jaxpr (``RuleFun``): what the rule emits is bound
  in the current trace."""

  @staticmethod
  def inline(closed, args) -> list:
    if isinstance(closed, core.Jaxpr):
      return core.eval_jaxpr(closed, [], *args)
    return core.eval_jaxpr(closed.jaxpr, closed.consts, *args)


class RuleNotTraceable(Exception):
  """A JAX-style rule that builds MLIR itself, which jaxlite cannot run (``RuleFun``)."""


class RuleFun:
  """A lowering rule written for JAX, ``rule(ctx, *operands, **params)``, as a function of
  the operands that tier 0 compiles: traced with a builder that binds what the rule
  emits, so a rule made of ``lower_fun`` and ``emit_python_callback`` runs on tier 0 as it
  runs on XLA. A rule building MLIR with JAX's ``ir``/``hlo`` bindings raises
  ``RuleNotTraceable`` (tier 0 then runs the primitive's ``impl``)."""
  __slots__ = ("prim", "rule")

  def __init__(self, prim, rule):
    self.prim, self.rule = prim, rule

  def trace(self, avals_in, params) -> core.ClosedJaxpr:
    prim, rule = self.prim, self.rule
    avals_out = core.abstract_eval(prim, list(avals_in), params)

    def flat(*xs):
      ctx = LoweringRuleContext(_Binder, None, avals_in, avals_out)
      out = rule(ctx, *xs, **params)
      if not prim.multiple_results:
        out = [out]
      return [o[0] if type(o) in (list, tuple) and len(o) == 1 else o for o in out]
    try:
      return staging.trace_to_jaxpr(flat, list(avals_in))
    except Exception as e:
      raise RuleNotTraceable(f"the lowering rule of '{prim.name}' does not trace: "
                             f"{type(e).__name__}: {e}") from e


def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals, *,
                         has_side_effect: bool, returns_token: bool = True,
                         partitioned: bool = False, sharding=None):
  """Emit a call of the host function ``callback`` (``jax.interpreters.mlir``'s, from a
  lowering rule): ``callback(*operand values)`` returns the results, NumPy arrays of
  ``result_avals``. It is emitted as jaxlite's host callback primitive (``io_callback``
  with ``has_side_effect``, else ``pure_callback``), which both tiers run.

  Returns
  -------
  ``(results, token, keepalive)`` as JAX's: the token passed through, no keepalive.
  """
  result_avals = tuple(result_avals)
  if has_side_effect:
    prim, params = callbacks.io_callback_p, dict(ordered=token is not None)
  else:
    prim, params = callbacks.pure_callback_p, dict(vmap_method=None)
  params.update(callback=callback, result_avals=result_avals, sharding=None)
  closed = staging.trace_to_jaxpr(lambda *xs: prim.bind(*xs, **params),
                                  list(operand_avals))
  return ctx.builder.inline(closed, list(operands)), token, None


def lower_fun(fun: Callable, multiple_results: bool = True) -> LoweredFun:
  """A lowering rule written as a jax function of the operands (``jax.interpreters.mlir.
  lower_fun``): register it with ``register_lowering(prim, lower_fun(f))``."""
  return LoweredFun(fun, multiple_results)


def register_lowering(prim: core.Primitive, rule: Callable, platform: str | None = None):
  """Make ``rule`` (JAX's signature: ``rule(ctx, *operands, **params)``) the lowering of
  ``prim`` (``jax.interpreters.mlir.register_lowering``).

  jaxlite lowers one program for every platform: a rule for one ``platform`` serves them
  all until a rule for every platform (``platform=None``) replaces it.
  """
  if platform is not None and prim in lowering_rules and prim not in _platform_specific:
    return rule
  lowering_rules[prim] = _JaxRule(rule)
  (_platform_specific.add if platform is not None else _platform_specific.discard)(prim)
  return rule


def as_rule(rule: Callable) -> Callable:
  """A rule written for JAX as a rule of ``lowering_rules``."""
  return _JaxRule(rule)


def lowered_fun(prim) -> LoweredFun | RuleFun | None:
  """The JAX-style rule registered as ``prim``'s lowering as a function tier 0 traces:
  the ``lower_fun`` itself, or any other rule as a ``RuleFun``; None without one."""
  rule = lowering_rules.get(prim)
  if type(rule) is not _JaxRule:
    return None
  return rule.rule if type(rule.rule) is LoweredFun else RuleFun(prim, rule.rule)


def impl_lowering(prim) -> Callable | None:
  """A lowering of a library's primitive that has an ``impl`` but no lowering rule:
  its impl traced as ``lower_fun`` would (what JAX requires a rule for)."""
  if not core.has_user_impl(prim):
    return None
  return _JaxRule(LoweredFun(prim.impl, prim.multiple_results))
