"""``jit``: signature keys, the compile cache, static arguments, stages, explanations, stats.

A call flattens its arguments, builds the *signature* (treedef, each leaf's shape, dtype
and weak type, the static arguments' values, the x64 flag) and looks it up. A miss
traces the function to a jaxpr (once per signature), explains in one line why it
retraced, and compiles lazily: tier 0 generates Python/NumPy source in milliseconds.
Inside another trace (grad, vmap, an outer jit) the call binds the ``jit`` primitive
instead, so jaxprs show nested calls as JAX prints them.
"""
from __future__ import annotations

import functools
import inspect
import logging
import operator
import os
import threading
import time
import warnings
import weakref
from collections import deque

import numpy as np

from jaxlite._src.base import api_util
from jaxlite._src import arguments
from jaxlite._src import compiler
from jaxlite._src.compiler import XlaDispatch
from jaxlite._src.core import core
from jaxlite._src.core import extended
from jaxlite._src.core.state import types as ref_types
from jaxlite._src.base import dtypes, tree
from jaxlite._src.base import layout as layout_mod
from jaxlite._src.core.array import (Array, check_donated_once, committed_device,
                                check_not_donated, delete_donated, from_device,
                                in_device_memory, placement)
from jaxlite._src import backends
from jaxlite._src.backends.numpy import codegen
from jaxlite._src.backends.numpy import control_flow_impls
from jaxlite._src import relayout
from jaxlite._src import tiers
from jaxlite._src.base.config import config
from jaxlite._src.base import mesh_context
from jaxlite._src.core.core import Tracer
from jaxlite._src.lax.base import LIBRARY_FLAGS, trace_context
from jaxlite._src.lax.call import call_jaxpr
from jaxlite._src.lax.sharding_constraint import constrained_results
from jaxlite._src.transforms import staging
from jaxlite._src import donation
from jaxlite._src.base import monitoring, trace_events, traceback_util
from jaxlite._src import passes

logger = logging.getLogger("jaxlite")

def _cache_key(in_tree, sigs, static_key, target=None, commit_to=None):
  """The signature a call is cached under: argument structure and leaves, static values,
  the flags that change what tracing produces (``lax.base.trace_context``: x64, the
  named vmap axes, ..., the abstract mesh in context), as JAX's cache key includes its
  trace context, the device backend it runs on (``target``; None: the host's tiers) and
  the device its outputs are committed to (``commit_to``; None: uncommitted)."""
  x64, axes, promotion, precision, mesh, library_flags = trace_context()
  return (in_tree, sigs, static_key, x64, axes, promotion, target, precision, commit_to,
          mesh, library_flags)


def _hoist(closed, donation):
  """``closed`` with its constants that live in a device's memory made its leading
  parameters, the donation plan shifted to match, and those constants: a program that
  closes over device arrays takes their buffers instead of reading them back to embed."""
  jaxpr = closed.jaxpr
  lifted = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if in_device_memory(c)]
  if not lifted:
    return closed, donation, []
  kept = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if not in_device_memory(c)]
  new = core.Jaxpr([v for v, _ in kept], [v for v, _ in lifted] + list(jaxpr.invars),
                   jaxpr.outvars, jaxpr.eqns, jaxpr.debug_info)
  if donation is not None:
    donation = [None] * len(lifted) + list(donation)
  return core.ClosedJaxpr(new, [c for _, c in kept]), donation, [c for _, c in lifted]


def _ordinal(n):
  suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
  return f"{n}{suffix}"


def _describe(sig):
  aval = arguments.signature_aval(sig)
  if not isinstance(aval, core.ShapedArray):   # (a high-level type)
    return aval.str_short()
  return ("weak " if aval.weak_type else "") + aval.str_short(short_dtypes=True)


