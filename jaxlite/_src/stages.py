"""Ahead-of-time stages, as ``jax.stages``: Traced -> Lowered -> Compiled."""
from __future__ import annotations

import numpy as np

from jaxlite._src import arguments
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array, check_donated_once, delete_donated, from_device
from jaxlite._src.core.core import ShapeDtypeStruct


class Traced:
  """A function traced for one signature: its jaxpr and output shapes."""

  def __init__(self, jitted, entry, arg_names):
    self._jitted = jitted
    self._entry = entry
    self._arg_names = arg_names

  @property
  def jaxpr(self):
    return self._entry.jaxpr

  @property
  def out_info(self):
    shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
              for a in self._entry.jaxpr.out_avals]
    return tree.tree_unflatten(self._entry.traced_out_tree, shapes)

  @property
  def in_tree(self):
    """The tree of ``(args, kwargs)``, the dynamic ones."""
    return self._entry.key[0]

  @property
  def out_tree(self):
    return self._entry.traced_out_tree

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


class Lowered:
  """A traced function lowered for a backend; ``as_text()`` shows the program."""

  def __init__(self, traced: Traced):
    self._traced = traced

  # what the traced stage knows of the signature, as JAX's Lowered gives it too
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
      return xla.lower(optimized, jitted._name, entry.donation)
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

    jaxlite compiles with options of its own (its tiers, XLA's defaults), so it takes no
    XLA compiler options nor device assignment: a non-empty one is an error rather than
    silently left out."""
    if compiler_options or device_assignment is not None:
      raise NotImplementedError(
          "Lowered.compile(compiler_options=..., device_assignment=...): jaxlite compiles "
          "with its own options and the signature's device; call compile() without them.")
    return Compiled(self._traced)

  def cost_analysis(self) -> dict:
    """XLA's cost analysis of the program (``flops``, ``bytes accessed``, ...). JAX
    analyses the program before XLA optimizes it; jaxlite has no HLO of its own and
    reports the compiled program's: the same ``flops``, fewer bytes where XLA fused."""
    return self.compile().cost_analysis()


class Compiled:
  """An executable for one signature; calling it with another signature is an error."""

  def __init__(self, traced: Traced):
    from jaxlite._src import tiers
    self._traced = traced
    self._entry = traced._entry
    jitted = traced._jitted
    run = self._entry.executable(jitted._name, jitted._policy or tiers.default_policy())
    # a tier race in progress takes argument leaves: a compiled call runs tier 0 meanwhile
    self._run = run.tiers["numpy"][0] if isinstance(run, tiers.Race) else run

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
    if jitted._static_argnums or jitted._static_argnames:
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
    donate = self._entry.donate
    if donate is not None:
      check_donated_once(leaves, donate)
    run = self._run
    if hasattr(run, "execute_device"):   # XLA: arguments and outputs stay on its device
      outs = run.execute_device([arguments.leaf_device_value(x, run.client) for x in leaves])
      outs = [from_device(o, w) for o, w in zip(outs, self._entry.out_weak)]
    else:
      outs = run(*map(arguments.leaf_value, leaves))
      outs = [Array(np.asarray(o), w) for o, w in zip(outs, self._entry.out_weak)]
    if donate is not None:   # deleted as a jitted call deletes them
      delete_donated(leaves, donate)
    return tree.tree_unflatten(self._entry.out_tree, outs)


Wrapped = None  # set by jaxlite.stages to the jit wrapper class
