"""Ahead-of-time stages, as ``jax.stages``: Traced -> Lowered -> Compiled."""
from __future__ import annotations

import dataclasses
from typing import Any, Union

import numpy as np

from jaxlite._src import arguments
from jaxlite._src import donation
from jaxlite._src import relayout
from jaxlite._src.base import layout
from jaxlite._src.base import tree
from jaxlite._src.core import core
from jaxlite._src.core.array import Array, check_donated_once, delete_donated, from_device
from jaxlite._src.core.core import ShapeDtypeStruct

# The options a compile takes by name (``lower(...).compile(compiler_options)``).
CompilerOptions = dict[str, Union[str, bool]]


@dataclasses.dataclass(frozen=True)
class ArgInfo:
  """One argument of a lowered function: its abstract value and whether it is donated
  (``jax.stages.ArgInfo``)."""
  _aval: Any
  donated: bool

  @property
  def shape(self):
    if not hasattr(self._aval, "shape"):
      raise TypeError(f"No shape attribute with aval of type {type(self._aval)}")
    return self._aval.shape

  @property
  def dtype(self):
    if not hasattr(self._aval, "dtype"):
      raise TypeError(f"No dtype attribute with aval of type {type(self._aval)}")
    return self._aval.dtype


class Stage:
  """What every stage knows of its signature (``jax.stages.Stage``), from ``args_info``:
  the tree of ``(args, kwargs)`` (the dynamic ones), their avals and which are donated."""

  @property
  def in_tree(self):
    """The tree structure of ``(args, kwargs)``, the dynamic ones."""
    return tree.tree_structure(self.args_info)

  @property
  def in_avals(self):
    """The avals of ``(args, kwargs)``, as a tree."""
    return tree.tree_map(lambda info: info._aval, self.args_info)

  @property
  def donate_argnums(self):
    """The indices of the donated argument leaves (``args`` then ``kwargs``, flattened)."""
    return tuple(i for i, info in enumerate(tree.tree_leaves(self.args_info))
                 if info.donated)


class Traced(Stage):
  """A function traced for one signature: its jaxpr and output shapes."""

  def __init__(self, jitted, entry, arg_names, donated=None, layouts=None, sharded=None):
    self._jitted = jitted
    self._entry = entry
    self._arg_names = arg_names
    self._donated = donated   # per argument leaf, whether donated (None: none is)
    # (per argument leaf, per result) the device memory layouts compiled for, canonical
    # (None: the default); and the jit with shardings or layouts that calls run through
    self._layouts = layouts
    self._sharded = sharded

  @property
  def jaxpr(self):
    return self._entry.jaxpr

  @property
  def fun_name(self):
    return self._jitted._name

  @property
  def args_info(self):
    """``(args, kwargs)`` with an ``ArgInfo`` (aval, donated) for each array leaf."""
    sigs = self._entry.key[1]
    donated = self._donated or [False] * len(sigs)
    return tree.tree_unflatten(self._entry.key[0], [
        ArgInfo(arguments.signature_aval(s), bool(d)) for s, d in zip(sigs, donated)])

  @property
  def out_avals(self):
    out_tree = self.out_tree
    return tree.tree_unflatten(out_tree,
                               self._entry.jaxpr.out_avals[:out_tree.num_leaves])

  @property
  def out_info(self):
    out_tree = self._entry.traced_out_tree
    if self._entry.refs is not None:   # (not the written refs' values that follow)
      out_tree = out_tree.children()[0]
    shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type,
                               sharding=core.typed_sharding(a))
              for a in self._entry.jaxpr.out_avals[:out_tree.num_leaves]]
    return tree.tree_unflatten(out_tree, shapes)

  @property
  def in_tree(self):
    """The tree of ``(args, kwargs)``, the dynamic ones."""
    return self._entry.key[0]

  @property
  def out_tree(self):
    out_tree = self._entry.traced_out_tree
    return out_tree.children()[0] if self._entry.refs is not None else out_tree

  def lower(self):
    return Lowered(self)


class LoweredModule:
  """What ``Lowered.compiler_ir()`` returns: the module, printed as StableHLO text."""

  def __init__(self, text: str):
    self._text = text

  def __str__(self):
    return self._text

  def __repr__(self):
    return f"<LoweredModule: {self._text.splitlines()[0] if self._text else ''}>"