class _Entry:
  """One signature of one jitted function: its jaxpr, executable and statistics.

  ``run`` is the executable its calls dispatch to (``compiler``'s kinds). The tier policy
  (``tiers.POLICIES``) chooses it: ``prepare`` makes the first, with ``compile_numpy`` and
  ``compile_xla``, and under ``auto`` the policy's probe and race replace it later, and
  keep its tier fields (``tier``, ``tier_ms``, ``tier_note``, ``compiling``,
  ``review_at``, ``race``) up to date."""
  # (its cache hits are its calls but the first, which traced it: no counter needed)
  __slots__ = ("jaxpr", "out_tree", "traced_out_tree", "out_weak", "run", "source", "calls",
               "trace_ms", "compile_ms", "exec_s", "tier", "optimized", "key", "lock",
               "single_output", "xla_text", "tier_note", "tier_ms", "compiling",
               "donation", "donate", "effects", "review_at", "race", "commit_to", "spmd",
               "refs")

  def __init__(self, key, jaxpr, out_tree, trace_ms, refs=None):
    self.key = key
    # the RefPlan of a function using mutable array references (None: it uses none);
    # its out trees then hold (the function's outputs, the written refs' values)
    self.refs = refs
    self.commit_to = key[8]   # the device outputs are committed to, or None
    self.traced_out_tree = out_tree   # the tree of the traced outputs (tracers, avals)
    # the tree a call's results fill (``result_tree``): typed keys and float0 zeros
    out_tree = result_tree(out_tree, jaxpr.out_avals)
    self.single_output = out_tree.num_leaves == 1 and out_tree == _LEAF
    self.jaxpr = jaxpr
    self.out_tree = out_tree
    self.out_weak = [a.weak_type for a in jaxpr.out_avals]
    self.run = None
    self.source = None
    self.optimized = None
    self.calls = 0
    self.trace_ms = trace_ms
    self.compile_ms = {}
    self.exec_s = deque(maxlen=256)
    self.tier = None
    self.lock = threading.Lock()
    self.xla_text = None
    self.tier_note = None
    self.tier_ms = {}   # tier -> best ms measured while choosing between tiers
    self.compiling = False   # a background XLA compile is queued or running
    # donation (see donation.plan): per argument leaf, the output XLA writes into its
    # buffer, True (any output of its size), or None; ``donate``: the leaves a call
    # consumes (deletes), None when none is donated
    self.donation = None
    self.donate = None
    self.effects = None   # whether the program has effects (``tiers.has_effects``)
    # a close race's verdict is taken again at this call (``tiers.review``; -1: never)
    self.review_at = -1
    self.race = None
    # whether a sharding constraint lays a value out over several devices: the program
    # then runs partitioned (``sharding_jit``), never from the fast cache
    # (run partitioned, or with the device memory layouts asked: see sharding_jit)
    self.spmd = constrains_over_devices(jaxpr.jaxpr) or lays_out_results(jaxpr.jaxpr)

  def executable(self, name, policy="numpy"):
    """The function the hot path calls, preparing the tiers ``policy`` asks for."""
    if self.run is None:
      with self.lock:
        if self.run is None:
          self._prepare(name, policy)
    return self.run

  def _prepare(self, name, policy):
    self.optimized = passes.optimize(self.jaxpr)
    if self.key[6] is not None:   # a device runs XLA's only
      policy = "xla"
    self.run = tiers.POLICIES[policy].prepare(self, name)

  def compile_numpy(self, name):
    """Compile tier 0 (a compile for the 'cpu' platform: it runs on the host)."""
    t0 = time.perf_counter()
    run, self.source = compiler.backend_compile_and_load(
        _CPU, codegen.compile_jaxpr, self.optimized, name)
    self._record_compile("numpy", name, (time.perf_counter() - t0) * 1e3)
    return run

  def _record_compile(self, tier, name, ms, where=""):
    self.compile_ms[tier] = ms
    monitoring.record_event_duration_secs("/jax/core/compile/backend_compile_duration",
                                          ms / 1e3, fun_name=f"jit({name})")
    if config.jax_log_compiles:
      logger.warning("Compiling %s for tier %s in %.2f ms%s", name, tier, ms, where)

  def record_xla(self, name, ms, text, from_disk_cache, where=""):
    """Record an XLA compile (here or in the compile server): its time, its StableHLO."""
    # JAX's event for a compile that consults the persistent cache (jaxlite's is always on).
    monitoring.record_event("/jax/compilation_cache/compile_requests_use_cache")
    self._record_compile("xla", name, ms, where)
    if from_disk_cache:
      self.tier_note = "xla executable loaded from the persistent compile cache"
    self.xla_text = text

  def compile_xla(self, name, options=None):
    """Compile XLA for the signature's device (None: the host's), with XLA compiler
    ``options`` (None: its defaults): an ``XlaDispatch``."""
    t0 = time.perf_counter()
    target = self.key[6]
    closed, donation, consts = _hoist(self.optimized, self.donation)
    if target is None:
      executable = compiler.backend_compile_and_load(
          _CPU, tiers.compile_xla, closed, name, donation, None, options)
    else:
      executable = compiler.backend_compile_and_load(
          compiler.Backend(target.platform), tiers.compile_xla, closed, name, donation,
          target.pjrt_client(), options)
    self.record_xla(name, (time.perf_counter() - t0) * 1e3, executable.as_text(),
                     executable.from_disk_cache)
    client = executable.loaded.client
    return XlaDispatch(executable, [arguments.leaf_device_value(c, client) for c in consts])

_CPU = compiler.Backend("cpu")
_FOLLOW = object()   # a jitted function's target: the default device's backend
_LEAF = tree.tree_structure(0)


class _Float0:
  """A float0 output of a compiled call in its output tree: a node over the executable's
  leaf, which unflattening replaces by NumPy zeros, the value JAX returns for one."""
  __slots__ = ("shape",)

  def __init__(self, shape):
    self.shape = shape


tree.register_pytree_node(_Float0, lambda z: ((0,), z.shape),
                          lambda shape, _: np.zeros(shape, dtypes.float0))


def result_tree(out_tree, out_avals):
  """The tree that a compiled call's flat outputs fill: ``out_tree``, with a node over
  each output that the executable returns as other data: a typed key (its data, see
  passes.physicalize) or a float0 array (no operation accepts a float0 Array)."""
  nodes = [extended.data_node(a) or (_Float0(a.shape) if a.dtype == dtypes.float0 else None)
           for a in out_avals]
  if not any(n is not None for n in nodes):
    return out_tree
  leaves = [0 if n is None else n for n in nodes]
  return tree.tree_structure(tree.tree_unflatten(out_tree, leaves))
# A check of every eager jitted call's outputs, (function, args, kwargs, out) -> out, or
# None; while one is set, calls skip the fast cache (debug_nans sets one).
_output_check = None


def set_output_check(check):
  """Check the outputs of every jitted call made outside transformations with ``check``
  (None: stop checking)."""
  global _output_check
  _output_check = check


