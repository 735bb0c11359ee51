"""``jax.experimental.array_serialization.serialization``: arrays written to and read from
TensorStore checkpoints (the ``tensorstore`` package: ``pip install jaxlite[checkpoint]``).

``GlobalAsyncCheckpointManager`` writes arrays in a thread of its own and reads them back
laid out by given shardings; ``get_tensorstore_spec`` makes the TensorStore spec of a
path, as JAX does (zarr3 arrays, by default in one OCDBT store per directory). jaxlite
runs in one process, which holds every array whole, so each array is written whole and
no barrier between processes is needed.
"""
import abc
import math
import os
import re
import threading
from typing import Any

import numpy as np

import jaxlite

__all__ = ["BarrierTimeoutError", "GlobalAsyncCheckpointManagerBase",
           "GlobalAsyncCheckpointManager", "get_tensorstore_spec", "is_remote_storage"]

_FILE_SIZE_TARGET = 2 * 1024 ** 3   # bytes: JAX's chunks stay under this size

_REMOTE_URL_PREFIXES = ("gs://", "s3://")
_REMOTE_DRIVERS = ("gcs", "s3")


class BarrierTimeoutError(Exception):
  """A checkpoint's processes did not all reach a barrier in time."""


def is_remote_storage(tspec: dict[str, Any] | str) -> bool:
  """Whether a TensorStore spec (a dict, or a KvStore URL) names cloud storage (GCS, S3).

  Parameters
  ----------
  tspec : dict or str
    A TensorStore spec, or a KvStore URL such as ``"gs://bucket/path"``.

  Returns
  -------
  bool
    True for a ``gs://`` or ``s3://`` URL, or a spec whose ``base``/``kvstore`` (looked
    at first) or ``driver`` names one of those stores.
  """
  if isinstance(tspec, str):
    return tspec.startswith(_REMOTE_URL_PREFIXES)
  for key in ("base", "kvstore"):
    if key in tspec:
      return is_remote_storage(tspec[key])
  return tspec.get("driver") in _REMOTE_DRIVERS


class GlobalAsyncCheckpointManagerBase(abc.ABC):
  """The interface of a manager that writes arrays to TensorStore asynchronously: one
  checkpoint at a time, the next waiting for the last to commit."""

  @abc.abstractmethod
  def check_for_errors(self):
    """Raise any error the writing thread raised (without blocking)."""

  @abc.abstractmethod
  def wait_until_finished(self):
    """Block until the writing has finished."""

  @abc.abstractmethod
  def serialize(self, arrays, tensorstore_specs, *, on_commit_callback):
    """Write ``arrays`` to TensorStore at ``tensorstore_specs``."""

  @abc.abstractmethod
  def deserialize(self, shardings, tensorstore_specs, global_shapes=None, dtypes=None):
    """Read arrays laid out by ``shardings`` from ``tensorstore_specs``."""


def _tensorstore():
  try:
    import tensorstore
  except ImportError:
    raise ImportError("TensorStore checkpoints need the tensorstore package: pip install "
                      "tensorstore (or jaxlite[checkpoint]).") from None
  return tensorstore


def _chunk_shape(shape, itemsize, target=_FILE_SIZE_TARGET) -> list:
  """``shape`` divided along its axes until a chunk holds at most 1.1 ``target`` bytes,
  by JAX's rule: each step divides the axis whose next prime factor is smallest, and an
  axis keeps its last prime factor."""
  chunk = [max(int(d), 1) for d in shape]
  if not shape or math.prod(shape) == 0:
    return chunk
  factors = [_prime_factors(d) for d in chunk]
  size = math.prod(chunk) * itemsize
  while size > 1.1 * target:
    candidates = [(f[0], axis) for axis, f in enumerate(factors) if len(f) > 1]
    if not candidates:
      break
    factor, axis = min(candidates)
    factors[axis].pop(0)
    chunk[axis] //= factor
    size //= factor
  return chunk


def _prime_factors(n: int) -> list:
  out, f = [], 2
  while f * f <= n:
    while n % f == 0:
      out.append(f)
      n //= f
    f += 1
  return out + ([n] if n > 1 else [])


def _metadata(arr, driver: str) -> dict:
  shape, dtype = tuple(arr.shape), np.dtype(arr.dtype)
  if driver == "zarr3":
    return {"codecs": [], "shape": shape, "data_type": dtype.name,
            "chunk_grid": {"name": "regular", "configuration": {
                "chunk_shape": _chunk_shape(shape, dtype.itemsize)}}}
  if driver == "zarr":
    return {"compressor": {"id": "zstd"}, "shape": shape,
            "chunks": [max(int(d), 1) for d in shape]}
  raise ValueError(f"Unsupported driver: {driver}")