class Lowered(Stage):
  """A traced function lowered for a backend; ``as_text()`` shows the program."""

  def __init__(self, traced: Traced):
    self._traced = traced

  # what the traced stage knows of the signature, as JAX's Lowered gives it too
  args_info = property(lambda self: self._traced.args_info)
  out_info = property(lambda self: self._traced.out_info)
  in_tree = property(lambda self: self._traced.in_tree)
  out_tree = property(lambda self: self._traced.out_tree)

  def as_text(self, dialect=None) -> str:
    """The lowered program: StableHLO (``dialect="stablehlo"``, the default when the XLA
    tier is available and not pinned off) or tier 0's Python source (``"numpy"``)."""
    from jaxlite._src import passes, tiers
    from jaxlite._src.backends.numpy import codegen
    jitted, entry = self._traced._jitted, self._traced._entry
    policy = jitted._policy or tiers.default_policy()
    if dialect is None:
      dialect = "stablehlo" if policy != "numpy" and tiers.xla_available() else "numpy"
    optimized = entry.optimized or passes.optimize(entry.jaxpr)
    if dialect in ("stablehlo", "mhlo"):
      from jaxlite._src.backends import xla
      in_l, out_l = self._traced._layouts or (None, None)
      return xla.lower(optimized, jitted._name, entry.donation, arg_layouts=in_l,
                       out_layouts=out_l)
    if dialect in ("numpy", "python"):
      return entry.source or codegen.compile_jaxpr(optimized, jitted._name)[1]
    if dialect == "hlo":
      raise ValueError("dialect='hlo': jaxlite lowers to StableHLO, which XLA's CPU and GPU "
                       "plugins compile directly; it has no HLO form of the program. Use "
                       "as_text() or compiler_ir('stablehlo').")
    raise ValueError(f"unknown dialect: {dialect}. Use 'stablehlo' or 'numpy'.")

  def compiler_ir(self, dialect=None):
    """The lowered module as an object whose ``str`` is its StableHLO text (JAX returns an
    MLIR module; ``dialect`` 'stablehlo', the default, or 'mhlo')."""
    dialect = "stablehlo" if dialect is None else dialect
    if dialect not in ("stablehlo", "mhlo", "hlo"):   # as_text refuses 'hlo', saying why
      raise ValueError(f"unknown dialect: {dialect}")
    return LoweredModule(self.as_text(dialect))

  def compile(self, compiler_options=None, *, device_assignment=None):
    """The executable of this signature (``jax.stages.Lowered.compile``).

    Parameters
    ----------
    compiler_options : dict, optional
      XLA options by name (``{"xla_cpu_enable_fast_math": True}``), str, bool, int or
      float values. Where the signature runs on XLA (the ``xla`` and ``auto`` policies
      with a plugin, or a device), the program is compiled with XLA with them, and an
      option XLA does not know raises ``JaxRuntimeError`` as in JAX; under the
      ``numpy`` policy tier 0 runs it and XLA's options do not apply.
    device_assignment : not supported
      jaxlite compiles for the signature's device; pass ``jax.device_put`` arguments to
      choose it.
    """
    if device_assignment is not None:
      raise NotImplementedError(
          "Lowered.compile(device_assignment=...): jaxlite compiles for the device its "
          "arguments are on; commit them with jax.device_put(x, device) instead.")
    return Compiled(self._traced, compiler_options or None)

  def cost_analysis(self) -> dict:
    """XLA's cost analysis of the program (``flops``, ``bytes accessed``, ...). JAX
    analyses the program before XLA optimizes it; jaxlite has no HLO of its own and
    reports the compiled program's: the same ``flops``, fewer bytes where XLA fused."""
    return self.compile().cost_analysis()