class PjitFunction:
  """A function compiled by ``jit`` (``jax.stages.Wrapped``).

  Named, and printed, as JAX's jitted functions are (``<PjitFunction of f>``): libraries
  tell jitted functions apart by that name (chex's ``assert_max_traces``)."""

  def __init__(self, fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
               keep_unused, inline, backend, device=None):
    if not callable(fun):
      raise TypeError(f"Expected a callable value, got {fun!r}")
    self._policy = tiers.resolve_policy(backend)
    if device is not None or backend in ("cpu", "gpu", "cuda", "tpu"):
      # (a tier name, backend='numpy' or 'xla', is jaxlite's own and not deprecated)
      warnings.warn("backend and device argument on jit is deprecated. You can use "
                    "`jax.device_put(..., jax.local_devices(backend=\"cpu\")[0])` on the "
                    "inputs to the jitted function to get the same behavior.",
                    DeprecationWarning, stacklevel=3)
    self._placement = (backend, device)   # resolved at the first call (``_call_target``)
    self._target = _FOLLOW
    self.fun = fun
    functools.update_wrapper(self, fun, updated=())
    self._name = api_util.fun_name(fun)
    self._static_argnums, self._static_argnames = _resolve_static(
        fun, static_argnums, static_argnames)
    self._donate_argnums, self._donate_argnames = _resolve_donate(
        fun, donate_argnums, donate_argnames, self._static_argnums, self._static_argnames)
    self._donates = bool(self._donate_argnums or self._donate_argnames)
    self._keep_unused = keep_unused
    self._inline = inline
    self._cache: dict = {}
    # positional-Arrays-only signatures (shape, dtype, weak per argument) -> entry
    self._fast_cache: dict = {}
    self._fast_flags = None      # config.generation the fast cache was filled under
    self._has_static = bool(self._static_argnums or self._static_argnames)
    self._order: list = []        # signatures in the order they were first seen
    # reentrant: the function may call itself with another signature while it is traced
    self._lock = threading.RLock()
    self._location = _source_location(fun)
    try:
      self._param_names = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
      self._param_names = []
    tiers.made_jitted(self)

  # -- calling
  @traceback_util.boundary
  def __call__(self, *args, **kwargs):
    # Hot path: a signature seen before, eager context, no flag changed since the fast
    # cache was filled (``_fast_flags``; never for static or donated arguments).
    # Positional Arrays: one loop builds the key and collects the device buffers. Arrays
    # nested in tuples, lists, dicts and named tuples (parameter trees):
    # ``arguments.nested_key`` builds the key and collects the leaves in one pass.
    try:   # (zero cost until it raises: jaxlite's frames then leave the traceback)
      if (not kwargs and self._fast_flags is config.generation and not mesh_context.active
          and (core.eager_everywhere or core._context.trace is core.eval_trace)):
        leaves, key, bufs = args, [], []
        for a in args:
          if type(a) is Array:   # (the key as arguments.nested_key builds it)
            buf = a._buf
            if buf is not None and a._placed is None:
              key.append((buf.spec, a.weak_type))
              bufs.append(buf)
              continue
            value = a._host
            if value is not None:
              key.append(((value.shape, value.dtype), a.weak_type))
              bufs.append(buf)
              continue
          # containers, and Arrays committed to a device (their key names it)
          leaves, key, bufs = [], [], None
          if not arguments.nested_key(args, leaves, key):
            return self._call(args, kwargs)
          break
        entry = self._fast_cache.get(tuple(key))
        if entry is not None:
          if entry.commit_to is not None:
            return self._commit(entry, self._execute(entry, args, kwargs, (), leaves, False))
          entry.calls += 1
          if entry.calls == entry.review_at:
            tiers.review(entry)
          run = entry.run
          t0 = time.perf_counter()
          try:
            if run.__class__ is XlaDispatch:  # outputs stay on the device, not waited for
              if bufs is None or None in bufs:
                bufs = [a._to_device(run.client) if a._buf is None else a._buf
                        for a in leaves]
              outs = run.execute_device(bufs)
              entry.exec_s.append(time.perf_counter() - t0)
              if entry.single_output:
                return from_device(outs[0], entry.out_weak[0])
              return tree.tree_unflatten(entry.out_tree,
                                         list(map(from_device, outs, entry.out_weak)))
            if run.__class__ is tiers.Race:
              return self._race(entry, run, leaves, t0)
            values = []
            for a in leaves:   # (a loop: a comprehension's walrus would make a cell here)
              value = a._host
              values.append(value if value is not None else a._value)
            outs = run(*values)
          except RuntimeError:   # a deleted argument: JAX's error for a donated one
            check_not_donated(leaves)
            raise
          entry.exec_s.append(time.perf_counter() - t0)
          if entry.single_output:
            return Array(outs[0], entry.out_weak[0])
          return tree.tree_unflatten(entry.out_tree, list(map(Array, outs, entry.out_weak)))
      return self._call(args, kwargs)
    except Exception as e:
      traceback_util.filter_exception(e)
      raise

  def _call(self, args, kwargs, follow_shardings=True):
    if trace_events.recording is None:
      out = self._dispatch(args, kwargs, follow_shardings)
    else:   # a profiler trace records each call (calls skip the fast cache meanwhile)
      with trace_events.span(f"PjitFunction({self._name})"):   # (JAX's name)
        out = self._dispatch(args, kwargs, follow_shardings)
    if mesh_context.active and core._context.trace is core.eval_trace:
      out = placement["in_context"](out)   # (laid out over the mesh in context, as JAX)
    check = _output_check
    if check is not None and core._context.trace is core.eval_trace:
      return check(self, args, kwargs, out)
    return out

  def _dispatch(self, args, kwargs, follow_shardings=True):
    if config.jax_disable_jit:
      return self.fun(*args, **kwargs)
    given = (args, kwargs)
    if self._static_argnums or self._static_argnames:
      args, kwargs, static_key = self._split_static(args, kwargs)
    else:
      static_key = ()
    leaves, in_tree = tree.tree_flatten((args, kwargs))
    if core._context.trace is not core.eval_trace:
      return self._bind(args, kwargs, leaves, in_tree, static_key)
    committed = committed_device(leaves, getattr(self.fun, "__qualname__", self._name),
                                 lambda: self._arg_names(args, kwargs))
    sigs = tuple(map(arguments.leaf_signature, leaves))
    key = _cache_key(in_tree, sigs, static_key, self._call_target(committed),
                     self._commit_target(committed))
    entry = self._cached(key)
    missed = entry is None
    if missed:
      entry = self._miss(key, args, kwargs, leaves, static_key)
    if follow_shardings and (entry.spmd or split_over_devices(leaves)):
      # as JAX, a program whose arguments or constraints lay values out over several
      # devices is partitioned so, its results laid out as the partitioner keeps them
      return sharded_jit[0].following(self)(*given[0], **given[1])
    if entry.refs is not None:
      return self._execute_with_refs(entry, args, kwargs, static_key, leaves)
    if missed:   # (a deleted argument raises the RuntimeError, as in JAX)
      out = self._execute(entry, args, kwargs, static_key, leaves)
    else:
      try:
        out = self._execute(entry, args, kwargs, static_key, leaves)
      except RuntimeError:   # a deleted argument: JAX's error for a donated one
        check_not_donated(leaves)
        raise
    return out if entry.commit_to is None else self._commit(entry, out)

  def _execute_with_refs(self, entry, args, kwargs, static_key, leaves):
    # the refs' values go in after the arguments and come out after the outputs
    plan = entry.refs
    inputs = plan.inputs(leaves, lambda: self._arg_names(args, kwargs))
    out, written = self._execute(entry, args, kwargs, static_key, inputs, False)
    plan.write_back(leaves, written)
    return out if entry.commit_to is None else self._commit(entry, out)

  @staticmethod
  def _commit(entry, out):
    device, commit = entry.commit_to, placement["commit"]
    if entry.single_output:
      return commit(out, device)
    return tree.tree_map(lambda o: commit(o, device), out)

  def _call_target(self, committed=None):
    """The resident backend this function's calls run on (None: the host's tiers): the
    one ``jit(backend=..., device=...)`` names, else that of the device an argument is
    committed to (``committed``), else the default device's."""
    target = self._target
    if target is _FOLLOW:
      backend, device = self._placement
      if backend is None and device is None:
        if committed is not None:
          return committed.client if committed.client.resident else None
        return core.eval_trace.device
      target = tiers.placement_target(backend, device)
      self._target = target
    return target

  def _commit_target(self, committed):
    """The device this call's outputs are committed to, as JAX commits them: the one
    ``jit(device=...)`` or a platform's ``backend=`` names, else ``committed``'s."""
    backend, device = self._placement
    if device is not None:
      return device
    if backend is not None and backend not in ("auto", "numpy", "xla"):
      return backends.backend(backend).devices()[0]
    return committed

  def _execute(self, entry, args, kwargs, static_key, leaves, fill_fast_cache=True):
    entry.calls += 1
    if entry.calls == entry.review_at:
      tiers.review(entry)
    run = entry.run or entry.executable(self._name, self._policy or tiers.default_policy())
    if _output_check is not None and config.jax_no_execution:   # (compiled, not run: JAX's)
      raise RuntimeError(f"JAX tried to execute function jit({self._name}), but the "
                         "no_execution config option is set")
    if entry.donate is not None:
      return self._call_donating(entry, run, leaves)
    key = []
    if (fill_fast_cache and not kwargs and not static_key and not self._donates
        and not entry.spmd
        and not self._has_static and _output_check is None and trace_events.recording is None
        and arguments.nested_key(args, [], key)):
      if self._fast_flags is not config.generation:   # a flag changed: start afresh
        self._fast_cache.clear()
        self._fast_flags = config.generation
      self._fast_cache[tuple(key)] = entry
    t0 = time.perf_counter()
    if run.__class__ is XlaDispatch:
      outs = run.execute_device([arguments.leaf_device_value(x, run.client) for x in leaves])
      entry.exec_s.append(time.perf_counter() - t0)
      return tree.tree_unflatten(entry.out_tree, list(map(from_device, outs, entry.out_weak)))
    if run.__class__ is tiers.Race:
      return self._race(entry, run, leaves, t0)
    outs = run(*map(arguments.leaf_value, leaves))
    entry.exec_s.append(time.perf_counter() - t0)
    return tree.tree_unflatten(entry.out_tree, list(map(Array, outs, entry.out_weak)))

  def _call_donating(self, entry, run, leaves):
    """A call that donates argument leaves: whatever the tier, the donated Arrays are
    deleted once the outputs are dispatched. On the XLA tier their buffers go to XLA,
    which writes outputs into them, when nothing else can see their memory."""
    check_donated_once(leaves, entry.donate)
    t0 = time.perf_counter()
    if run.__class__ is XlaDispatch:
      bufs = [arguments.leaf_device_value(x, run.client) for x in leaves]
      consumed = [i for i in entry.donate if type(leaves[i]) is Array
                  and bufs[i].donatable(not leaves[i]._on_device)]
      outs = run.execute_donating(bufs, consumed)
      outs = list(map(from_device, outs, entry.out_weak))
    elif run.__class__ is tiers.Race:
      outs = run(leaves)
    else:
      outs = donation.reuse_host_buffers(leaves, entry.donation,
                                         run(*map(arguments.leaf_value, leaves)))
      outs = list(map(Array, outs, entry.out_weak))
    entry.exec_s.append(time.perf_counter() - t0)
    delete_donated(leaves, entry.donate)
    return tree.tree_unflatten(entry.out_tree, outs)

  @staticmethod
  def _race(entry, race, leaves, t0):
    outs = race(leaves)
    entry.exec_s.append(time.perf_counter() - t0)
    return tree.tree_unflatten(entry.out_tree, outs)

  @property
  def __signature__(self):
    # the wrapped function's, as JAX's jitted functions give: inspect would otherwise take
    # this descriptor (it has __get__) for a builtin and find no signature, even with
    # follow_wrapped=False (chex's fake_pmap asks so)
    return inspect.signature(self.fun)

  def __get__(self, instance, owner=None):
    if instance is None:
      return self
    return functools.partial(self, instance)

  def __repr__(self):
    return f"<PjitFunction of {self.fun!r}>"

  # -- static arguments
  def _split_static(self, args, kwargs):
    static = []
    for i in self._static_argnums:
      if i < len(args):
        static.append((i, args[i]))
    for name in self._static_argnames:
      if name in kwargs:
        static.append((name, kwargs[name]))
    for _, value in static:
      try:
        hash(value)
      except TypeError as e:
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while "
            f"trying to hash an object of type {type(value)}, {value!r}. The error was:\n"
            f"TypeError: {e}\n") from None
    dyn_args = tuple(a for i, a in enumerate(args) if i not in self._static_argnums)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
    return dyn_args, dyn_kwargs, tuple(static)

  def _rebuild(self, dyn_args, dyn_kwargs, static_key):
    """A function of the dynamic arguments that calls ``fun`` with the statics put back."""
    static_pos = {k: v for k, v in static_key if isinstance(k, int)}
    static_kw = {k: v for k, v in static_key if isinstance(k, str)}
    n = len(dyn_args) + len(static_pos)

    def fun(*dyn, **kw):
      it = iter(dyn)
      full = [static_pos[i] if i in static_pos else next(it) for i in range(n)]
      return self.fun(*full, **kw, **static_kw)
    return fun

  # -- tracing
  def _trace(self, key, args, kwargs, leaves, static_key, traced_for="jit"):
    if config.jax_no_tracing:
      raise RuntimeError(f"re-tracing function {self._name} at {self._location} for "
                         f"`{traced_for}`, but 'no_tracing' is set")
    in_tree = key[0]
    bad = [i for i, s in enumerate(key[1]) if s is None]
    if bad:
      path = self._arg_names(args, kwargs)[bad[0]]
      raise TypeError(
          f"Error interpreting argument to {self.fun!r} as an abstract array. The "
          f"problematic value is of type {type(leaves[bad[0]])} and was passed to the "
          f"function at path {path}.\nThis typically means that a jit-wrapped function was "
          "called with a non-array argument, and this argument was not marked as static "
          "using the static_argnums or static_argnames parameters of jax.jit.")
    in_avals = [a for s in key[1] for a in arguments.signature_avals(s)]
    target = self._rebuild(args, kwargs, static_key) if static_key else self.fun
    info = api_util.DebugInfo(traced_for, api_util.fun_source_info(self.fun),
                              tuple(self._arg_names(args, kwargs)), self._name)
    flat_fun, out_tree = api_util.flatten_fun(target, in_tree)
    ref_positions = [i for i, s in enumerate(key[1]) if arguments.is_ref_signature(s)]
    hi_args = {i: leaves[i] for i in ref_positions if type(leaves[i]) is not ref_types.Ref}
    flat_fun, plan = ref_types.with_refs(flat_fun, ref_positions,
                                         lambda: f"{info.func_src_info} traced for jit",
                                         hi_args)

    hi_outs = []   # per output: the high-level type of one returned as its arrays, or None

    def checked(*xs):
      outs, types = ref_types.lower_outputs(flat_fun(*xs))
      hi_outs.extend(types)
      for x in outs:
        if not isinstance(x, (Array, Tracer, np.ndarray, np.generic, bool, int, float,
                              complex)):
          raise TypeError(f"function {info.func_src_info} traced for jit returned a value "
                          f"of type {type(x)}, which is not a valid JAX type. Return arrays "
                          "(or pytrees of arrays) only; make other results static by "
                          "returning them from a separate, un-jitted function.")
      return outs

    t0 = time.perf_counter()
    closed = staging.trace_to_jaxpr(checked, in_avals, info)
    trace_ms = (time.perf_counter() - t0) * 1e3
    monitoring.record_event_duration_secs("/jax/core/compile/jaxpr_trace_duration",
                                          trace_ms / 1e3, fun_name=self._name)
    if config.jax_log_compiles:
      logger.warning("Finished tracing %s for jit in %.2f ms", self._name, trace_ms)
    outs_tree = ref_types.raised_tree(out_tree(), hi_outs)
    if not plan.used:
      return _Entry(key, closed, outs_tree, trace_ms)
    written = tree.tree_structure([0] * plan.n_written)
    return _Entry(key, closed, tree.treedef_tuple([outs_tree, written]), trace_ms, plan)

  def _arg_names(self, args, kwargs):
    names = []
    dyn_params = [p for i, p in enumerate(self._param_names)
                  if i not in self._static_argnums]
    for i, a in enumerate(args):
      base = dyn_params[i] if i < len(dyn_params) else f"args[{i}]"
      names += [base + tree.keystr(p) for p, _ in tree.tree_flatten_with_path(a)[0]]
    for k, v in kwargs.items():
      names += [k + tree.keystr(p) for p, _ in tree.tree_flatten_with_path(v)[0]]
    return names

  def _cached(self, key):
    entry = self._cache.get(key)
    if entry is not None and entry.refs is not None and not entry.refs.current():
      return None   # a closed-over high-level value's type changed: trace again
    return entry

  def _miss(self, key, args, kwargs, leaves, static_key):
    with self._lock:
      entry = self._cached(key)
      if entry is not None:
        return entry
      entry = self._trace(key, args, kwargs, leaves, static_key)
      if self._donates:
        donated = self._donated_leaves(args, kwargs)
        for i in entry.refs.arg_positions if entry.refs is not None else ():
          donated[i] = False   # a ref keeps its buffer: the call writes it back
        # (a high-level value's arrays are so many inputs, none donated)
        donated = [d for s, f in zip(key[1], donated)
                   for d in [f] * len(arguments.signature_avals(s))]
        entry.donation = donation.plan(entry.jaxpr, donated, self._keep_unused)
        donate = tuple(i for i, d in enumerate(entry.donation) if d is not None)
        entry.donate = donate or None
      if self._order:
        self._explain(key, args, kwargs)
      if not any(isinstance(c, Tracer) for c in entry.jaxpr.consts) and (
          entry.refs is None or entry.refs.cacheable):
        if key not in self._cache:   # (a retraced one keeps its place)
          self._order.append(key)
        self._cache[key] = entry
      return entry

  def _bind(self, args, kwargs, leaves, in_tree, static_key):
    """Inside another trace: stage (or inline) a call of the traced jaxpr."""
    sigs = tuple(map(arguments.leaf_signature, leaves))
    key = _cache_key(in_tree, sigs, static_key, self._call_target())
    entry = self._cached(key)
    if entry is None:
      entry = self._miss(key, args, kwargs, leaves, static_key)
    closed = entry.jaxpr
    plan = entry.refs
    inputs = leaves if plan is None else plan.inputs(
        leaves, lambda: self._arg_names(args, kwargs))
    if self._inline:
      outs = core.eval_jaxpr(closed.jaxpr, closed.consts, *inputs)
    else:
      outs = call_jaxpr(closed, inputs, self._name)
    out = tree.tree_unflatten(entry.traced_out_tree, outs)
    if plan is None:
      return out
    plan.write_back(leaves, out[1])
    return out[0]

  def _donated_leaves(self, args, kwargs):
    """Per argument leaf (dynamic ``args`` then ``kwargs``, flattened), whether it is
    donated: as JAX's ``donation_vector``, positions name positional arguments and names
    keyword arguments (each filled from the other by the signature)."""
    nums, names = self._donate_argnums, self._donate_argnames
    flags = [i in nums for i, a in enumerate(args) for _ in tree.tree_leaves(a)]
    flags += tree.tree_leaves({k: tree.tree_map(lambda _, d=k in names: d, v)
                               for k, v in kwargs.items()})
    return flags

  # -- explanations
  def _explain(self, key, args, kwargs):
    # the closest of the recent signatures (all of them would make n misses cost O(n^2))
    previous = max(self._order[-16:], key=lambda k: _similarity(k, key))
    reason = _difference(previous, key, self._arg_names(args, kwargs), self._param_names)
    message = (f"{self._name} ({self._location}) retraced: {reason}; "
               f"{_ordinal(len(self._order) + 1)} signature")
    if config.jax_explain_cache_misses:
      warnings.warn(message, stacklevel=4)
    else:
      logger.info(message)

  # -- stages
  def trace(self, *args, **kwargs):
    """Trace for these arguments: a ``Traced`` stage with ``.jaxpr`` and ``.lower()``."""
    from jaxlite._src import stages
    if self._static_argnums or self._static_argnames:
      args, kwargs, static_key = self._split_static(args, kwargs)
    else:
      static_key = ()
    leaves, in_tree = tree.tree_flatten((args, kwargs))
    sigs = tuple(map(arguments.stage_signature, leaves))
    key = _cache_key(in_tree, sigs, static_key, self._call_target())
    entry = self._cache.get(key) or self._miss(key, args, kwargs, leaves, static_key)
    donated = self._donated_leaves(args, kwargs) if self._donates else None
    return stages.Traced(self, entry, self._arg_names(args, kwargs), donated,
                         staged_layouts(entry.jaxpr, leaves))

  def lower(self, *args, **kwargs):
    """Trace and lower for these arguments: a ``Lowered`` stage (``.as_text()``)."""
    return self.trace(*args, **kwargs).lower()

  def eval_shape(self, *args, **kwargs):
    """Output shapes and dtypes for these arguments, as ShapeDtypeStructs."""
    return self.trace(*args, **kwargs).out_info

  # -- caches and statistics
  def clear_cache(self):
    """Forget every signature of this function."""
    with self._lock:
      self._cache.clear()
      self._fast_cache.clear()
      self._order.clear()

  def _cache_size(self):
    return len(self._cache)

  def stats(self):
    """Per-signature calls, cache hits, trace / compile / execute times and the tier."""
    from jaxlite._src import profiler
    return profiler.FunctionStats(self._name, self._location,
                                  [self._cache[k] for k in self._order if k in self._cache])


