"""The user-facing entry points that are not transformations of their own:
``make_jaxpr``, ``eval_shape``, ``device_put``, ``device_get``, ``block_until_ready``.
"""
from __future__ import annotations

import contextlib
import enum
import functools
import sys
import types

import numpy as np

from jaxlite._src.base import api_util
from jaxlite._src.base import dtypes
from jaxlite._src import backends
from jaxlite._src.core import core
from jaxlite._src.core import extended
from jaxlite._src.core.state import types as ref_types
from jaxlite._src.base import traceback_util
from jaxlite._src.base import transfer_guard
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import ShapeDtypeStruct, Tracer
from jaxlite._src.libraries.numpy.util import as_operand
from jaxlite._src.transforms import ad, batching, staging


def _abstractify(x):
  """The abstract value of an argument leaf; a clear error for non-array leaves."""
  if isinstance(x, core.ShapedArray):   # tracing entry points take types as JAX's do
    return x
  if isinstance(x, (Array, Tracer, ShapeDtypeStruct)) or hasattr(x, "aval"):
    return x.aval
  try:
    return core.get_aval(x)
  except TypeError:
    raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type. Pass arrays, "
                    "NumPy arrays or Python scalars, or mark the argument static.") from None


def _input_avals(x, stateful):
  """The types of the jaxpr inputs an argument leaf becomes: a ref's value's, or the
  arrays of a high-level value (of a mutable one's state)."""
  if not stateful:
    return [_abstractify(x)]
  if type(x) is ref_types.Ref:
    return [x._aval.inner_aval]
  if not ref_types.is_stateful(x):   # an immutable high-level value: its lowering's
    return list(core.get_aval(x).lo_ty())
  return [core.get_aval(v) for v in ref_types.current_value(x).vals]


def _check_outputs(out_leaves, info):
  for x in out_leaves:
    if not isinstance(x, (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)):
      raise TypeError(f"function {info.func_src_info} traced for {info.traced_for} returned "
                      f"a value of type {type(x)}, which is not a valid JAX type. Return "
                      "arrays (or pytrees of arrays) only.")


def trace_to_jaxpr(fun, traced_for, args, kwargs, static_argnums=()):
  """Trace ``fun`` on the abstract values of ``args``; returns (ClosedJaxpr, out_tree)."""
  static_argnums = api_util.normalize_argnums(static_argnums, len(args), "the function",
                                              "static_argnums") if static_argnums else ()
  info = api_util.debug_info(traced_for, fun, args, kwargs, static_argnums)
  if static_argnums:
    static = {i: args[i] for i in static_argnums}
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static)

    def fun_of_dynamic(*dyn, **kw):
      it = iter(dyn)
      full = [static[i] if i in static else next(it) for i in range(len(args))]
      return fun(*full, **kw)
    target = fun_of_dynamic
  else:
    target, dyn_args = fun, args
  leaves, in_tree = tree.tree_flatten((dyn_args, kwargs))
  ref_positions = ref_types.carried_in(leaves)
  # a ref argument is an input holding its value: the jaxpr is the discharged form of
  # JAX's, whose outputs end with the values of the refs the function wrote
  # (a mutable high-level value is the arrays of its state)
  hi_args = {i: leaves[i] for i in ref_positions if type(leaves[i]) is not ref_types.Ref}
  in_avals = [a for i, x in enumerate(leaves) for a in _input_avals(x, i in ref_positions)]
  flat_fun, out_tree = api_util.flatten_fun(target, in_tree)
  flat_fun, _ = ref_types.with_refs(
      flat_fun, ref_positions, lambda: f"{info.func_src_info} traced for {traced_for}",
      hi_args)

  def checked(*xs):
    outs = flat_fun(*xs)
    _check_outputs(outs, info)
    return outs

  closed = staging.trace_to_jaxpr(checked, in_avals, info)
  return closed, out_tree()


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False):
  """A function that returns the jaxpr ``fun`` traces to for the given arguments.

  Parameters
  ----------
  fun : callable
    The function to trace. Its arguments and outputs may be pytrees of arrays.
  static_argnums : int or tuple of int
    Positional arguments treated as Python constants (traced into the jaxpr).
  return_shape : bool
    If True, also return a pytree of ``ShapeDtypeStruct`` for the outputs.

  Returns
  -------
  callable
    ``make_jaxpr(fun)(*args)`` gives a ``ClosedJaxpr`` (and the output shapes if
    ``return_shape``).

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> print(jax.make_jaxpr(jnp.sin)(1.0))
  { lambda ; a:f32[]. let b:f32[] = sin a in (b,) }
  """
  if isinstance(static_argnums, int):
    static_argnums = (static_argnums,)

  @traceback_util.api_boundary
  @api_util.wraps(fun)
  def make_jaxpr_f(*args, **kwargs):
    with contextlib.ExitStack() as names:  # axis_env binds names for collectives
      for name, size in axis_env or ():
        names.enter_context(batching.extend_axis_env(name, size))
      closed, out_tree = trace_to_jaxpr(fun, "make_jaxpr", args, kwargs, static_argnums)
    if return_shape:
      shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type,
                                 sharding=core.typed_sharding(a))
                for a in closed.out_avals[:out_tree.num_leaves]]   # (not the refs')
      return closed, tree.tree_unflatten(out_tree, shapes)
    return closed

  make_jaxpr_f.__name__ = f"make_jaxpr({api_util.fun_name(fun)})"
  return make_jaxpr_f


