"""Global configuration flags, as in ``jax.config``.

Every flag is a plain attribute of the single ``config`` object, so hot paths read
it with one attribute lookup (``config.jax_enable_x64``). Flags that change how
values are traced (``jax_enable_x64``) are part of every jit cache key.
"""
import contextlib
import os
import threading


def _env_bool(name, default):
  value = os.environ.get(name)
  if value is None:
    return default
  return value.strip().lower() in ("1", "true", "yes", "on", "y", "t")


class Config:
  """Holds the flags; ``update`` is the only way to change one."""

  def __init__(self):
    object.__setattr__(self, "_flags", {})
    object.__setattr__(self, "_hooks", {})
    object.__setattr__(self, "_lock", threading.Lock())

  def define(self, name, default, help, env_var=None, parse=None, on_change=None):
    if env_var is not None and env_var in os.environ:
      default = parse(os.environ[env_var]) if parse else _env_bool(env_var, default)
    self._flags[name] = help
    if on_change is not None:
      self._hooks[name] = on_change
    object.__setattr__(self, name, default)

  def update(self, name, value):
    """Set flag ``name`` to ``value`` (``jax.config.update`` semantics)."""
    if name not in self._flags:
      raise AttributeError(
          f"Unrecognized config option: {name}. Known options: "
          f"{', '.join(sorted(self._flags))}.")
    with self._lock:
      object.__setattr__(self, name, value)
      hook = self._hooks.get(name)
    if hook is not None:
      hook(value)

  def read(self, name):
    if name not in self._flags:
      raise AttributeError(f"Unrecognized config option: {name}")
    return getattr(self, name)

  def __setattr__(self, name, value):
    raise AttributeError(
        f"Config flags are set with config.update({name!r}, value), not by assignment.")

  @contextlib.contextmanager
  def override(self, name, value):
    """Temporarily set a flag (process-wide) inside a ``with`` block."""
    old = self.read(name)
    self.update(name, value)
    try:
      yield
    finally:
      self.update(name, old)

  def values(self):
    return {name: getattr(self, name) for name in self._flags}


config = Config()

config.define("jax_enable_x64", False, "Enable 64-bit dtypes (int64, float64, complex128).",
              env_var="JAX_ENABLE_X64")
config.define("jax_numpy_dtype_promotion", "standard",
              "'standard' follows JAX's promotion lattice; 'strict' forbids implicit promotion.",
              env_var="JAX_NUMPY_DTYPE_PROMOTION", parse=str)
config.define("jax_disable_jit", False, "Run jitted functions eagerly, op by op.",
              env_var="JAX_DISABLE_JIT")
config.define("jax_explain_cache_misses", False,
              "Report every jit retrace as a warning instead of a log record.",
              env_var="JAX_EXPLAIN_CACHE_MISSES")
config.define("jax_log_compiles", False, "Log every compilation with its duration.",
              env_var="JAX_LOG_COMPILES")
