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

A value of a library's mutable high-level type (``jax.experimental.hijax``'s
``MutableHiType``: flax.nnx's hijax Variables) is handled as a ref whose value is its
state, a ``HiState``: its quasi-dynamic data (the type of what it holds now) and the
arrays it holds. Such an object holds its state itself (its primitives' lowerings read
and write it there), so a scope it enters puts that scope's state into it and, when the
scope ends, keeps its final state and puts back the state from outside.
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


# -- mutable high-level values

# type -> the rules of a library's mutable high-level type (``hijax.register_hitype``
# fills it): ``mutable(x)``, ``read(x)`` (its ``HiState``), ``write(x, state)`` and
# ``describe(x)`` (its type, for messages)
hi_rules: dict = {}


class HiState:
  """The state of a mutable high-level value: its quasi-dynamic data ``qdd`` and the
  arrays ``vals`` its type lowers it to (a pytree of them, ``qdd`` its static part)."""
  __slots__ = ("qdd", "vals")

  def __init__(self, qdd, vals):
    self.qdd = qdd
    self.vals = list(vals)

  def __repr__(self):
    return f"HiState({self.qdd!r}, {self.vals!r})"


tree.register_pytree_node(HiState, lambda st: (tuple(st.vals), st.qdd),
                          lambda qdd, vals: HiState(qdd, vals))


def is_hi_mutable(x) -> bool:
  """Whether ``x`` is a value of a mutable high-level type (with quasi-dynamic data)."""
  rules = hi_rules.get(type(x))
  return rules is not None and rules.mutable(x)


def is_stateful(x) -> bool:
  """Whether ``x`` holds state that traced regions carry in and out: a ref, or a value of
  a mutable high-level type."""
  return type(x) is Ref or is_hi_mutable(x)


def is_hi(x) -> bool:
  """Whether ``x`` is a value of a library's high-level type, mutable or not."""
  return type(x) in hi_rules


def _hi_read(x) -> HiState:
  return hi_rules[type(x)].read(x)


def _hi_arrays(x) -> list:
  # the arrays a high-level value enters a staged call as: its state's, or the lowering
  # of an immutable one
  rules = hi_rules[type(x)]
  return rules.read(x).vals if rules.mutable(x) else rules.lower(x)


def _hi_write(x, state):
  hi_rules[type(x)].write(x, state)


def _describe(x) -> str:
  if type(x) is Ref:
    return str(x._aval)
  return hi_rules[type(x)].describe(x)


def flat_values(values) -> list:
  """``values`` of refs and high-level states as the flat list of arrays a jaxpr takes."""
  out = []
  for v in values:
    if type(v) is HiState:
      out.extend(v.vals)
    else:
      out.append(v)
  return out


class _Raised:
  """An immutable high-level value a staged function returned, in its output tree: the
  arrays its type lowers it to, raised back (``raise_val``) when the tree is rebuilt."""
  __slots__ = ("ty", "vals")

  def __init__(self, ty, vals):
    self.ty, self.vals = ty, vals


tree.register_pytree_node(_Raised, lambda r: (tuple(r.vals), r.ty),
                          lambda ty, vals: ty.raise_val(*vals))


def lower_outputs(outs):
  """``outs`` with each immutable high-level value replaced by its arrays
  (``lower_val``), and per output its type (None for the others)."""
  flat, types = [], []
  for x in outs:
    if is_hi(x) and not is_stateful(x):
      ty = core.get_aval(x)
      flat.extend(ty.lower_val(x))
      types.append(ty)
    else:
      flat.append(x)
      types.append(None)
  return flat, types