@traceback_util.api_boundary
def eval_shape(fun, *args, **kwargs):
  """The shapes and dtypes of ``fun(*args, **kwargs)`` without computing anything.

  Returns a pytree of ``ShapeDtypeStruct`` matching the output.
  """
  def fun_of_values(*a, **k):
    # a ShapeDtypeStruct among the outputs is a value of its type, as JAX's get_aval
    # makes it (libraries compare structures this way: eval_shape(lambda: structs))
    return tree.tree_map(lambda x: ad.zeros_like_aval(x.aval)
                         if isinstance(x, ShapeDtypeStruct) else x, fun(*a, **k))
  functools.update_wrapper(fun_of_values, fun)
  closed, out_tree = trace_to_jaxpr(fun_of_values, "eval_shape", args, kwargs)
  shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type,
                             sharding=core.typed_sharding(a))
            for a in closed.out_avals[:out_tree.num_leaves]]   # (not the refs' values)
  return tree.tree_unflatten(out_tree, shapes)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
  """Put the leaves of pytree ``x`` on ``device`` as Arrays (copies NumPy inputs).

  Without ``device`` the leaves go to the default device, uncommitted: computations may
  move them. ``device`` may be a Device, which commits them to it, or a
  ``jax.sharding.Sharding`` (or a pytree of them matching ``x``): each leaf is then split
  into that sharding's shards, one per device. A ``PartitionSpec`` names axes of the mesh
  in context (``jax.set_mesh``). An explicit transfer for ``jax.transfer_guard``.
  """
  from jaxlite._src import sharding
  with transfer_guard.explicit():
    if device is None:
      target = core.eval_trace.device
      if target is None:
        return tree.tree_map(as_operand, x)
      return tree.tree_map(lambda leaf: target.adopt(as_operand(leaf)), x)
    place = lambda leaf, where: sharding.place(leaf, sharding.context_sharding(
        where, lambda: ValueError("Please set a mesh via `jax.set_mesh` if a "
                                  "PartitionSpec is passed to device_put")))
    if isinstance(device, (sharding.Sharding, backends.Device, sharding.PartitionSpec)):
      return tree.tree_map(lambda leaf: place(leaf, device), x)
    return tree.tree_map(place, x, device)


def _place_made(value, device):
  """A creation function's result on ``device`` (``jnp.zeros(..., device=d)``)."""
  from jaxlite._src import sharding
  if not isinstance(device, (backends.Device, sharding.Sharding)):
    raise TypeError(f"device must be a jax.Device or a jax.sharding.Sharding (such as "
                    f"jax.devices()[0]), got {device!r}.")
  return device_put(value, device)


core.device_placement.append(_place_made)


def device_get(x):
  """The leaves of pytree ``x`` as NumPy arrays (an explicit transfer for
  ``jax.transfer_guard``)."""
  with transfer_guard.explicit():
    # (a typed key array has no NumPy value: it stays as it is, as in JAX)
    return tree.tree_map(lambda v: np.asarray(v) if isinstance(v, Array)
                         and not isinstance(v, extended.ExtendedArray) else v, x)


def block_until_ready(x):
  """Wait until every array in pytree ``x`` is computed; returns ``x``."""
  if type(x) is Array:   # the common case, without a pytree walk
    return x.block_until_ready()
  for leaf in tree.tree_leaves(x):
    if isinstance(leaf, Array):
      leaf.block_until_ready()
  return x


# ----------------------------------------------------------------------------- more of `jax.*`

import platform  # noqa: E402

from jaxlite._src.base.config import config  # noqa: E402


