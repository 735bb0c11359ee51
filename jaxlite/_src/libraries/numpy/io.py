"""Input and output of ``jaxlite.numpy``: NumPy's ``load``, ``save`` and ``savez`` on
Arrays, and the text forms of an array (``array_repr``, ``array_str`` and NumPy's print
options, which they follow).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.base import dtypes
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
  """Load arrays from ``.npy`` files (``jax.numpy.load``).

  Parameters
  ----------
  file : file-like, str or path-like
    The file, as ``numpy.load`` takes it.
  *args, **kwargs
    Passed to ``numpy.load``.

  Returns
  -------
  An Array when the file holds one array of a JAX dtype; ``bfloat16`` data, which
  ``numpy.save`` writes as void ``'V2'``, comes back as ``bfloat16``. An array of another
  dtype (strings, objects, other void types) and the contents of ``.npz`` files come back
  as NumPy returns them, as in JAX.
  """
  out = np.load(file, *args, **kwargs)
  if isinstance(out, np.ndarray):
    if out.dtype == np.dtype("V2"):
      out = out.view(dtypes.canonicalize_dtype("bfloat16"))
    try:
      out = asarray(out)
    except TypeError:  # not a JAX dtype: NumPy's array, as JAX returns it
      pass
  return out


def save(file, arr, allow_pickle=True):
  """``numpy.save`` of an Array."""
  return np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, allow_pickle=True, **kwds):
  """``numpy.savez`` of Arrays."""
  return np.savez(file, *[np.asarray(a) for a in args], allow_pickle=allow_pickle,
                  **{k: np.asarray(v) for k, v in kwds.items()})