class Compiled(Stage):
  """An executable for one signature; calling it with another signature is an error."""

  def __init__(self, traced: Traced, compiler_options=None):
    from jaxlite._src import tiers
    self._traced = traced
    self._entry = traced._entry
    jitted = traced._jitted
    policy = jitted._policy or tiers.default_policy()
    run = self._entry.executable(jitted._name, policy)
    if compiler_options and (self._entry.key[6] is not None or (
        policy != "numpy" and tiers.xla_available())):
      # an executable of its own: the signature's other calls keep XLA's defaults
      run = self._entry.compile_xla(jitted._name, compiler_options)
    # a tier race in progress takes argument leaves: a compiled call runs tier 0 meanwhile
    self._run = run.tiers["numpy"][0] if isinstance(run, tiers.Race) else run

  # what the traced stage knows of the signature, as JAX's Compiled gives it too
  args_info = property(lambda self: self._traced.args_info)
  in_tree = property(lambda self: self._traced.in_tree)
  out_tree = property(lambda self: self._traced.out_tree)

  @property
  def out_info(self):
    """The outputs' ``ShapeDtypeStruct``s, each with the sharding it is computed to."""
    device = self._device()
    return tree.tree_map(lambda s: ShapeDtypeStruct(
        s.shape, s.dtype, weak_type=s.weak_type,
        sharding=s.sharding or _single_device(device)),
        self._traced.out_info)

  def _device(self):
    """The device this executable runs on."""
    from jaxlite._src import backends
    run = self._run
    devices = getattr(getattr(run, "client", None), "devices", None)
    return devices()[0] if callable(devices) else backends.default_device()

  @property
  def input_shardings(self):
    """Per argument leaf (as a tree of ``(args, kwargs)``), the sharding it is read with."""
    sharding = _single_device(self._device())
    return tree.tree_map(lambda _: sharding, self.args_info)

  @property
  def output_shardings(self):
    """Per output leaf, the sharding it is computed to."""
    return tree.tree_map(lambda s: s.sharding, self.out_info)

  @property
  def input_formats(self):
    """Per argument leaf, its ``Format``: the device memory layout the program reads it
    in, and its sharding."""
    infos, in_tree = tree.tree_flatten(self.args_info)
    shardings = tree.tree_leaves(self.input_shardings)
    in_l = (self._traced._layouts or ([None] * len(infos), None))[0]
    return tree.tree_unflatten(in_tree, [
        layout.Format(_reported(l, info._aval, s), s)
        for info, s, l in zip(infos, shardings, in_l)])

  @property
  def output_formats(self):
    """Per output leaf, its ``Format``: the device memory layout it is computed to, and
    its sharding."""
    infos, out_tree = tree.tree_flatten(self.out_info)
    out_l = (self._traced._layouts or (None, [None] * len(infos)))[1]
    return tree.tree_unflatten(out_tree, [
        layout.Format(_reported(l, s, s.sharding), s.sharding)
        for s, l in zip(infos, out_l)])

  def memory_analysis(self):
    """XLA's memory analysis of the program where XLA runs it, else None (as JAX returns
    where it is unavailable)."""
    executable = getattr(getattr(self._run, "executable", None), "loaded", None)
    analysis = getattr(executable, "memory_analysis", None)
    return analysis() if analysis is not None else None

  def runtime_executable(self):
    """The object that runs this executable (for debugging; no stable form)."""
    return self._run

  def call(self, *args, **kwargs):
    """Run the executable (as calling it does)."""
    return self(*args, **kwargs)

  def as_text(self) -> str:
    return self._entry.xla_text or self._entry.source

  def cost_analysis(self) -> dict:
    """XLA's cost analysis of this signature's program, ``{"flops": ..., "bytes
    accessed": ..., ...}`` as in JAX; the program is compiled with XLA for it (from the
    persistent cache when there) if the signature runs on tier 0."""
    dispatch = self._entry.compile_xla(self._traced._jitted._name)
    return dispatch.executable.loaded.cost_analysis()

  def __call__(self, *args, **kwargs):
    jitted = self._traced._jitted
    static = jitted._static_argnums or jitted._static_argnames
    if static:
      args, kwargs, _ = jitted._split_static(args, kwargs)
    leaves, in_tree = tree.tree_flatten((args, kwargs))
    expected_tree, expected_sigs = self._entry.key[0], self._entry.key[1]
    if in_tree != expected_tree:
      raise TypeError("Function compiled with input pytree does not match the input pytree "
                      f"it was called with: compiled for {expected_tree}, called with "
                      f"{in_tree}.")
    sigs = tuple(map(arguments.leaf_signature, leaves))
    mismatches = [
        f"Argument '{name}' compiled with "
        f"{arguments.signature_aval(a).str_short()} and called with "
        f"{arguments.signature_aval(b).str_short() if b is not None else type(x)}"
        for name, a, b, x in zip(self._traced._arg_names, expected_sigs, sigs, leaves)
        if b is None or arguments.signature_aval(a) != arguments.signature_aval(b)]
    if mismatches:
      raise TypeError("Argument types differ from the types for which this computation was "
                      "compiled. The mismatches are:\n" + "\n".join(mismatches))
    sharded = self._traced._sharded
    if sharded is not None and not static:   # (laid out as its jit asks)
      return sharded(*args, **kwargs)
    donate = self._entry.donate
    if donate is not None:
      check_donated_once(leaves, donate)
    plan, arg_leaves = self._entry.refs, leaves
    if plan is not None:   # the refs' values go in, and the written ones come out after
      leaves = plan.inputs(leaves, lambda: self._traced._arg_names)
    run = self._run
    if hasattr(run, "execute_device"):   # XLA: arguments and outputs stay on its device
      outs = run.execute_device([arguments.leaf_device_value(x, run.client) for x in leaves])
      outs = [from_device(o, w) for o, w in zip(outs, self._entry.out_weak)]
    else:
      outs = run(*map(arguments.leaf_value, leaves))
      if donate is not None:
        outs = donation.reuse_host_buffers(leaves, self._entry.donation, outs)
      outs = [Array(np.asarray(o), w) for o, w in zip(outs, self._entry.out_weak)]
    if donate is not None:   # deleted as a jitted call deletes them
      delete_donated(leaves, donate)
    out = tree.tree_unflatten(self._entry.out_tree, outs)
    if plan is None:
      return out
    plan.write_back(arg_leaves, out[1])
    return out[0]