@contextlib.contextmanager
def disable_jit(disable: bool = True):
  """Run jitted functions eagerly, op by op, inside the ``with`` block (for debugging)."""
  with config.override("jax_disable_jit", disable):
    yield


_NO_DEFAULT = object()


def _config_context(option, doc):
  """A context manager that sets config ``option`` inside its ``with`` block; called with
  no value it turns a boolean option on (as JAX's do) and asks for one otherwise."""
  @contextlib.contextmanager
  def context(new_val=_NO_DEFAULT):
    if new_val is _NO_DEFAULT:
      if not isinstance(config.read(option), bool):
        raise TypeError(f"Context manager for {option.removeprefix('jax_')} config option "
                        "requires an argument "
                        "representing the new value for the config option.")
      new_val = True
    with config.override(option, new_val):
      yield
  context.__doc__ = doc
  return context


enable_x64 = _config_context("jax_enable_x64",
                             "Enable (or disable) 64-bit types inside the ``with`` block.")
log_compiles = _config_context("jax_log_compiles",
                               "Log every compilation inside the ``with`` block.")
explain_cache_misses = _config_context(
    "jax_explain_cache_misses", "Report retraces as warnings inside the ``with`` block.")
numpy_dtype_promotion = _config_context(
    "jax_numpy_dtype_promotion", "Use ``'standard'`` or ``'strict'`` type promotion inside "
    "the ``with`` block.")
numpy_rank_promotion = _config_context(
    "jax_numpy_rank_promotion", "Set jax_numpy_rank_promotion ('allow', 'warn' or "
    "'raise') inside the ``with`` block.")
default_matmul_precision = _config_context(
    "jax_default_matmul_precision", "Set jax_default_matmul_precision inside the ``with`` "
    "block.")
default_device = _config_context(
    "jax_default_device", "Put uncommitted arrays and computations on this device (a Device "
    "or a platform name such as 'cpu') inside the ``with`` block.")
debug_nans = _config_context("jax_debug_nans",
                             "Set jax_debug_nans inside the ``with`` block.")
debug_infs = _config_context("jax_debug_infs",
                             "Set jax_debug_infs inside the ``with`` block.")
enable_checks = _config_context("jax_enable_checks",
                                "Set jax_enable_checks inside the ``with`` block.")
threefry_partitionable = _config_context(
    "jax_threefry_partitionable", "Set jax_threefry_partitionable inside the ``with`` block "
    "(off: random bits as JAX generated them before 0.5, in counter order).")
default_prng_impl = _config_context(
    "jax_default_prng_impl", "Set jax_default_prng_impl inside the ``with`` block.")
check_tracer_leaks = _config_context(
    "jax_check_tracer_leaks", "Set jax_check_tracer_leaks inside the ``with`` block "
    "(``jax.check_tracer_leaks``; ``jax.checking_leaks()`` is ``check_tracer_leaks(True)``).")

enable_custom_prng = _config_context(
    "jax_enable_custom_prng", "Set jax_enable_custom_prng inside the ``with`` block "
    "(on: jax.random.PRNGKey makes typed keys).")
legacy_prng_key = _config_context(
    "jax_legacy_prng_key", "Set jax_legacy_prng_key ('allow', 'warn' or 'error') inside "
    "the ``with`` block.")
debug_key_reuse = _config_context(
    "jax_debug_key_reuse", "Set jax_debug_key_reuse inside the ``with`` block (jaxlite "
    "accepts only False).")
softmax_custom_jvp = _config_context(
    "jax_softmax_custom_jvp", "Set jax_softmax_custom_jvp inside the ``with`` block.")
no_tracing = _config_context(
    "jax_no_tracing", "Raise RuntimeError inside the ``with`` block when a jitted function "
    "would be traced.")

allow_f16_reductions = _config_context(
    "jax_allow_f16_reductions", "Set jax_allow_f16_reductions inside the ``with`` block "
    "(False: reduce_sum of float16 or bfloat16 values raises ValueError).")
no_execution = _config_context(
    "jax_no_execution", "Set jax_no_execution inside the ``with`` block (True: calling a "
    "jitted function raises RuntimeError).")
array_garbage_collection_guard = _config_context(
    "jax_array_garbage_collection_guard", "Set jax_array_garbage_collection_guard ('allow', "
    "'log' or 'fatal') inside the ``with`` block.")
auto_pcast = _config_context("jax_auto_pcast", "Set jax_auto_pcast inside the ``with`` block.")
remove_size_one_mesh_axis_from_type = _config_context(
    "jax_remove_size_one_mesh_axis_from_type",
    "Set jax_remove_size_one_mesh_axis_from_type inside the ``with`` block.")