def raised_tree(treedef, types):
  """``treedef`` of a function's outputs, rebuilding the high-level values
  ``lower_outputs`` lowered (``types``: its per-output types)."""
  types = types[:treedef.num_leaves]
  if all(t is None for t in types):
    return treedef
  leaves = [0 if t is None else _Raised(t, [0] * len(t.lo_ty())) for t in types]
  return tree.tree_structure(tree.tree_unflatten(treedef, leaves))


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
  __slots__ = ("trace", "enter", "values", "entered", "written", "saved")

  def __init__(self, trace, enter=None):
    self.trace = trace
    self.enter = enter   # aval -> a new input of the region's trace
    self.values: dict = {}
    self.entered: list = []
    self.written: set = set()
    # a high-level value that entered -> its state outside, put back when the scope ends
    # (its value meanwhile is _LIVE: the object itself holds it)
    self.saved: dict = {}

  def bind(self, refs, values):
    """Make ``values`` the values of the outside ``refs`` inside this region."""
    for r, v in zip(refs, values):
      if type(r) is Ref:
        self.values[r] = v
      else:
        self._enter_hi(r, _hi_read(r), v)
      self.entered.append(r)

  def _enter_hi(self, x, outside, state):
    self.saved[x] = outside
    if state is not outside:
      _hi_write(x, state)
    self.values[x] = _LIVE

  def final(self, refs):
    """The values ``refs`` hold at the end of the region."""
    return [self.values[r] for r in refs]

  def __enter__(self):
    _scopes.stack.append(self)
    return self

  def __exit__(self, *exc):
    popped = _scopes.stack.pop()
    assert popped is self, "ref scopes closed out of order"
    # the high-level values keep their final states here and get their outside ones back
    for x, v in self.values.items():
      if v is _LIVE:
        self.values[x] = _hi_read(x)
    for x in reversed(list(self.saved)):
      _hi_write(x, self.saved[x])

  def close(self):
    """Drop the values (tracers of the region's trace) once the region is built."""
    self.values = {}
    self.saved = {}


def in_scope() -> bool:
  """Whether a staged region that holds ref values is being traced."""
  return bool(_scopes.stack)


def current_value(ref):
  """The value ``ref`` holds where the program now is."""
  stack = _scopes.stack
  return _value_at(stack, len(stack) - 1, ref)


_MISSING = object()
_LIVE = object()   # a high-level value's state in a live scope: the object holds it


def _value_at(stack, i, ref):
  if i < 0:
    if type(ref) is not Ref:
      return _hi_read(ref)
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
  if value is _LIVE:
    return _hi_read(ref)
  if value is _MISSING:
    if type(ref) is Ref:
      value = (_value_at(stack, i - 1, ref) if scope.enter is None
               else scope.enter(ref._aval.inner_aval))
      scope.values[ref] = value
    elif scope.enter is None:
      value = _value_at(stack, i - 1, ref)
      scope._enter_hi(ref, value, value)
    else:   # (the object holds the state outside: that of the enclosing live scope)
      outside = _hi_read(ref)
      value = HiState(outside.qdd, [scope.enter(core.get_aval(v)) for v in outside.vals])
      scope._enter_hi(ref, outside, value)
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
  hi = type(ref) is not Ref
  if not stack:
    if hi:
      _hi_write(ref, value)
    else:
      ref._value = value
    return
  scope = stack[-1]
  if ref not in scope.values:
    current_value(ref)   # enters the scope: a partial write needs the value on entry
  if hi:
    _hi_write(ref, value)
  else:
    scope.values[ref] = value
  scope.written.add(ref)


def unsupported_write(ref, trace) -> Exception:
  """The error for a write to ``ref`` inside ``trace``, which carries no state out."""
  return NotImplementedError(
      f"a mutable array reference of type {_describe(ref)} made outside "
      f"{getattr(trace, 'description', 'a trace')} was written inside it, which "
      "jaxlite does not support there (custom_jvp and shard_map bodies): pass the "
      "value in and return the new value, or write the ref outside.")


def put_back(x, state):
  """Give the high-level value ``x`` its ``state`` again (undoing a refused write)."""
  _hi_write(x, state)


