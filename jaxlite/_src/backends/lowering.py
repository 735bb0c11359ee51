"""The table of lowering rules (primitive -> StableHLO), and JAX's way of adding to it.

``lowering_rules`` is the XLA tier's table (``backends/xla/stablehlo.py`` fills it with
jaxlite's own rules): each rule is ``rule(builder, eqn, *operands, **params)`` and
returns the lowered results. It lives here, outside ``backends/xla``, so that a library
registering a rule (``jax.interpreters.mlir.register_lowering``, at import) loads nothing
of XLA.

JAX's rules have another signature, ``rule(ctx, *operands, **params)``: ``ctx`` is a
``LoweringRuleContext`` (``avals_in``, ``avals_out``). ``register_lowering`` adapts such
a rule once, here, into jaxlite's. The rule a library can write for jaxlite is in
practice ``lower_fun(fun)``: ``fun`` is traced on the operands' types and its jaxpr emitted
in place of the equation (a rule that builds MLIR with JAX's ``ir``/``hlo`` bindings
cannot run: jaxlite writes StableHLO text with its own emitter). ``lower_fun`` is also
what the NumPy tier compiles for a library's primitive (``lowered_fun``).
"""
from __future__ import annotations

from typing import Callable

from jaxlite._src.core import core
from jaxlite._src.transforms import staging

# primitive -> rule(builder, eqn, *lowered operands, **params) -> list[V] | V
lowering_rules: dict = {}
# primitives whose rule was registered for one platform only (any other rule replaces it)
_platform_specific: set = set()


class LoweringRuleContext:
  """What a JAX-style lowering rule gets as ``ctx``: the types of the equation's operands
  and results (``avals_in``, ``avals_out``) and, for jaxlite, the StableHLO ``builder``
  and the equation itself."""
  __slots__ = ("builder", "eqn", "avals_in", "avals_out")

  def __init__(self, builder, eqn, avals_in=None, avals_out=None):
    self.builder = builder
    self.eqn = eqn
    self.avals_in = ([v.aval for v in eqn.invars] if avals_in is None else list(avals_in))
    self.avals_out = ([v.aval for v in eqn.outvars] if avals_out is None
                      else list(avals_out))

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


class LoweredFun:
  """``lower_fun(fun, multiple_results)``: a lowering rule that traces
  ``fun(*operands, **params)`` on the equation's operand types and emits its jaxpr
  inline. ``multiple_results=False``: ``fun`` returns one value rather than a sequence."""
  __slots__ = ("fun", "multiple_results")

  def __init__(self, fun: Callable, multiple_results: bool = True):
    self.fun = fun
    self.multiple_results = multiple_results

  def trace(self, avals_in, params) -> core.ClosedJaxpr:
    """``fun`` on ``avals_in`` with ``params``, as a closed jaxpr of a list of outputs."""
    fun, multiple = self.fun, self.multiple_results

    def flat(*xs):
      out = fun(*xs, **params)
      return list(out) if multiple else [out]
    return staging.trace_to_jaxpr(flat, list(avals_in))

  def __call__(self, ctx: LoweringRuleContext, *args, **params):
    return ctx.builder.inline(self.trace(ctx.avals_in, params), list(args))

  def __repr__(self):
    return f"lower_fun({getattr(self.fun, '__name__', self.fun)!r})"


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


def lowered_fun(prim) -> LoweredFun | None:
  """The ``lower_fun`` registered as ``prim``'s lowering, if that is what it is."""
  rule = lowering_rules.get(prim)
  if type(rule) is _JaxRule and type(rule.rule) is LoweredFun:
    return rule.rule
  return None


def impl_lowering(prim) -> Callable | None:
  """A lowering of a library's primitive that has an ``impl`` but no lowering rule:
  its impl traced as ``lower_fun`` would (what JAX requires a rule for)."""
  if not core.has_user_impl(prim):
    return None
  return _JaxRule(LoweredFun(prim.impl, prim.multiple_results))
