"""``jax.extend.ifrt_programs``: descriptions of programs for an IFRT client (``ifrt_programs``).

JAX builds these for clients that compile more than XLA's HLO (Pathways' plugin and
colocated Python programs). jaxlite drives XLA through PJRT and compiles HLO from
``jit`` itself, so its clients compile none of these; the descriptions are what libraries
that can target Pathways (orbax) build before they ask a client to compile them.
"""
import types as _types

__all__ = ["ifrt_programs"]


class Program:
  """A program for an IFRT client: its kind (``"hlo"``, ``"plugin"`` or
  ``"colocated_python"``) and what describes it."""

  def __init__(self, kind, **fields):
    self.kind = kind
    self.__dict__.update(fields)

  def __repr__(self):
    return f"ifrt_programs.Program(kind={self.kind!r})"


class CompileOptions:
  """How an IFRT client compiles a ``Program`` of the matching kind."""

  def __init__(self, kind, **fields):
    self.kind = kind
    self.__dict__.update(fields)

  def __repr__(self):
    return f"ifrt_programs.CompileOptions(kind={self.kind!r})"


def _bytes(data) -> bytes:
  return data.encode() if isinstance(data, str) else bytes(data)


def make_hlo_program(mlir_module):
  """An XLA program from its StableHLO module (text or bytecode)."""
  return Program("hlo", mlir_module=_bytes(mlir_module))


def make_plugin_program(data):
  """A program that the client's plugin interprets (``data``, as the plugin defines)."""
  return Program("plugin", data=_bytes(data))


def make_colocated_python_program(name, picked_function, devices, input_avals,
                                  output_avals):
  """A pickled Python function to run on the CPUs colocated with ``devices``."""
  return Program("colocated_python", name=name, pickled_function=bytes(picked_function),
                 devices=tuple(devices), input_avals=list(input_avals),
                 output_avals=list(output_avals))


def make_xla_compile_options(options, executable_devices, host_callbacks=()):
  """Compile options for an HLO program: XLA's ``options`` on ``executable_devices``."""
  return CompileOptions("hlo", options=options, executable_devices=tuple(executable_devices),
                        host_callbacks=tuple(host_callbacks))


def make_plugin_compile_options():
  return CompileOptions("plugin")


def make_colocated_python_compile_options():
  return CompileOptions("colocated_python")


# (jaxlib's module of these names, which JAX re-exports under this one)
ifrt_programs = _types.SimpleNamespace(
    Program=Program, CompileOptions=CompileOptions, make_hlo_program=make_hlo_program,
    make_plugin_program=make_plugin_program,
    make_colocated_python_program=make_colocated_python_program,
    make_xla_compile_options=make_xla_compile_options,
    make_plugin_compile_options=make_plugin_compile_options,
    make_colocated_python_compile_options=make_colocated_python_compile_options)