def mark_written(x):
  """Record that the high-level value ``x``, which entered the current scope
  (``current_value``), was changed in place by a primitive's lowering."""
  stack = _scopes.stack
  if stack:
    stack[-1].written.add(x)


def adopt(x):
  """Make the high-level value ``x``, made where the program now is, part of the current
  scope: it holds its own state there and enters no enclosing scope."""
  stack = _scopes.stack
  if stack:
    stack[-1].values[x] = _LIVE


def _lower_to_scope(ref, value, base):
  # A write from inside a transformation (grad, vmap) to a ref made outside it must not
  # keep that transformation's tracers: each trace's rule lowers the value or refuses.
  trace = core._context.trace
  made_in = getattr(ref, "_trace", None) if type(ref) is Ref else None
  while trace is not base and trace is not made_in:
    rule = write_rules.get(type(trace))
    if rule is None:   # (JAX's class where it has no rule either: custom_jvp under jit)
      raise unsupported_write(ref, trace)
    if type(value) is HiState:
      value = HiState(value.qdd, [rule(trace, ref, v) for v in value.vals])
    else:
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
  """The positions of the refs and mutable high-level values among ``leaves``."""
  return [i for i, x in enumerate(leaves) if is_stateful(x)]


def carried_in(leaves):
  """The positions among argument ``leaves`` that a staged call takes through its
  ``RefPlan``: refs and high-level values (an immutable one as its arrays)."""
  return [i for i, x in enumerate(leaves) if type(x) is Ref or is_hi(x)]


# -- staged calls

class RefPlan:
  """How the refs of one traced function enter and leave its jaxpr.

  The jaxpr takes, after the function's own inputs, the value of each outside ref it
  used (``closed``; an argument ref's value takes that argument's place), and gives,
  after the function's outputs, the final value of each ref it wrote: the argument refs
  at ``written_args`` (positions among the argument leaves), then the ``closed`` refs
  at ``written_closed``. A mutable high-level value counts as a ref whose value is its
  state's arrays (``HiState``): several inputs and outputs, the final quasi-dynamic data
  of each written one being that of the trace (``final_qdds``); a closed-over one whose
  quasi-dynamic data has changed since makes the plan stale (``current``).
  """
  __slots__ = ("arg_positions", "closed", "written_args", "written_closed", "describe",
               "final_qdds", "closed_qdds")

  def __init__(self, arg_positions, describe):
    self.arg_positions = arg_positions
    self.describe = describe   # () -> "f at file.py:3 traced for jit", for errors
    self.closed: list = []
    self.written_args: list = []
    self.written_closed: list = []
    self.final_qdds: list = []    # per written value: (final qdd, arrays) (None: a ref)
    self.closed_qdds: list = []   # per closed value: its qdd when traced (None: a ref)

  @property
  def used(self) -> bool:
    return bool(self.arg_positions or self.closed)

  @property
  def n_written(self) -> int:
    return sum(1 if q is None else q[1] for q in self.final_qdds)

  @property
  def cacheable(self) -> bool:
    """False when it closes over a ref made inside a trace (valid only there)."""
    return all(type(r) is not Ref or r._value is not None for r in self.closed)

  def current(self) -> bool:
    """Whether the closed-over high-level values hold the types they held when the
    function was traced (else it must be traced again, as JAX's jit does)."""
    # (such a value holds its state where the program is, so its qdd says it)
    return all(q is None or r.cur_qdd() == q for r, q in zip(self.closed, self.closed_qdds))

  def inputs(self, leaves, names):
    """The jaxpr's inputs for a call with argument ``leaves``: each ref's value now."""
    leaves = list(leaves)
    seen = {}
    for i in self.arg_positions:
      ref = leaves[i]
      if not is_stateful(ref):   # an immutable high-level value: its arrays
        leaves[i] = HiState(None, _hi_arrays(ref))
        continue
      if ref in seen and type(ref) is Ref:   # (a high-level value may come twice)
        raise ValueError(
            "only one reference to a mutable array may be passed as an argument to a "
            f"function, but when tracing {self.describe().replace(' traced ', ' ')} the "
            f"mutable array reference of type {_describe(ref)} appeared at both "
            f"{names()[seen[ref]]} and {names()[i]}.")
      seen[ref] = i
      leaves[i] = current_value(ref)
    return flat_values(leaves + [current_value(r) for r in self.closed])

  def write_back(self, leaves, values):
    """Store the written refs' final ``values`` (the jaxpr's extra outputs)."""
    values = iter(values)
    qdds = iter(self.final_qdds)
    for ref in ([leaves[self.arg_positions[i]] for i in self.written_args]
                + [self.closed[k] for k in self.written_closed]):
      q = next(qdds)
      if q is None:
        store(ref, next(values))
      else:
        store(ref, HiState(q[0], [next(values) for _ in range(q[1])]))


