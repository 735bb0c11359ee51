"""Device memory layouts of placed arrays: moving the pieces of one between layouts, and
reading back the layout a buffer has.

PJRT checks neither which layout an executable expects of a parameter nor which one a
buffer has: a buffer in another layout is read with its elements permuted. So an array
in a layout other than the default keeps it in ``Placed.layout``, only the executables
compiled for that layout read its pieces (``sharding_map._pieces``), and everything
else reads its value through the host, which ``Placed.piece_value`` reads in that
layout. A piece
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


def check_available(layout, device):
  """Raise RuntimeError where ``layout`` (canonical) asks for more than the default
  layout on ``device`` and no XLA backend is there to lay arrays out (the CPU without
  its plugin: host arrays have one layout)."""
  if layout is not None and device.platform == "cpu" and not tiers.xla_available():
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


def default_layout(device, shape, dtype) -> tuple:
  """``device``'s default layout for a piece of ``shape`` and ``dtype``, as (dimension
  order, tiles): row-major and untiled on the CPU; elsewhere what PJRT gives a buffer
  made there (a TPU tiles, and orders rank 3 and up otherwise), asked once per shape
  and dtype."""
  if device.platform == "cpu":
    return tuple(range(len(shape))), ()
  key = (device, tuple(shape), np.dtype(dtype))
  found = _default_layouts.get(key)
  if found is None:
    buf = device.client.put(np.zeros(shape, dtype), device)
    found = _default_layouts[key] = buf.memory_layout()
  return found


_default_layouts: dict = {}


def buffer_layout(buf, ndim: int) -> layout_mod.Layout:
  """The layout PJRT buffer ``buf`` has, as ``Array.format`` reports it: its order and
  the device's tiles (row-major and untiled where the plugin cannot say)."""
  try:
    major_to_minor, tiling = buf.memory_layout()
  except (AttributeError, TypeError):   # a plugin without Buffer_GetMemoryLayout
    major_to_minor, tiling = tuple(range(ndim)), ()
  return layout_mod.Layout(major_to_minor, tiling)


def canonical(layout, device, shape, dtype):
  """``layout`` (a Layout, ``Layout.AUTO`` or None) for a piece of ``shape`` and
  ``dtype`` on ``device`` as placement keeps it (``layout.canonical``): None for the
  device's default."""
  if layout is None:
    return None
  seen = ()
  if isinstance(layout, layout_mod.Layout) and layout.tiling:
    seen = _seen_tiles.get((device, tuple(shape), np.dtype(dtype), layout.major_to_minor), ())
  return layout_mod.canonical(layout, default_layout(device, shape, dtype), seen)


def note_tiles(buf, device, layout):
  """Remember the tiles ``device`` gave ``buf``, laid out in the canonical ``layout``: a
  Format read from such an array (``x.format``) asks for them, and may."""
  if layout is not None and device.platform != "cpu":
    order, tiles = buf.memory_layout()
    key = (device, tuple(buf.spec[0]), np.dtype(buf.spec[1]), order)
    if tiles and tiles not in _seen_tiles.get(key, ()):
      _seen_tiles[key] = (*_seen_tiles.get(key, ()), tiles)


def tiles_seen(device, shape, dtype, order) -> tuple:
  """The tiles ``device`` gave a buffer of ``shape`` and ``dtype`` laid out in ``order``
  (``note_tiles``), or () where none was made (or the device does not tile)."""
  return (_seen_tiles.get((device, tuple(shape), np.dtype(dtype), tuple(order))) or ((),))[0]


_seen_tiles: dict = {}   # (device, shape, dtype, order) -> the tiles buffers had there


def canonical_of_buffer(buf, device):
  """The canonical layout (None: the device's default) of a buffer an executable
  computed to a layout of XLA's choice (``Layout.AUTO``)."""
  order = buf.memory_layout()[0]
  return canonical(layout_mod.Layout(order), device, buf.spec[0], buf.spec[1])