thread_guard = _config_context("jax_thread_guard",
                               "Set jax_thread_guard inside the ``with`` block.")
jax2tf_associative_scan_reductions = _config_context(
    "jax2tf_associative_scan_reductions",
    "Set jax2tf_associative_scan_reductions inside the ``with`` block.")


class MemorySpace(enum.Enum):
  """Where an array's memory lives (``jax.memory.Space``)."""
  Device = enum.auto()
  Host = enum.auto()
  Any = enum.auto()

  def __repr__(self):
    return f"MemorySpace.{self.name}"

  __str__ = __repr__


memory = types.SimpleNamespace(Space=MemorySpace)


@contextlib.contextmanager
def checking_leaks():
  """Turn jax_check_tracer_leaks on inside the ``with`` block."""
  with config.override("jax_check_tracer_leaks", True):
    yield


def ensure_compile_time_eval():
  """Evaluate the block's operations on values that are not tracers eagerly, even while
  tracing; operations on tracers are staged (``jax.ensure_compile_time_eval``)."""
  return staging.ensure_compile_time_eval()


def typeof(x):
  """The abstract value (``ShapedArray``) of ``x``."""
  return core.get_aval(x)


def effects_barrier():
  """Wait for every pending computation, so that the host callbacks (``debug.print``,
  ``debug.callback``) they make have run; tier 0 computes synchronously."""
  pjrt = sys.modules.get("jaxlite._src.backends.xla.pjrt")   # never loads a plugin
  if pjrt is not None:
    pjrt.wait_all()


def process_count(backend=None) -> int:
  return 1


def process_index(backend=None) -> int:
  return 0


def process_indices(backend=None) -> list:
  """The indices of this program's processes: ``[0]``, a single one."""
  return list(range(process_count(backend)))


host_count, host_id, host_ids = process_count, process_index, process_indices


def copy_to_host_async(x):
  """Start copying each array leaf of ``x`` to the host (its ``copy_to_host_async``);
  returns ``x``."""
  for leaf in tree.tree_leaves(x):
    start = getattr(leaf, "copy_to_host_async", None)
    if start is not None:
      start()
  return x


def live_arrays(platform=None):
  """The live (not deleted) Arrays on ``platform``'s devices (default: the default
  backend's), found by walking the objects the garbage collector tracks."""
  return backends.backend(platform).live_arrays()


def print_environment_info(return_string: bool = False):
  """Print versions of jaxlite, Python, NumPy and the XLA plugin."""
  import numpy
  from jaxlite._src.base.version import __version__
  from jaxlite._src import tiers
  lines = [f"jaxlite:  {__version__}", f"numpy:    {numpy.__version__}",
           f"python:   {sys.version.split()[0]}", f"platform: {platform.platform()}",
           f"xla tier: {'available' if tiers.xla_available() else 'not available'}"]
  text = "\n".join(lines)
  if return_string:
    return text
  print(text)


def named_call(fun, *, name=None):
  """``fun`` unchanged (the name would only label profiler traces)."""
  return fun


@contextlib.contextmanager
def named_scope(name: str):
  """A profiler scope: accepted and ignored."""
  if not isinstance(name, str):
    raise TypeError("named_scope name argument must be a string.")
  yield


def linear_transpose(fun, *primals, reduce_axes=()):
  """The transpose of the linear function ``fun`` at the shapes of ``primals``.

  Returns a function mapping output cotangents to a tuple of input cotangents.
  """
  leaves, in_tree = tree.tree_flatten(primals)
  avals = [_abstractify(x) for x in leaves]   # only their shapes and dtypes are used
  flat_fun, out_tree = api_util.flatten_fun(fun, in_tree, with_kwargs=False)
  closed = staging.trace_to_jaxpr(flat_fun, avals)
  out_tree = out_tree()

  def transposed(*cotangents):
    ct_leaves, ct_tree = tree.tree_flatten(cotangents[0] if len(cotangents) == 1
                                           else cotangents)
    if ct_tree != out_tree:
      raise TypeError(f"cotangent tree does not match function output, expected "
                      f"{out_tree} but got {ct_tree}")
    cts = ad.backward_pass(closed.jaxpr, closed.consts,
                           [ad.UndefinedPrimal(a) for a in avals],
                           [as_operand(c) for c in ct_leaves])
    return tree.tree_unflatten(in_tree, [ad.instantiate(c) if type(c) is ad.Zero else c
                                         for c, a in zip(cts, avals)])
  return transposed


