"""``jax.transfer_guard``: what happens when a value moves between host and device.

A transfer moves an array into or out of device memory: a PJRT buffer of an accelerator,
or of the CPU under ``jaxlite_cpu_backend='pjrt'``. It is *explicit* when the user named it
(``device_put``, ``device_get``) and *implicit* otherwise (a NumPy value or Python list
made an array, or passed to a jitted function or an op on device arrays; a device array
printed, converted with ``np.asarray`` or ``float``). Each direction has a level:

``allow``, ``log`` (log implicit ones), ``disallow`` (raise on implicit ones),
``log_explicit`` (log all), ``disallow_explicit`` (raise on all).

On the default CPU backend arrays live in host memory, so nothing there is a transfer.
"""
from __future__ import annotations

import logging

from jaxlite._src.base.config import ThreadFlag, config, _enum
from jaxlite._src.base.errors import JaxRuntimeError

logger = logging.getLogger("jaxlite")

LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
KINDS = ("host_to_device", "device_to_host", "device_to_device")

# Whether any level but allow is set: the one global read each transfer makes first.
active = False


def _refresh(_value=None):
  global active
  active = any(config.read(name) not in (None, "allow") for name in _OPTIONS)


_OPTIONS = ["jax_transfer_guard"] + [f"jax_transfer_guard_{kind}" for kind in KINDS]
config.define("jax_transfer_guard", None,
              "Guard level of every transfer between host and devices (each direction's "
              "own option wins): allow, log, disallow, log_explicit or disallow_explicit.",
              env_var="JAX_TRANSFER_GUARD", parse=str, on_change=_refresh,
              validate=_enum(*LEVELS, allow_none=True))
for _kind in KINDS:
  config.define(f"jax_transfer_guard_{_kind}", None,
                f"Guard level of {_kind.replace('_', '-')} transfers (None: "
                "jax_transfer_guard's).",
                env_var=f"JAX_TRANSFER_GUARD_{_kind.upper()}", parse=str,
                on_change=_refresh, validate=_enum(*LEVELS, allow_none=True))
_refresh()

_explicit = ThreadFlag()


def explicit():
  """Transfers made inside the block are explicit (``device_put``, ``device_get``)."""
  return _explicit.raised()


def check(kind: str, describe):
  """Apply the guard to a transfer of ``kind`` about to happen (callers test ``active``
  first); ``describe()`` says what moves, as JAX's message does."""
  level = config.read(f"jax_transfer_guard_{kind}") or config.jax_transfer_guard
  if level in (None, "allow"):
    return
  if _explicit.on and level in ("log", "disallow"):
    return
  message = f"{kind.replace('_', '-')} transfer: {describe()}"
  if level.startswith("log"):
    logger.warning(message)
    return
  raise JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {message}")


_NO_DEFAULT = object()


def _guard(option, level):
  """``with``-able: sets ``option`` to ``level`` inside the block."""
  if level is _NO_DEFAULT:
    raise TypeError(f"Context manager for {option.removeprefix('jax_')} config option "
                    "requires an argument representing the new value for the config option.")
  if level not in LEVELS:
    raise ValueError(f"new enum value must be None or in {list(LEVELS)}, got {level} of "
                     f"type {type(level)}.")
  return config.override(option, level)


def transfer_guard(new_val: str):
  """Guard every direction of transfer at level ``new_val`` inside the ``with`` block."""
  return _guard("jax_transfer_guard", new_val)


def transfer_guard_host_to_device(new_val: str = _NO_DEFAULT):
  """Guard host-to-device transfers at level ``new_val`` inside the ``with`` block."""
  return _guard("jax_transfer_guard_host_to_device", new_val)


def transfer_guard_device_to_host(new_val: str = _NO_DEFAULT):
  """Guard device-to-host transfers at level ``new_val`` inside the ``with`` block."""
  return _guard("jax_transfer_guard_device_to_host", new_val)


def transfer_guard_device_to_device(new_val: str = _NO_DEFAULT):
  """Guard device-to-device transfers at level ``new_val`` inside the ``with`` block."""
  return _guard("jax_transfer_guard_device_to_device", new_val)