def _single_device(device):
  from jaxlite._src.sharding import SingleDeviceSharding
  return SingleDeviceSharding(device)


def _reported(canonical, aval, sharding):
  """A canonical layout (None: the device's default; ``Layout.AUTO``: XLA's choice, the
  default for the layouts jaxlite compiles) for a value of ``aval`` on ``sharding`` as
  compiled formats give it: the default with the device's tiles; another order with
  the tiles the device gave a buffer in that order, untiled before one was made."""
  device, shape = sharding._device_list[0], sharding.shard_shape(aval.shape)
  if not isinstance(canonical, layout.Layout):   # the default, or XLA's choice of it
    return layout.Layout(*relayout.default_layout(device, shape, aval.dtype))
  order = canonical.major_to_minor
  return layout.Layout(order, relayout.tiles_seen(device, shape, aval.dtype, order))


class MeshLowered(Lowered):
  """A program over a mesh of devices (``pmap``) lowered for one signature.

  ``resolve(args, kwargs)`` gives the ``sharding_map.MeshProgram`` serving a call and its
  argument leaves; the signature is that of ``args`` and ``kwargs``."""

  def __init__(self, resolve, args, kwargs):
    self._resolve = resolve
    self._program, leaves = resolve(args, kwargs)
    self._entry, leaves = self._program.signature(tuple(leaves))
    self._in_avals = [core.get_aval(x) for x in leaves]

  def as_text(self, dialect=None) -> str:
    """The lowered program: StableHLO, one replica per device (``dialect="stablehlo"``,
    the default where XLA serves it) or, where tier 0 does, the per-device jaxpr
    (``"numpy"``)."""
    return self._program.as_text(self._entry, dialect)

  def compile(self, compiler_options=None, *, device_assignment=None):
    """The executable of this signature; ``compiler_options`` as ``Lowered.compile``."""
    if device_assignment is not None:
      raise NotImplementedError(
          "Lowered.compile(device_assignment=...): a mapped program runs on the devices "
          "its function was given (pmap's devices=...); choose them there.")
    return MeshCompiled(self, compiler_options or None)


class MeshCompiled(Compiled):
  """The executable of a ``MeshLowered``: calling it with another signature is an
  error."""

  def __init__(self, lowered: MeshLowered, compiler_options=None):
    from jaxlite._src import donation
    program, entry = lowered._program, lowered._entry
    self._lowered, self._program, self._entry = lowered, program, entry
    if program._use_xla():
      if compiler_options:   # an executable of its own: other calls keep XLA's defaults
        aliases = (donation.mesh_plan(program, entry) if program.donated is not None
                   else None)
        self._entry = entry[:4] + [program.compile_xla(entry, aliases, compiler_options)]

  def as_text(self) -> str:
    return self._lowered.as_text()

  def cost_analysis(self) -> dict:
    """XLA's cost analysis of the per-device program (``flops``, ...)."""
    entry = self._entry
    exe = entry[4] or self._program.compile_xla(entry)
    return exe.cost_analysis()

  def __call__(self, *args, **kwargs):
    program, leaves = self._lowered._resolve(args, kwargs)
    entry, leaves = program.signature(tuple(leaves))
    if program is not self._program or entry[0] is not self._entry[0]:
      avals = [core.get_aval(x) for x in leaves]
      mismatches = [f"Argument {i} compiled with {a.str_short()} and called with "
                    f"{b.str_short()}" for i, (a, b) in
                    enumerate(zip(self._lowered._in_avals, avals)) if a != b]
      if len(avals) != len(self._lowered._in_avals) or not mismatches:
        mismatches = [f"compiled for {len(self._lowered._in_avals)} argument leaves of "
                      "another pytree or static arguments"]
      raise TypeError("Argument types differ from the types for which this computation "
                      "was compiled. The mismatches are:\n" + "\n".join(mismatches))
    return program.run(self._entry, leaves)


Wrapped = None  # set by jaxlite.stages to the jit wrapper class
