"""Colocated Python functions and classes, run in this process (see the package's
docstring): ``colocated_cpu_devices``, ``colocated_python``, ``colocated_python_class``."""
from __future__ import annotations

import dataclasses
import functools
import threading
from typing import Any, Callable

import numpy as np

import jaxlite
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.sharding import Mesh

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]


def colocated_cpu_devices(devices_or_mesh):
  """The CPU devices colocated with ``devices_or_mesh``, in its order.

  Parameters
  ----------
  devices_or_mesh : sequence of Device or Mesh
    Devices, or a mesh of them.

  Returns
  -------
  list of Device or Mesh
    A CPU device stands for itself; the ``i``-th accelerator device of a process
    is paired with that process's ``i``-th CPU device (as JAX pairs them where the
    accelerator's client defines no CPU devices of its own). A mesh gives a mesh of
    the same shape, axis names and axis types.
  """
  if isinstance(devices_or_mesh, Mesh):
    mesh = devices_or_mesh
    flat = colocated_cpu_devices(tuple(mesh.devices.flat))
    return Mesh(np.array(flat, dtype=object).reshape(mesh.devices.shape), mesh.axis_names,
                axis_types=mesh.axis_types)
  cpus_by_process = {}
  for cpu in jaxlite.devices("cpu"):
    cpus_by_process.setdefault(cpu.process_index, []).append(cpu)
  taken, out = {}, []
  for device in devices_or_mesh:
    if device.platform == "cpu":
      out.append(device)
      continue
    index = taken[device.process_index] = taken.get(device.process_index, -1) + 1
    cpus = cpus_by_process.get(device.process_index, [])
    if index >= len(cpus):
      raise ValueError(f"Process {device.process_index} does not have enough local CPU "
                       f"devices: {len(cpus)} for the accelerator devices given. Set "
                       "jax_num_cpu_devices to make more.")
    out.append(cpus[index])
  return out


def _spec(x):
  if not isinstance(x, Array):
    raise ValueError("colocated_python only supports jax.Array as input and output, but "
                     f"got {type(x)}.")
  return jaxlite.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding)


def _same_spec(value, spec) -> bool:
  return value.shape == tuple(spec.shape) and value.dtype == spec.dtype


@dataclasses.dataclass(frozen=True)
class _Specialization:
  """What a colocated function was specialized with (each at most once, as in JAX)."""
  in_specs: Any = None
  out_specs_fn: Callable | None = None
  devices: tuple | None = None

  def update(self, in_specs=None, out_specs_fn=None, devices=None):
    for name, value in (("in_specs", in_specs), ("out_specs_fn", out_specs_fn),
                        ("devices", devices)):
      if value is not None and getattr(self, name) is not None:
        raise ValueError(f"{name} already specified")
    return _Specialization(
        self.in_specs if in_specs is None else in_specs,
        self.out_specs_fn if out_specs_fn is None else out_specs_fn,
        self.devices if devices is None else tuple(devices))


class ColocatedFunction:
  """``fun`` run beside the devices of its arguments (here: in this process).

  Arguments and results are pytrees of ``jax.Array``; ``specialize`` fixes the input
  specs, a function giving the output specs from the input specs, or the devices
  (needed by a function of no arguments), and the results are checked against them.
  """

  def __init__(self, fun, specialization=_Specialization()):
    self.fun, self.specialization = fun, specialization
    functools.update_wrapper(self, fun, updated=())

  def specialize(self, in_specs=None, out_specs_fn=None, devices=None):
    """A colocated function with extra specialization.

    Parameters
    ----------
    in_specs : pytree of ShapeDtypeStruct, optional
      The specs of ``(args, kwargs)`` the function is called with.
    out_specs_fn : callable, optional
      Gives the output specs from the input specs.
    devices : sequence of Device, optional
      Where the function runs; needed when it takes no arrays.
    """
    return ColocatedFunction(self.fun, self.specialization.update(
        in_specs, out_specs_fn, devices))

  def __call__(self, *args, **kwargs):
    spec = self.specialization
    leaves, in_tree = tree.tree_flatten((args, kwargs))
    in_specs = [_spec(x) for x in leaves]
    if not leaves and spec.devices is None:
      raise ValueError("No devices found. colocated_python function without input "
                       "arguments must be first specialized with devices.")
    device_lists = {tuple(s.sharding._device_list) for s in in_specs}
    if len(device_lists) > 1:
      raise ValueError("All arguments must use the same device list, but got multiple "
                       f"device lists: {device_lists}.")
    if spec.in_specs is not None:
      expected = tree.tree_leaves(spec.in_specs)
      if (tree.tree_structure(spec.in_specs) != in_tree
          or not all(map(_same_spec, leaves, expected))):
        raise ValueError(f"colocated_python function {self.__name__} was specialized "
                         f"with in_specs {spec.in_specs}, but called with "
                         f"{tree.tree_unflatten(in_tree, in_specs)}.")
    out = self.fun(*args, **kwargs)
    out_leaves = tree.tree_leaves(out)
    for x in out_leaves:
      _spec(x)
    if spec.out_specs_fn is not None:
      arg_specs, kwarg_specs = tree.tree_unflatten(in_tree, in_specs)
      expected = spec.out_specs_fn(*arg_specs, **kwarg_specs)
      if (tree.tree_structure(expected) != tree.tree_structure(out)
          or not all(map(_same_spec, out_leaves, tree.tree_leaves(expected)))):
        raise ValueError(f"colocated_python function {self.__name__} returned "
                         f"{tree.tree_map(_spec, out)}, but its out_specs_fn gives "
                         f"{expected}.")
    return out


def colocated_python(fun: Callable[..., Any]) -> ColocatedFunction:
  """Run ``fun`` on the same devices as its arguments (see ``ColocatedFunction``)."""
  return ColocatedFunction(fun)


def colocated_python_class(cls: type) -> type:
  """A wrapper of ``cls`` whose methods are colocated functions.

  Instantiating the wrapper records the arguments; the object itself is made on the
  first method call, once, and serves every later call of the wrapper instance.
  """
  methods = {name for name, value in vars(cls).items()
             if callable(value) and not name.startswith("__")}

  class Wrapper:
    def __init__(self, *args, **kwargs):
      self._init = (args, kwargs)
      self._lock = threading.Lock()
      self._obj = None

    def _object(self):
      with self._lock:
        if self._obj is None:
          args, kwargs = self._init
          self._obj = cls(*args, **kwargs)
        return self._obj

    def __getattr__(self, name):
      if name not in methods:
        raise AttributeError(f"'{cls.__name__}' colocated object has no method {name!r}")
      method = getattr(cls, name)

      @functools.wraps(method)
      def call(*args, **kwargs):
        return getattr(self._object(), name)(*args, **kwargs)
      return ColocatedFunction(call)

  Wrapper.__name__ = Wrapper.__qualname__ = cls.__name__
  Wrapper.__module__, Wrapper.__doc__ = cls.__module__, cls.__doc__
  return Wrapper