def with_refs(flat_fun, arg_positions, describe, hi_args=None):
  """``flat_fun`` (flat leaves in and out) as the function a jaxpr is traced from when
  the argument leaves at ``arg_positions`` are refs; returns it and its ``RefPlan``,
  complete once it has been traced. ``describe()`` names the function for errors.

  ``hi_args`` maps those positions that hold high-level values to the value traced: the
  function takes its arrays there (as many as its state, or lowering, has), and
  ``flat_fun`` gets a mutable value itself, holding them, and an immutable one raised
  from them."""
  plan = RefPlan(arg_positions, describe)
  hi_args = hi_args or {}

  def traced(*xs):
    trace = core._context.trace
    scope = RefScope(trace, trace.new_arg)
    xs = _regroup(xs, hi_args)
    with scope:
      refs = []
      for i in arg_positions:
        if i in hi_args and not is_stateful(hi_args[i]):   # immutable: made of its arrays
          xs[i] = hi_rules[type(hi_args[i])].raise_val(hi_args[i], xs[i])
          refs.append(None)   # (never written)
          continue
        elif i in hi_args:
          ref = hi_args[i]
          if ref not in scope.saved:   # (passed twice: one value, its first arrays)
            scope.bind([ref], [HiState(_hi_read(ref).qdd, xs[i])])
          xs[i] = ref
        else:
          xs[i] = ref = create(AbstractRef(core.get_aval(xs[i])), xs[i])
        refs.append(ref)
      outs = flat_fun(*xs)
      for out in outs:
        if is_stateful(out):
          origin = ("\n\nThe returned mutable array was passed in as an argument."
                    if out in refs else "")
          raise ValueError(
              f"function {describe()} returned a mutable array reference of type "
              f"{_describe(out)}, but mutable array references cannot be returned."
              f"{origin}")
    plan.closed = [r for r in scope.entered if r not in hi_args.values()]
    plan.closed_qdds = [None if type(r) is Ref else scope.values[r].qdd
                        for r in plan.closed]
    plan.written_args = [k for k, r in enumerate(refs)
                         if r is not None and r in scope.written]
    plan.written_closed = [k for k, r in enumerate(plan.closed) if r in scope.written]
    extra = scope.final([refs[k] for k in plan.written_args]) + scope.final(
        [plan.closed[k] for k in plan.written_closed])
    plan.final_qdds = [(v.qdd, len(v.vals)) if type(v) is HiState else None
                       for v in extra]
    scope.close()
    return list(outs) + flat_values(extra)
  return traced, plan


def _regroup(xs, hi_args):
  # the arrays of each high-level argument's state, taken together at its position
  if not hi_args:
    return list(xs)
  counts = {i: len(_hi_arrays(x)) for i, x in hi_args.items()}
  out, k = [], 0
  for i in range(len(xs) - sum(counts.values()) + len(counts)):
    n = counts.get(i)
    out.append(xs[k] if n is None else list(xs[k:k + n]))
    k += 1 if n is None else n
  return out


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
