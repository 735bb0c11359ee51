"""Mutable array references (``jax.Ref``, its type ``AbstractRef``) and the scopes that
turn their writes into values while a function is traced.

A ``Ref`` holds its current value. Eagerly, a write replaces the Array it holds. While a
staged region is traced (a ``jit``, a loop's body, a branch), the region's ``RefScope``
holds the value of every ref the region used: a ref from outside enters the scope on its
first use (as a new input of the region, or as the enclosing scope's value), and each
write records a new traced value there. At the region's boundary the refs' values on
entry become extra inputs and their final values extra outputs, written back into the
refs after the call. Jaxprs so stay pure (they are JAX's ref effects, discharged), and
every pass, tier and transformation runs them unchanged.

The operations (``get``, ``swap``, ``addupdate``, ``new_ref``, ...) are in
``lax/state.py``, which fills ``ref_ops`` for the methods of ``Ref``.
"""
from __future__ import annotations

import functools
import threading

from jaxlite._src.base import tree
from jaxlite._src.core import core


class AbstractRef(core.AbstractValue):
  """The type of a mutable array reference (``jax._src.state.types.AbstractRef``): the
  abstract value of what it holds (``inner_aval``), printed ``Ref{float32[3]}``."""
  __slots__ = ("inner_aval", "memory_space", "kind")

  def __init__(self, inner_aval, memory_space=None, kind=None):
    self.inner_aval = inner_aval
    self.memory_space = memory_space
    self.kind = kind

  shape = property(lambda self: self.inner_aval.shape)
  dtype = property(lambda self: self.inner_aval.dtype)
  weak_type = property(lambda self: self.inner_aval.weak_type)
  ndim = property(lambda self: len(self.inner_aval.shape))
  size = property(lambda self: self.inner_aval.size)

  def to_tangent_aval(self):
    return AbstractRef(self.inner_aval.to_tangent_aval(), self.memory_space, self.kind)

  def update(self, inner_aval=None, memory_space=None, kind=None):
    return AbstractRef(self.inner_aval if inner_aval is None else inner_aval,
                       self.memory_space if memory_space is None else memory_space,
                       self.kind if kind is None else kind)

  def str_short(self, short_dtypes=False, mesh_axis_types=False):
    inner = self.inner_aval.str_short(short_dtypes)
    if self.memory_space is not None:
      return f"Ref<{self.memory_space}>{{{inner}}}"
    return f"Ref{{{inner}}}"

  __repr__ = __str__ = str_short

  def __eq__(self, other):
    return (type(other) is AbstractRef and self.inner_aval == other.inner_aval
            and self.memory_space == other.memory_space)

  def __hash__(self):
    return hash((AbstractRef, self.inner_aval, self.memory_space))


# name -> the operation ``lax/state.py`` registers: "get", "swap", "addupdate", "repr"
ref_ops: dict = {}


class Ref:
  """A mutable array reference (``jax.Ref``), made by ``jax.new_ref``.

  ``ref[idx]`` reads (an Array), ``ref[idx] = x`` writes in place, ``ref.addupdate(x,
  idx)`` adds in place. Its type, ``jax.typeof(ref)``, is an ``AbstractRef``.
  """
  __slots__ = ("_aval", "_value", "_trace", "__weakref__")

  def __init__(self, aval, value, trace=None):
    if not isinstance(aval, AbstractRef):
      raise TypeError(f"Ref takes an AbstractRef, not {aval!r}; make refs with "
                      "jax.new_ref(value).")
    self._aval = aval
    self._value = value   # the value outside every scope (None: none yet)
    # the transformation's trace current when it was made (None: none), whose tracers
    # it may hold (so a copy or pickle of an eager ref holds no trace)
    self._trace = None if trace is core.eval_trace else trace

  aval = property(lambda self: self._aval)
  shape = property(lambda self: self._aval.shape)
  dtype = property(lambda self: self._aval.dtype)
  ndim = property(lambda self: self._aval.ndim)
  size = property(lambda self: self._aval.size)
  committed = _committed = property(lambda self: True)
  sharding = property(lambda self: current_value(self).sharding)

  def __getitem__(self, idx):
    return ref_ops["get"](self, idx)

  def __setitem__(self, idx, value):
    ref_ops["swap"](self, idx, value)

  def addupdate(self, x, idx=()):
    """Add ``x`` to ``self[idx]`` in place."""
    ref_ops["addupdate"](self, idx, x)

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]

  def __repr__(self):
    return ref_ops["repr"](self)

  @property
  def at(self):
    raise NotImplementedError(
        "Ref has no .at property (neither has JAX's); read it with ref[...] and use "
        ".at on the Array, or write a slice with ref[idx] = value.")

  def block_until_ready(self):
    value = self._value
    if value is not None and hasattr(value, "block_until_ready"):
      value.block_until_ready()
    return self