def get_tensorstore_spec(ckpt_path, ocdbt: bool = False, process_idx: int | None = None,
                         arr=None, driver: str = "zarr") -> dict[str, Any]:
  """The TensorStore spec of an array stored at ``ckpt_path`` (by default a zarr array of
  its own, as JAX's module of this name; JAX's newer store is ``driver="zarr3"``,
  ``ocdbt=True``).

  Parameters
  ----------
  ckpt_path : str or os.PathLike
    Where the array is stored: a local path (absolute with ``ocdbt``), or a
    ``gs://`` or ``s3://`` URL.
  ocdbt : bool, default False
    Store the array under its name in an OCDBT key-value store at the parent path.
  process_idx : int, optional
    Store under a ``process_<idx>`` directory beside the array's name.
  arr : Array, optional
    Adds the array's metadata (shape, dtype, chunks) to the spec.
  driver : {"zarr", "zarr3"}
    The array format.
  """
  path = re.sub(r"^(gs|s3):/", r"\1://", os.path.normpath(str(ckpt_path)))
  if process_idx is not None:
    parent, name = os.path.split(path)
    path = os.path.join(parent, f"process_{process_idx}", name)
  remote = path.startswith(("gs://", "s3://"))
  key = None
  if ocdbt:
    path, key = os.path.split(path)
    if remote and re.fullmatch(r"^(gs|s3)://[^/]*/.*$", path) is None:
      raise ValueError("Using OCDBT requires the bucket name, the directory name and the "
                       f"array name, your path is: {ckpt_path}")
    if not remote and not os.path.isabs(path):
      raise ValueError(f"Checkpoint path should be absolute. Got {path}")
  if remote:
    bucket, _, rest = path.split("://", 1)[1].partition("/")
    base = {"driver": "gcs" if path.startswith("gs://") else "s3", "bucket": bucket,
            "path": rest}
  else:
    base = {"driver": "file", "path": path}
  spec = {"driver": driver,
          "kvstore": {"driver": "ocdbt", "base": base, "path": key} if ocdbt else base}
  if arr is not None:
    spec["metadata"] = _metadata(arr, driver)
  return spec


class GlobalAsyncCheckpointManager(GlobalAsyncCheckpointManagerBase):
  """Writes arrays to TensorStore in a thread of its own, one checkpoint at a time (the
  next ``serialize`` waits for the last to commit), and reads them back.

  Parameters
  ----------
  timeout_secs : int, default 300
    How long ``wait_until_finished`` waits for a checkpoint to commit.
  """

  def __init__(self, timeout_secs: int = 300):
    self._timeout_secs = timeout_secs
    self._thread = None
    self._exception = None

  def serialize(self, arrays, tensorstore_specs, *, on_commit_callback=None,
                transaction=None):
    """Write ``arrays`` at ``tensorstore_specs``; ``on_commit_callback`` runs once all of
    them are on storage (say, to rename a temporary directory to its final name)."""
    ts = _tensorstore()
    self.wait_until_finished()
    commits = []
    for arr, spec in zip(arrays, tensorstore_specs, strict=True):
      value = np.asarray(arr)
      spec = dict(spec)
      spec.setdefault("metadata", _metadata(value, spec.get("driver", "zarr")))
      if spec.get("driver") == "zarr":   # (zarr's dtype sits in the spec, not its metadata)
        spec.setdefault("dtype", value.dtype.name)
      store = ts.open(spec, create=True, open=True, transaction=transaction).result()
      commits.append(store.write(value).commit)

    def commit():
      try:
        for future in commits:
          future.result()
        if on_commit_callback is not None:
          on_commit_callback()
      except Exception as e:   # raised again by check_for_errors / wait_until_finished
        self._exception = e
    self._thread = threading.Thread(target=commit, name="jaxlite-checkpoint", daemon=True)
    self._thread.start()

  def serialize_with_paths(self, arrays, paths, *, on_commit_callback=None,
                           transaction=None):
    """``serialize`` at the specs of ``paths`` (``get_tensorstore_spec``)."""
    return self.serialize(arrays, [get_tensorstore_spec(p) for p in paths],
                          on_commit_callback=on_commit_callback, transaction=transaction)

  def check_for_errors(self):
    if self._exception is not None:
      exception, self._exception = self._exception, None
      raise exception

  def wait_until_finished(self):
    if self._thread is not None:
      self._thread.join(self._timeout_secs)
      if self._thread.is_alive():
        raise BarrierTimeoutError(f"the checkpoint did not commit within "
                                  f"{self._timeout_secs} s.")
      self._thread = None
    self.check_for_errors()

  def deserialize(self, shardings, tensorstore_specs, global_shapes=None, dtypes=None,
                  concurrent_gb: int = 32):
    """The arrays stored at ``tensorstore_specs``, laid out by ``shardings``: with
    ``global_shapes``, cut to or padded with zeros to those shapes; with ``dtypes``,
    converted to them."""
    ts = _tensorstore()
    self.wait_until_finished()
    n = len(tensorstore_specs)
    out = []
    for sharding, spec, shape, dtype in zip(shardings, tensorstore_specs,
                                            global_shapes or [None] * n,
                                            dtypes or [None] * n, strict=True):
      value = ts.open(spec, open=True).result().read().result()
      if shape is not None and tuple(shape) != value.shape:
        value = _fit(value, tuple(shape))
      if dtype is not None:
        value = value.astype(dtype)
      sharding = getattr(sharding, "sharding", sharding)   # (a Format: its sharding)
      out.append(jaxlite.device_put(value, sharding))
    return out

  def deserialize_with_paths(self, shardings, paths, global_shapes=None, dtypes=None,
                             concurrent_gb: int = 32):
    """``deserialize`` from the specs of ``paths`` (``get_tensorstore_spec``)."""
    return self.deserialize(shardings, [get_tensorstore_spec(p) for p in paths],
                            global_shapes, dtypes, concurrent_gb)


def _fit(value, shape):
  """``value`` cut to ``shape``, and padded with zeros where ``shape`` is larger."""
  if len(shape) != value.ndim:
    raise ValueError(f"cannot read an array of shape {value.shape} as shape {shape}.")
  out = np.zeros(shape, value.dtype)
  common = tuple(slice(0, min(a, b)) for a, b in zip(shape, value.shape))
  out[common] = value[common]
  return out
