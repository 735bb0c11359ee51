"""Device memory layouts of placed arrays: moving the pieces of one between layouts, and
reading back the layout a buffer has.

PJRT checks neither which layout an executable expects of a parameter nor which one a
buffer has: a buffer in another layout is read with its elements permuted. So an array
in a layout other than the default keeps it in ``Placed.layout``, only the executables
compiled for that layout read its pieces (``pieces_for``), and everything else reads
its value through the host, which ``Placed.piece_value`` reads in that layout. A piece
changes layout the way JAX changes it: an XLA identity program whose parameter and
result ask for the two layouts (``mhlo.layout_mode``), compiled once per signature.
"""
from __future__ import annotations

import threading

import numpy as np

from jaxlite._src import tiers
from jaxlite._src.base import layout as layout_mod
from jaxlite._src.core import core

_programs: dict = {}   # (shape, dtype, sharding, source, target) -> LoadedExecutable
_lock = threading.Lock()


def check_available(layout):
  """Raise RuntimeError where ``layout`` (canonical) asks for more than the default
  layout and no XLA backend is there to lay arrays out (host arrays have one layout)."""
  if layout is not None and not tiers.xla_available():
    raise RuntimeError(f"Laying an array out as {layout} needs the XLA backend, which is "
                       f"not available here; leave the layout to the default.")


def relaid_out(pieces, sharding, shape, dtype, source, target) -> list:
  """``pieces`` (PJRT buffers, one per device of ``sharding``, in the canonical layout
  ``source``) copied on their devices into the canonical layout ``target``."""
  key = (tuple(shape), np.dtype(dtype), sharding, source, target)
  exe = _programs.get(key)
  if exe is None:
    with _lock:
      exe = _programs.get(key) or _programs.setdefault(
          key, _identity(sharding, shape, dtype, source, target))
  return [outs[0] for outs in exe.execute_sharded([[p] for p in pieces])]


def _identity(sharding, shape, dtype, source, target):
  from jaxlite._src.backends import xla
  devices = sharding._device_list
  aval = core.ShapedArray(tuple(shape), np.dtype(dtype))
  var = core.Var(aval)
  closed = core.ClosedJaxpr(core.Jaxpr([], [var], [var], []), [])
  several = len(devices) > 1
  spec = (tuple(sharding.shard_shape(aval.shape)), aval.dtype)
  backend = devices[0].client
  return xla.compile_on_devices(
      closed, "relayout", [backend.devices().index(d) for d in devices], replicas=False,
      arg_shardings=[sharding] if several else None,
      out_shardings=[sharding] if several else None, in_specs=[spec], out_specs=[spec],
      arg_layouts=[source], out_layouts=[target], on=backend.pjrt_client())


def buffer_layout(buf, ndim: int) -> layout_mod.Layout:
  """The layout PJRT buffer ``buf`` has, as ``Array.format`` reports it: its order and
  the device's tiles (row-major and untiled where the plugin cannot say)."""
  try:
    major_to_minor, tiling = buf.memory_layout()
  except (AttributeError, TypeError):   # a plugin without Buffer_GetMemoryLayout
    major_to_minor, tiling = tuple(range(ndim)), ()
  return layout_mod.Layout(major_to_minor, tiling)


def canonical_of_buffer(buf, ndim: int):
  """The canonical layout (None: the default order) of a buffer an executable computed to
  a layout of XLA's choice (``Layout.AUTO``)."""
  major_to_minor = buf.memory_layout()[0]
  return None if major_to_minor == tuple(range(ndim)) else layout_mod.Layout(major_to_minor)