# -- scopes

class _Scopes(threading.local):
  """The stack of the regions being traced on this thread that hold ref values."""

  def __init__(self):
    self.stack: list = []


_scopes = _Scopes()


class RefScope:
  """The values of the refs a staged region uses while it is traced.

  ``enter(ref)`` gives the value inside the region of a ref from outside on its first
  use (a new input of the region's trace); None reads the enclosing scope's value (it
  becomes a closed-over constant, as any outer value does). ``entered`` lists those refs
  in order of first use, ``written`` the refs the region wrote.
  """
  __slots__ = ("trace", "enter", "values", "entered", "written")

  def __init__(self, trace, enter=None):
    self.trace = trace
    self.enter = enter
    self.values: dict = {}
    self.entered: list = []
    self.written: set = set()

  def bind(self, refs, values):
    """Make ``values`` the values of the outside ``refs`` inside this region."""
    for r, v in zip(refs, values):
      self.values[r] = v
      self.entered.append(r)

  def final(self, refs):
    """The values ``refs`` hold at the end of the region."""
    return [self.values[r] for r in refs]

  def __enter__(self):
    _scopes.stack.append(self)
    return self

  def __exit__(self, *exc):
    popped = _scopes.stack.pop()
    assert popped is self, "ref scopes closed out of order"

  def close(self):
    """Drop the values (tracers of the region's trace) once the region is built."""
    self.values = {}


def in_scope() -> bool:
  """Whether a staged region that holds ref values is being traced."""
  return bool(_scopes.stack)


def current_value(ref):
  """The value ``ref`` holds where the program now is."""
  stack = _scopes.stack
  return _value_at(stack, len(stack) - 1, ref)


_MISSING = object()


def _value_at(stack, i, ref):
  if i < 0:
    value = ref._value
    if value is None:
      raise ValueError(
          f"a mutable array reference of type {ref._aval} made inside a traced function "
          "was used after that function was traced. Refs made under jit, in a loop body "
          "or in a branch live only there: freeze it (jax.freeze(ref)) and return the "
          "value instead.")
    return value
  scope = stack[i]
  value = scope.values.get(ref, _MISSING)
  if value is _MISSING:
    value = _value_at(stack, i - 1, ref) if scope.enter is None else scope.enter(ref)
    scope.values[ref] = value
    scope.entered.append(ref)
  return value


# trace type -> rule(trace, ref, value) giving the value written from inside that trace
# as a value of its parent, or raising where the trace cannot write to an outside ref
# (filled by transforms: ad.py for JVP traces, batching.py for vmap)
write_rules: dict = {}


def store(ref, value):
  """Make ``value`` what ``ref`` holds from here on (the region's value while traced)."""
  stack = _scopes.stack
  value = _lower_to_scope(ref, value, stack[-1].trace if stack else core.eval_trace)
  if not stack:
    ref._value = value
    return
  scope = stack[-1]
  if ref not in scope.values:
    current_value(ref)   # enters the scope: a partial write needs the value on entry
  scope.values[ref] = value
  scope.written.add(ref)


