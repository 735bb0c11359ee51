"""The cases of the JAX replay: which function, on which inputs.

This module imports only NumPy and ml_dtypes, so the recorder (run under real JAX, see
``record.py``) and the replay test (run under jaxlite) build identical cases and inputs.
A case calls its program with a namespace ``ns`` holding the library under test
(``ns.jax``, ``ns.jnp``, ``ns.lax``, ``ns.nn``, ``ns.special``); array arguments are
``A`` placeholders that become arrays of that library, Python scalars stay Python scalars
(so weak types are exercised).
"""
from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np

DTYPES = ("bool", "int8", "int32", "uint8", "uint32", "float16", "bfloat16", "float32",
          "complex64")
DTYPES_X64 = DTYPES + ("int64", "uint64", "float64", "complex128")
FLOATS = ("float16", "bfloat16", "float32")


class A:
  """An array argument: its dtype, shape and what values it holds (``fill``)."""
  __slots__ = ("dtype", "shape", "fill")

  def __init__(self, dtype, shape=(2, 3), fill="any"):
    self.dtype, self.shape, self.fill = dtype, tuple(shape), fill

  def __repr__(self):
    fill = "" if self.fill == "any" else f":{self.fill}"
    return f"{self.dtype}{list(self.shape)}{fill}".replace(" ", "")


class Case:
  """One call. ``fn`` is a path (``"numpy.sin"``) or a function ``fn(ns, *args, **kw)``."""
  __slots__ = ("group", "id", "fn", "args", "kwargs", "rtol", "vmap")

  def __init__(self, group, fn, args, kwargs=None, rtol=None, label=None, vmap=True):
    self.group, self.fn, self.args = group, fn, tuple(args)
    self.kwargs = dict(kwargs or {})
    self.rtol, self.vmap = rtol, vmap
    shown = label or ", ".join([_show(a) for a in self.args]
                               + [f"{k}={_show(v)}" for k, v in self.kwargs.items()])
    self.id = f"{group}({shown})"

  def array_specs(self):
    return [a for a in list(self.args) + list(self.kwargs.values()) if isinstance(a, A)]

  def call(self, ns, arrays):
    """Run the case in library ``ns`` with ``arrays`` in place of the ``A`` specs."""
    it = iter(arrays)
    args = [next(it) if isinstance(a, A) else a for a in self.args]
    kwargs = {k: next(it) if isinstance(v, A) else v for k, v in self.kwargs.items()}
    fn = resolve(ns, self.fn) if isinstance(self.fn, str) else self.fn
    return fn(*args, **kwargs) if isinstance(self.fn, str) else fn(ns, *args, **kwargs)


def _show(v):
  if callable(v) and not isinstance(v, (A, type)):
    return getattr(v, "__name__", "fn")
  if isinstance(v, type):
    return v.__name__
  if isinstance(v, float) and v != v:
    return "nan"
  return repr(v)


_ROOTS = {"numpy": "jnp", "lax": "lax", "nn": "nn", "scipy.special": "special",
          "jax": "jax", "random": "random"}


def resolve(ns, path):
  root, _, name = path.rpartition(".")
  obj = getattr(ns, _ROOTS[root])
  return getattr(obj, name)


# ----------------------------------------------------------------------------- inputs

