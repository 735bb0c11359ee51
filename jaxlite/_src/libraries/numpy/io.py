"""Input and output of ``jaxlite.numpy``: NumPy's ``load``, ``save`` and ``savez`` on
Arrays, and the text forms of an array (``array_repr``, ``array_str`` and NumPy's print
options, which they follow).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.libraries.numpy.creation import asarray

__all__ = ["array_repr", "array_str", "get_printoptions", "set_printoptions", "printoptions",
           "load", "save", "savez"]

get_printoptions, set_printoptions, printoptions = (
    np.get_printoptions, np.set_printoptions, np.printoptions)


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
  """The ``repr`` of an array, as ``numpy.array_repr`` writes it (prefixed ``Array``)."""
  text = np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)
  return "Array" + text[len("array"):] if text.startswith("array") else text


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
  """The ``str`` of an array, as ``numpy.array_str`` writes it."""
  return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


def load(file, *args, **kwargs):
  """``numpy.load``, returning an Array when the file holds one array."""
  out = np.load(file, *args, **kwargs)
  if isinstance(out, np.ndarray) and out.dtype != object:
    return asarray(out)
  return out


def save(file, arr, allow_pickle=True):
  """``numpy.save`` of an Array."""
  return np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, allow_pickle=True, **kwds):
  """``numpy.savez`` of Arrays."""
  return np.savez(file, *[np.asarray(a) for a in args], allow_pickle=allow_pickle,
                  **{k: np.asarray(v) for k, v in kwds.items()})