def _lower_to_scope(ref, value, base):
  # A write from inside a transformation (grad, vmap) to a ref made outside it must not
  # keep that transformation's tracers: each trace's rule lowers the value or refuses.
  trace = core._context.trace
  while trace is not base and trace is not ref._trace:
    rule = write_rules.get(type(trace))
    if rule is None:   # (JAX's class where it has no rule either: custom_jvp under jit)
      raise NotImplementedError(
          f"a mutable array reference of type {ref._aval} made outside "
          f"{getattr(trace, 'description', 'a trace')} was written inside it, which "
          "jaxlite does not support there (custom_jvp and shard_map bodies): pass the "
          "value in and return the new value, or write the ref outside.")
    value = rule(trace, ref, value)
    trace = trace.parent
  return value


def create(aval, value):
  """A new ref of type ``aval`` holding ``value`` where the program now is."""
  stack = _scopes.stack
  trace = core._context.trace
  if not stack:
    return Ref(aval, value, trace)
  ref = Ref(aval, None, trace)
  stack[-1].values[ref] = value
  return ref


def refs_in(leaves):
  """The positions of the refs among ``leaves``."""
  return [i for i, x in enumerate(leaves) if type(x) is Ref]


# -- staged calls

class RefPlan:
  """How the refs of one traced function enter and leave its jaxpr.

  The jaxpr takes, after the function's own inputs, the value of each outside ref it
  used (``closed``; an argument ref's value takes that argument's place), and gives,
  after the function's outputs, the final value of each ref it wrote: the argument refs
  at ``written_args`` (positions among the argument leaves), then the ``closed`` refs
  at ``written_closed``.
  """
  __slots__ = ("arg_positions", "closed", "written_args", "written_closed", "describe")

  def __init__(self, arg_positions, describe):
    self.arg_positions = arg_positions
    self.describe = describe   # () -> "f at file.py:3 traced for jit", for errors
    self.closed: list = []
    self.written_args: list = []
    self.written_closed: list = []

  @property
  def used(self) -> bool:
    return bool(self.arg_positions or self.closed)

  @property
  def n_written(self) -> int:
    return len(self.written_args) + len(self.written_closed)

  @property
  def cacheable(self) -> bool:
    """False when it closes over a ref made inside a trace (valid only there)."""
    return all(r._value is not None for r in self.closed)

  def inputs(self, leaves, names):
    """The jaxpr's inputs for a call with argument ``leaves``: each ref's value now."""
    leaves = list(leaves)
    seen = {}
    for i in self.arg_positions:
      ref = leaves[i]
      if ref in seen:
        raise ValueError(
            "only one reference to a mutable array may be passed as an argument to a "
            f"function, but when tracing {self.describe().replace(' traced ', ' ')} the "
            f"mutable array reference of type {ref._aval} appeared at both "
            f"{names()[seen[ref]]} and {names()[i]}.")
      seen[ref] = i
      leaves[i] = current_value(ref)
    return leaves + [current_value(r) for r in self.closed]

  def write_back(self, leaves, values):
    """Store the written refs' final ``values`` (the jaxpr's extra outputs)."""
    values = iter(values)
    for i in self.written_args:
      store(leaves[self.arg_positions[i]], next(values))
    for k in self.written_closed:
      store(self.closed[k], next(values))


def with_refs(flat_fun, arg_positions, describe):
  """``flat_fun`` (flat leaves in and out) as the function a jaxpr is traced from when
  the argument leaves at ``arg_positions`` are refs; returns it and its ``RefPlan``,
  complete once it has been traced. ``describe()`` names the function for errors."""
  plan = RefPlan(arg_positions, describe)

  def traced(*xs):
    trace = core._context.trace
    scope = RefScope(trace, lambda r: trace.new_arg(r._aval.inner_aval))
    xs = list(xs)
    with scope:
      refs = []
      for i in arg_positions:
        xs[i] = ref = create(AbstractRef(core.get_aval(xs[i])), xs[i])
        refs.append(ref)
      outs = flat_fun(*xs)
      for out in outs:
        if isinstance(out, Ref):
          origin = ("\n\nThe returned mutable array was passed in as an argument."
                    if out in refs else "")
          raise ValueError(
              f"function {describe()} returned a mutable array reference of type "
              f"{out._aval}, but mutable array references cannot be returned.{origin}")
    plan.closed = list(scope.entered)
    plan.written_args = [k for k, r in enumerate(refs) if r in scope.written]
    plan.written_closed = [k for k, r in enumerate(plan.closed) if r in scope.written]
    extra = scope.final([refs[k] for k in plan.written_args]) + scope.final(
        [plan.closed[k] for k in plan.written_closed])
    scope.close()
    return list(outs) + extra
  return traced, plan