def _dtype(name):
  return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _uniform(seed, n):
  """n doubles in [0, 1) from PCG64's raw stream, which NumPy keeps stable."""
  raw = np.random.PCG64(seed).random_raw(n) if n else np.zeros(0, np.uint64)
  return (np.asarray(raw, np.uint64) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def _float_edges(dtype):
  info = ml_dtypes.finfo(dtype) if dtype.kind == "V" else np.finfo(dtype)
  return [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, 3.0, float(info.tiny),
          float(info.max), -float(info.max), 1e-3, -7.0, 100.0]


def _int_edges(dtype):
  info = np.iinfo(dtype)
  bits = 8 * dtype.itemsize
  vals = [0, 1, 2, 3, 7, bits, bits + 1, info.max, info.max - 1, info.min]
  if info.min < 0:
    vals += [-1, -3, -bits, info.min + 1]
  return vals


def edge_values(dtype):
  """Values that stress a function of one argument: zeros, infinities, NaN, extremes."""
  if dtype.kind == "b":
    return [False, True]
  if dtype.kind in "iu":
    return _int_edges(dtype)
  if dtype.kind == "c":
    f = _float_edges(np.dtype(np.float32) if dtype.itemsize == 8 else np.dtype(np.float64))
    return [complex(a, b) for a, b in [(0, 0), (1, 0), (0, -1), (np.inf, 0), (0, np.inf),
                                        (np.nan, 0), (1, np.nan), (2, -3), (-np.inf, 1),
                                        (-0.0, 0), (f[11], 1), (-1.5, -0.5)]]
  return _float_edges(dtype)


def make_array(spec: A, seed: int) -> np.ndarray:
  """The NumPy value of ``spec``, a deterministic function of ``seed``."""
  dtype = _dtype(spec.dtype)
  n = int(np.prod(spec.shape, dtype=np.int64))
  fill = spec.fill
  if isinstance(fill, tuple):   # explicit values, repeated to fill the shape
    picked = [fill[i % len(fill)] for i in range(n)]
    return _cast(np.array(picked, dtype=object), dtype).reshape(spec.shape)
  if fill in ("edge", "edge_x", "edge_y"):
    vals = edge_values(dtype)
    if fill == "edge":
      picked = [vals[i % len(vals)] for i in range(n)]
    else:   # the two sides of the cross product of the edge values
      k = len(vals)
      picked = [vals[(i // k if fill == "edge_x" else i) % k] for i in range(n)]
    return _cast(np.array(picked, dtype=object), dtype).reshape(spec.shape)
  u = _uniform(seed, n * 2)
  u, v = u[:n], u[n:]
  if dtype.kind == "b":
    return (u < 0.5).reshape(spec.shape)
  if dtype.kind in "iu":
    lo, hi = {"any": (-4, 4), "pos": (1, 8), "index": (-3, 2), "small": (0, 2),
              "unit": (0, 1), "nonneg": (0, 5)}.get(fill, (-4, 4))
    if dtype.kind == "u":
      lo = max(lo, 0)
    vals = lo + np.floor(u * (hi - lo + 1)).astype(np.int64)
    return vals.astype(dtype).reshape(spec.shape)
  lo, hi = {"any": (-3.0, 3.0), "pos": (0.1, 3.0), "unit": (-0.95, 0.95),
            "prob": (0.02, 0.98), "big": (1.0, 12.0), "small": (-1.0, 1.0)}[fill]
  re = lo + (hi - lo) * u
  re = np.round(re * 64) / 64 if fill in ("any", "big") else re  # exact in every float
  if dtype.kind == "c":
    im = lo + (hi - lo) * v
    return (re + 1j * np.round(im * 64) / 64).astype(dtype).reshape(spec.shape)
  return re.astype(dtype).reshape(spec.shape)


def _cast(values, dtype):
  if dtype.kind == "u":   # wrap, as a conversion would (uint64's max exceeds int64)
    return np.array([int(v) % 2 ** 64 for v in values], np.uint64).astype(dtype)
  if dtype.kind == "i":
    return np.array([int(v) for v in values], np.int64).astype(dtype)
  if dtype.kind == "c":
    return np.array([complex(v) for v in values], np.complex128).astype(dtype)
  if dtype.kind == "b":
    return np.array([bool(v) for v in values])
  with np.errstate(over="ignore"):
    return np.array([float(v) for v in values], np.float64).astype(dtype)


def seed_of(case_id: str, position: int, batch: int = 0) -> int:
  return zlib.crc32(f"{case_id}#{position}#{batch}".encode())


def in_device_sample(case_id: str, every: int) -> bool:
  """Whether a case is among the stable one-in-``every`` sample that the device mode
  replays (each eager primitive there is an XLA compile) and that ``record.py
  --platform`` records on an accelerator."""
  return every <= 1 or seed_of(case_id, -1) % every == 0


def inputs(case: Case, batch: int | None = None):
  """The NumPy inputs of ``case``; with ``batch``, stacked along a new leading axis of
  that size (each slice drawn with its own seed)."""
  out = []
  for pos, spec in enumerate(case.array_specs()):
    if batch is None:
      out.append(make_array(spec, seed_of(case.id, pos)))
    else:
      out.append(np.stack([make_array(spec, seed_of(case.id, pos, b)) for b in range(batch)]))
  return out


def input_checksum(arrays) -> int:
  h = 0
  for a in arrays:
    h = zlib.crc32(np.ascontiguousarray(a).view(np.uint8).tobytes(), h)
    h = zlib.crc32(str((a.dtype, a.shape)).encode(), h)
  return h