def _similarity(a, b):
  same_tree = a[0] == b[0]
  same_leaves = sum(x == y for x, y in zip(a[1], b[1])) if same_tree else 0
  same_static = sum(x == y for x, y in zip(a[2], b[2]))
  return (same_tree, same_leaves + same_static)


def _difference(old, new, names, param_names):
  """One line saying what changed between two signatures."""
  changes = []
  if old[3] != new[3]:
    changes.append(f"jax_enable_x64 changed {old[3]} -> {new[3]}")
  if old[4] != new[4]:
    changes.append(f"the named vmap axes changed {old[4]} -> {new[4]}")
  if old[5] != new[5]:
    changes.append(f"jax_numpy_dtype_promotion changed {old[5]} -> {new[5]}")
  if old[6] != new[6]:
    platform = [t.platform + " device" if t else "host" for t in (old[6], new[6])]
    changes.append(f"the default device moved from the {platform[0]} to the {platform[1]}")
  if old[7] != new[7]:
    changes.append(f"jax_default_matmul_precision changed {old[7]} -> {new[7]}")
  if old[8] != new[8]:
    changes.append(f"the device the arguments are committed to changed {old[8]} -> "
                   f"{new[8]}")
  if old[9] != new[9]:
    changes.append(f"the mesh in context changed {old[9]} -> {new[9]}")
  for flag, was, now in zip(LIBRARY_FLAGS, old[10], new[10]):
    if was != now:
      changes.append(f"{flag} changed {was} -> {now}")
  for (k_old, v_old), (k_new, v_new) in zip(old[2], new[2]):
    if v_old != v_new or k_old != k_new:
      label = (k_new if isinstance(k_new, str) else param_names[k_new]
               if k_new < len(param_names) else f"argument {k_new}")
      changes.append(f"{label} (static) changed {v_old!r} -> {v_new!r}")
  if old[0] != new[0]:
    changes.append(f"the argument structure changed {old[0]} -> {new[0]}")
  else:
    for i, (a, b) in enumerate(zip(old[1], new[1])):
      if a != b:
        name = names[i] if i < len(names) else f"leaf {i}"
        changes.append(f"{name} changed {_describe(a)} -> {_describe(b)}")
  return ", ".join(changes[:3]) + (f" and {len(changes) - 3} more" if len(changes) > 3
                                   else "") if changes else "signature changed"