# -- control flow

class UsesRefs(Exception):
  """Raised out of a traced loop body or branch that wrote to outside ``refs``, so that
  the construct traces it again carrying their values (``probing``, ``run_with``)."""

  def __init__(self, refs):
    super().__init__("a traced body wrote to mutable array references")
    self.refs = refs


def probing(fun):
  """``fun`` as a loop body or branch is first traced: if it writes to refs from
  outside, its trace ends with ``UsesRefs`` naming them. Refs it only reads stay
  closed-over values (they cannot change while it runs), so a trace that read any is
  marked ``reads_refs`` (such a trace must not be reused once they change);
  ``probed`` is ``fun``, which trace caches key on."""
  @functools.wraps(fun)   # (messages name the user's function and its parameters)
  def probe(*args):
    scope = RefScope(core._context.trace)
    with scope:
      out = fun(*args)
    probe.reads_refs = probe.reads_refs or bool(scope.entered)
    written = [r for r in scope.entered if r in scope.written]
    scope.close()
    if written:
      raise UsesRefs(written)
    return out
  probe.probed, probe.reads_refs = fun, False
  return probe


def run_with(refs, values, fun, *args):
  """``fun(*args)`` with ``refs`` holding ``values`` (a body's carried values); returns
  its output and the refs' final values. Writes to other outside refs pass on to the
  enclosing scope (where a probe finds them)."""
  scope = RefScope(core._context.trace)
  scope.bind(refs, values)
  with scope:
    out = fun(*args)
  final = scope.final(refs)
  bound = set(refs)
  for r in scope.entered:
    if r in scope.written and r not in bound:
      store(r, scope.values[r])
  scope.close()
  return out, final


def values_of(refs):
  """The refs' values where the program now is (a construct's initial carry)."""
  return [current_value(r) for r in refs]


def store_all(refs, values):
  """Store each of ``values`` into its ref (a construct's final carry)."""
  for r, v in zip(refs, values):
    store(r, v)


def with_local_refs(flat_fun, positions):
  """``flat_fun`` taking at ``positions`` the values of ref arguments (a transformation's
  view of them: per-example values under vmap): it runs with fresh refs holding them,
  and returns, after its outputs, their final values for the caller to store."""
  def run(*xs):
    xs = list(xs)
    refs = []
    for i in positions:
      xs[i] = ref = create(AbstractRef(core.get_aval(xs[i])), xs[i])
      refs.append(ref)
    outs = flat_fun(*xs)
    return list(outs) + [current_value(r) for r in refs]
  return run


def without_refs(args):
  """``args`` (a tuple) with the refs among its leaves taken out, for a construct whose
  function takes them as closed-over refs (whose values it carries): ``(the other leaves
  as a tuple, rebuild)``, where ``rebuild(leaves)`` gives ``args`` back with the refs in
  place; None when ``args`` holds no ref."""
  leaves, treedef = tree.tree_flatten(args)
  positions = refs_in(leaves)
  if not positions:
    return None
  refs = {i: leaves[i] for i in positions}
  rest = tuple(x for i, x in enumerate(leaves) if i not in refs)

  def rebuild(values):
    it = iter(values)
    return tree.tree_unflatten(treedef, [refs[i] if i in refs else next(it)
                                         for i in range(len(leaves))])
  return rest, rebuild


def check_no_refs(leaves, what):
  """A loop's carry or scanned values cannot be refs (JAX's error class)."""
  for x in leaves:
    if type(x) is Ref:
      raise ValueError(
          f"{what} cannot hold a mutable array reference (got one of type {x._aval}): "
          "mutable array references cannot be returned from a loop's function or sliced "
          "by it. Close over the ref in the function instead; the loop carries what it "
          "holds.")