def closure_convert(fun, *example_args):
  """``(converted, consts)``: ``fun`` with its closed-over arrays as explicit arguments
  (``converted(*args, *consts)``)."""
  leaves, in_tree = tree.tree_flatten(example_args)
  flat_fun, out_tree = api_util.flatten_fun(fun, in_tree, with_kwargs=False)
  closed = staging.trace_to_jaxpr(flat_fun, [_abstractify(x) for x in leaves])
  out_tree = out_tree()
  # as JAX, only the consts that may carry a tangent are hoisted; arrays stay closed over
  hoist = [_maybe_perturbed(c) for c in closed.consts]
  consts = [c for c, h in zip(closed.consts, hoist) if h]
  kept = [c for c, h in zip(closed.consts, hoist) if not h]

  def converted(*args):
    n = len(args) - len(consts)
    arg_leaves = tree.tree_leaves(args[:n])
    given, closure = iter(args[n:]), iter(kept)
    merged = [next(given) if h else next(closure) for h in hoist]
    outs = core.eval_jaxpr(closed.jaxpr, merged, *arg_leaves)
    return tree.tree_unflatten(out_tree, outs)
  return converted, consts


def _maybe_perturbed(x) -> bool:
  """Whether ``x`` may be a value with a tangent attached (JAX's heuristic): a tracer,
  unless a JVP tracer with a zero tangent over one that cannot be, or a staged value of a
  dtype without tangents (integers, booleans)."""
  if not isinstance(x, Tracer):
    return False
  if isinstance(x, ad.JVPTracer) and type(x.tangent) is ad.Zero:
    return _maybe_perturbed(x.primal)
  if isinstance(x, staging.JitTracer):
    return core.primal_dtype_to_tangent_dtype(x.aval.dtype) != dtypes.float0
  if isinstance(x, batching.BatchTracer):
    return _maybe_perturbed(x.val)
  return True


class _GradientRule:
  """The residuals of a ``custom_gradient`` function: its gradient rule, traced, with the
  arrays the rule closes over as the pytree's leaves."""

  def __init__(self, rule, consts, in_tree, out_tree):
    self.rule, self.consts, self.in_tree, self.out_tree = rule, consts, in_tree, out_tree


tree.register_pytree_node(
    _GradientRule, lambda r: (r.consts, (r.rule, r.in_tree, r.out_tree)),
    lambda aux, consts: _GradientRule(aux[0], list(consts), aux[1], aux[2]))


def custom_gradient(fun):
  """``fun(*args)`` returns ``(output, rule)``, where ``rule(cotangent)`` gives the
  cotangents of the arguments (one, or a tuple of one per argument): that rule is the
  derivative (``jax.custom_gradient``). Built on ``custom_vjp``: the rule is traced when
  the forward pass runs, so it may close over values computed there."""
  from jaxlite._src.lax.custom_derivatives import custom_vjp

  @custom_vjp
  def wrapped(*args):
    return fun(*args)[0]

  def fwd(*args):
    ans, rule = fun(*args)
    ans_leaves, out_tree = tree.tree_flatten((ans,))
    flat_rule, in_tree = api_util.flatten_fun(lambda *cts: rule(*cts), out_tree,
                                              with_kwargs=False)
    closed = staging.trace_to_jaxpr(
        flat_rule, [core.get_aval(as_operand(x)) for x in ans_leaves])
    return ans, _GradientRule(closed.jaxpr, list(closed.consts), in_tree, out_tree)

  def bwd(res, cts):
    ct_leaves, out_tree = tree.tree_flatten((cts,))
    if out_tree != res.out_tree:
      raise TypeError(f"{res.out_tree}\n!=\n{out_tree}")
    outs = core.eval_jaxpr(res.rule, res.consts, *ct_leaves)
    outs = tree.tree_unflatten(res.in_tree(), outs)
    return outs if isinstance(outs, tuple) else (outs,)

  wrapped.defvjp(fwd, bwd)
  return wrapped


def platform_dependent(*args, default=None, **per_platform):
  """Call the branch for the current default backend's platform (``'cpu'``, ``'cuda'``
  ...), else ``default``. Backends here are chosen at trace time, so this is a Python
  choice rather than JAX's staged ``cond``."""
  platform = backends.default_backend()
  names = {platform, {"gpu": "cuda", "cuda": "gpu"}.get(platform, platform)}
  if platform == "numpy":
    names.add("cpu")
  for name in names:
    if name in per_platform:
      return per_platform[name](*args)
  if default is None:
    raise NotImplementedError(f"platform_dependent: no branch for platform {platform!r} "
                              "and no default")
  return default(*args)
