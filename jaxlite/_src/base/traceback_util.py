"""The part of JAX's private ``jax._src.traceback_util`` that libraries use (equinox, flax),
served under that name by the alias. JAX hides its own frames, and the files libraries
register, from the tracebacks of its errors; jaxlite does not filter tracebacks, so the
registry is kept for the libraries that read it (``include_frame``, ``_exclude_paths``)
and changes nothing in jaxlite's tracebacks."""

_exclude_paths: list = []


def register_exclusion(path: str):
  """Record ``path`` (a file or folder) as one whose frames a filtered traceback omits."""
  _exclude_paths.append(path)


def include_frame(frame) -> bool:
  """Whether ``frame`` is outside every registered path."""
  return not any(frame.f_code.co_filename.startswith(p) for p in _exclude_paths)


def api_boundary(fun=None, **_):
  """JAX's decorator of its API functions, whose tracebacks it filters: ``fun`` itself."""
  return fun if fun is not None else (lambda f: f)