def _source_location(fun):
  code = getattr(inspect.unwrap(fun), "__code__", None)
  if code is None:
    return "<unknown>"
  return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def _resolve_static(fun, static_argnums, static_argnames):
  """Normalise static_argnums / static_argnames and fill each from the other (as JAX)."""
  nums = () if static_argnums is None else (
      (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums))
  names = () if static_argnames is None else (
      (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames))
  try:
    params = list(inspect.signature(fun).parameters.values())
  except (TypeError, ValueError):
    return tuple(sorted(nums)), names
  positional = [p.name for p in params
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
  takes_varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
  if not takes_varargs and any(n >= len(positional) or n < -len(positional) for n in nums):
    raise ValueError(f"jitted function has static_argnums={nums}, but only accepts "
                     f"{len(positional)} positional arguments.")
  nums = tuple(sorted(n % len(positional) if n < 0 and positional else n for n in nums))
  if static_argnums is not None and static_argnames is not None:
    return nums, names   # both given: JAX fills in neither from the signature
  extra_names = tuple(positional[n] for n in nums if n < len(positional)
                      and params[n].kind is not params[n].POSITIONAL_ONLY)
  extra_nums = tuple(positional.index(n) for n in names if n in positional)
  return tuple(sorted(set(nums + extra_nums))), tuple(dict.fromkeys(names + extra_names))


def _resolve_donate(fun, donate_argnums, donate_argnames, static_argnums, static_argnames):
  """donate_argnums (counted among the dynamic arguments) and donate_argnames, each
  filled from the other by ``fun``'s signature and checked, as JAX's
  ``api_util.resolve_argnums``."""
  if donate_argnums is None and donate_argnames is None:
    return (), ()
  nums = None if donate_argnums is None else (
      (donate_argnums,) if isinstance(donate_argnums, int)
      else tuple(operator.index(n) for n in donate_argnums))
  names = None if donate_argnames is None else (
      (donate_argnames,) if isinstance(donate_argnames, str) else tuple(donate_argnames))
  try:
    params = list(inspect.signature(fun).parameters.values())
  except (TypeError, ValueError):
    if names is not None:
      raise ValueError(f"Getting the signature of function {fun} failed. Pass "
                       "donate_argnums instead of donate_argnames.") from None
    return _rebase(nums, static_argnums), ()
  kinds = inspect.Parameter
  if nums is None:
    nums = tuple(i for i, p in enumerate(params)
                 if p.kind is kinds.POSITIONAL_OR_KEYWORD and p.name in names)
  elif names is None:
    names = tuple(p.name for i, p in enumerate(params)
                  if p.kind is kinds.POSITIONAL_OR_KEYWORD and i in nums)
  if not any(p.kind is kinds.VAR_POSITIONAL for p in params):
    n_pos = sum(p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
                for p in params)
    if nums and (-min(nums) > n_pos or max(nums) >= n_pos):
      raise ValueError(f"Jitted function has donate_argnums={nums}, but only accepts "
                       f"{n_pos} positional arguments.")
  positional_only = {p.name for p in params
                     if p.kind in (kinds.POSITIONAL_ONLY, kinds.VAR_POSITIONAL)}
  if bad := positional_only & set(names):
    raise ValueError(f"Jitted function has invalid argnames {bad} in donate_argnames. "
                     "These are positional-only")
  if not any(p.kind is kinds.VAR_KEYWORD for p in params):
    if bad := set(names) - {p.name for p in params} - positional_only:
      raise ValueError(f"Jitted function has invalid argnames {bad} in donate_argnames. "
                       "Function does not take these args.")
  if both := set(static_argnames) & set(names):
    raise ValueError("static_argnames and donate_argnames cannot intersect. Argument "
                     f"names {both} appear in both static_argnames and donate_argnames")
  return _rebase(nums, static_argnums), names


def _rebase(donate_argnums, static_argnums):
  """Donated positions counted among the dynamic arguments (statics are taken out)."""
  if set(donate_argnums) & set(static_argnums):
    raise ValueError(f"`static_argnums` {sorted(set(static_argnums))} and "
                     f"`donate_argnums` {sorted(set(donate_argnums))} cannot intersect.")
  return tuple(sorted(n - sum(s < n for s in static_argnums) if n >= 0 else n
                      for n in set(donate_argnums)))


class _Unspecified:
  """A default that tells "not given" from every value a user may pass (JAX's)."""

  def __init__(self, name):
    self.name = name

  def __repr__(self):
    return self.name


_NOT_SPECIFIED = _Unspecified("<not-specified>")
_UNSPECIFIED_SHARDINGS = _Unspecified("UnspecifiedValue")


def jit(fun=_NOT_SPECIFIED, /, *, in_shardings=_UNSPECIFIED_SHARDINGS,
        out_shardings=_UNSPECIFIED_SHARDINGS, static_argnums=None, static_argnames=None,
        donate_argnums=None, donate_argnames=None, keep_unused=False, device=None,
        backend=None, inline=False, compiler_options=None):
  """Compile ``fun``: trace once per input signature, run the cached executable after.

  Parameters
  ----------
  fun : callable
    A function of arrays (pytrees of them); Python side effects run while tracing only.
  static_argnums, static_argnames : int / str or sequence of them
    Arguments treated as compile-time constants: each distinct (hashable) value gets its
    own compiled program.
  donate_argnums, donate_argnames : int / str or sequence of them
    Arguments whose buffers the call may reuse for its outputs (each filled from the
    other by the signature, as in JAX). Every Array leaf of a donated argument is deleted
    by the call (``is_deleted()``; reading it raises ``RuntimeError``) on every tier. The
    XLA tier writes outputs of the same shape and dtype into the donated buffers
    (``tf.aliasing_output`` in the lowered program) and lets XLA reuse the others of the
    same size (``jax.buffer_donor``); a donated argument no output fits stays alive with
    a ``UserWarning``. Under an outer trace (jit, grad, vmap) donation has no effect.
  inline : bool
    Inline this function's jaxpr into enclosing traces instead of a nested ``jit`` call.
  in_shardings, out_shardings : Sharding or pytree of them, optional
    Lay the arguments and results out over several devices; XLA's SPMD partitioner then
    splits the program (see ``sharding_jit``). Tier 0 computes unsharded.

  Returns
  -------
  PjitFunction
    A callable with ``lower``, ``trace``, ``eval_shape``, ``clear_cache`` and ``stats``.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> f = jax.jit(lambda x: x ** 2 + 1)
  >>> f(jnp.arange(3.0))
  Array([1., 2., 5.], dtype=float32)
  """
  if fun is _NOT_SPECIFIED:   # jit(**options) decorates the function it is given
    return functools.partial(jit, static_argnums=static_argnums,
                             static_argnames=static_argnames, donate_argnums=donate_argnums,
                             donate_argnames=donate_argnames, keep_unused=keep_unused,
                             device=device, backend=backend, inline=inline,
                             compiler_options=compiler_options, in_shardings=in_shardings,
                             out_shardings=out_shardings)
  in_shardings = None if in_shardings is _UNSPECIFIED_SHARDINGS else in_shardings
  out_shardings = None if out_shardings is _UNSPECIFIED_SHARDINGS else out_shardings
  jitted = PjitFunction(fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                  keep_unused, inline, backend, device)
  if in_shardings is None and out_shardings is None:
    _share_traces(jitted)
    return jitted
  return sharded_jit[0](jitted, in_shardings, out_shardings)


# id(fun) -> {options: (cache, order, lock)}: the traces of every ``jit`` of one live
# function with the same options, kept while the function lives.
_traces_of: dict = {}


def _share_traces(jitted):
  """Make ``jitted`` use the signature cache of earlier ``jit``s of the same function with
  the same options, as JAX's tracing cache is keyed by the function: a library that calls
  ``jit(f)`` afresh each time (numpyro's ``fori_collect``) traces ``f`` once."""
  fun = jitted.fun
  options = (jitted._static_argnums, jitted._static_argnames, jitted._donate_argnums,
             jitted._donate_argnames, jitted._keep_unused, jitted._inline,
             jitted._policy, jitted._placement)
  try:
    hash(options)
    key = id(fun)
    if key not in _traces_of:
      # (the callback drops the entry when ``fun`` dies, before its id can be reused; it
      # holds the table itself, since interpreter shutdown sets module globals to None
      # before the functions that the cached traces hold die)
      _traces_of[key] = (weakref.ref(fun, lambda _, k=key, traces=_traces_of:
                                     traces.pop(k, None)), {})
  except TypeError:   # an unhashable option or a function without weak references
    return
  shared = _traces_of[key][1].setdefault(
      options, (jitted._cache, jitted._order, jitted._lock))
  jitted._cache, jitted._order, jitted._lock = shared


# Filled by sharding_jit (``ShardedJitted``), which sits beside jit and imports it.
sharded_jit: list = []


def split_over_devices(leaves) -> bool:
  """Whether an argument is an Array (or an extended array's data) laid out over several
  devices."""
  for x in leaves:
    if type(x) is not Array:
      x = getattr(x, "_physical", None)   # (a key array is where its data is)
      if type(x) is not Array:
        continue
    if (placed := x._placed) is not None and len(placed.sharding._device_list) > 1:
      return True
  return False


def constrains_over_devices(jaxpr) -> bool:
  """Whether ``jaxpr`` (or one nested in it) asks for a layout over several devices (a
  sharding constraint, or a result asked to be split: iota's ``sharding``, dot_general's
  ``out_sharding``); none can before a mesh of several devices was made."""
  return mesh_context.several_devices and _constrains_over_devices(jaxpr)


def staged_layouts(closed, leaves, given_in=None, given_out=None):
  """(per argument leaf, per result) the device memory layouts a program is compiled
  for, canonical (None: the default), or None where all are the default: those given
  (``Format``s in a jit's shardings), else an argument's own (a ShapeDtypeStruct's
  ``Format``) and the layout of a constraint computing a result."""
  n_in, n_out = len(closed.in_avals), len(closed.out_avals)
  given_in = given_in or [None] * n_in
  given_out = given_out or [None] * n_out
  device = backends.default_device()
  canonical = lambda l, a: relayout.canonical(l, device, a.shape, a.dtype)
  in_l = [canonical(g if g is not None else getattr(x, "_layout", None), a)
          for g, x, a in zip(given_in, leaves, closed.in_avals)]
  in_l = [None if isinstance(l, layout_mod.AutoLayoutSingleton) else l for l in in_l]
  out_l = [canonical(g if g is not None else c, a) for g, c, a in
           zip(given_out, constrained_results(closed.jaxpr), closed.out_avals)]
  return None if not any(l is not None for l in in_l + out_l) else (in_l, out_l)


def lays_out_results(jaxpr) -> bool:
  """Whether a result of ``jaxpr`` is computed by a layout constraint, and so keeps its
  device memory layout (``with_layout_constraint``), as in JAX."""
  return any(l is not None for l in constrained_results(jaxpr))


def _constrains_over_devices(jaxpr) -> bool:
  for eqn in jaxpr.eqns:
    params = eqn.params
    sharding = params.get("sharding") or params.get("out_sharding")
    if (sharding is not None and not getattr(sharding, "_is_abstract", True)
        and sharding.mesh.size > 1):
      return True
    if any(_constrains_over_devices(j) for j in core.subjaxprs(eqn)):
      return True
  return False


# ClosedJaxpr -> the jitted function that runs it when its ``jit`` equation is bound
# eagerly (``_eager_call``)
_eager_calls: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _eager_call(closed, name, values):
  """Run a ``jit`` equation bound outside any trace (``vmap(jit(f))(x)`` eagerly) as a
  jitted function of its jaxpr, so its calls get the tier policy's XLA handoff as direct
  calls do (JAX compiles such a call); tier 0 alone ran them, diffrax's batched
  ``VirtualBrownianTree.evaluate`` 2.5x slower than JAX's. None (tier 0 runs it) for
  operands that are not plain arrays of the jaxpr's types (the data of typed keys) or
  when a trace is current."""
  avals = closed.in_avals
  if core._context.trace is not core.eval_trace or any(
      not isinstance(v, np.ndarray | np.generic) or v.dtype != a.dtype
      for v, a in zip(values, avals)):
    return None
  fn = _eager_calls.get(closed)
  if fn is None:
    jaxpr, consts = closed.jaxpr, closed.consts   # (not ``closed``: the key stays weak)

    def call(*args):
      return core.eval_jaxpr(jaxpr, consts, *args)
    call.__name__ = call.__qualname__ = name
    fn = PjitFunction(call, None, None, None, None, False, False, None)
    fn._target = None   # the host's tiers: the equation runs where its operands are
    _eager_calls[closed] = fn
  outs = fn(*[Array(v, a.weak_type) for v, a in zip(values, avals)])
  return [o._value for o in outs]


control_flow_impls.eager_calls.append(_eager_call)


def clear_caches():
  """Empty the caches of every jitted function."""
  for f in tiers.all_jitted():
    f.clear_cache()
  codegen.clear_cache()
  tiers.cancel_pending()

