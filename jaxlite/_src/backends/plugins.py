"""Finding PJRT plugins installed from PyPI, without importing jax or jaxlib.

CPU: ``xla-cpu-pjrt`` installs ``xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so``.
TPU: ``libtpu`` (the ``jaxlite[tpu]`` extra) installs ``libtpu/libtpu.so``; as in JAX,
``TPU_LIBRARY_PATH`` names another file.
CUDA: ``jax-cuda13-pjrt`` / ``jax-cuda12-pjrt`` install ``jax_plugins/xla_cuda13`` (or
``xla_cuda12``) holding ``xla_cuda_plugin.so``. Only the file is located here; it is
loaded by ``pjrt.load_api`` when a client is first needed.
"""
from __future__ import annotations

import glob
import importlib.util
import os
from typing import NamedTuple

# XLA options that jaxlite's compiles set unless ``XLA_FLAGS`` names them: JAX compiles for
# the CPU with fast min/max off, so that ``maximum`` and ``minimum`` (elementwise and in
# reductions) propagate NaNs; the CPU plugin's default is on.
XLA_FLAG_DEFAULTS = {"xla_cpu_enable_fast_min_max": False}


def flag_defaults() -> dict:
  """The ``XLA_FLAG_DEFAULTS`` that ``XLA_FLAGS`` does not name, as compile options.

  They go into each compile's options rather than into ``os.environ``: JAX leaves
  ``XLA_FLAGS`` as the user set it, and programs read it (numpyro's tests skip on it).
  """
  flags = os.environ.get("XLA_FLAGS", "")
  return {name: value for name, value in XLA_FLAG_DEFAULTS.items()
          if f"--{name}" not in flags}


INSTALL_CPU = "pip install xla-cpu-pjrt"
INSTALL_CUDA = "pip install 'jaxlite[cuda]'  (or: pip install jax-cuda13-pjrt)"
INSTALL_TPU = "pip install 'jaxlite[tpu]'  (or: pip install libtpu)"


class Plugin(NamedTuple):
  platform: str   # "cpu", "tpu" or "gpu" (JAX's platform names)
  path: str       # the shared library exporting GetPjrtApi
  package: str    # the distribution it came from


def _package_dirs(module: str) -> list[str]:
  """The directories of ``module`` (a namespace package may have several), unimported."""
  try:
    spec = importlib.util.find_spec(module)
  except (ImportError, ValueError):
    return []
  if spec is None:
    return []
  return list(spec.submodule_search_locations or
              ([os.path.dirname(spec.origin)] if spec.origin else []))


def _find(module: str, pattern: str) -> str | None:
  for d in _package_dirs(module):
    hits = sorted(glob.glob(os.path.join(d, pattern)))
    if hits:
      return hits[0]
  return None


def cpu_plugin() -> Plugin | None:
  path = os.environ.get("JAXLITE_PJRT_CPU_PLUGIN") or _find(
      "xla_plugins.xla_cpu_pjrt", "xla_cpu_pjrt*.so")
  return Plugin("cpu", path, "xla-cpu-pjrt") if path and os.path.exists(path) else None


def cuda_plugin() -> Plugin | None:
  for module, package in (("jax_plugins.xla_cuda13", "jax-cuda13-pjrt"),
                          ("jax_plugins.xla_cuda12", "jax-cuda12-pjrt")):
    path = _find(module, "xla_cuda_plugin*.so")
    if path:
      return Plugin("gpu", path, package)
  return None


def tpu_plugin() -> Plugin | None:
  path = os.environ.get("TPU_LIBRARY_PATH") or _find("libtpu", "libtpu*.so")
  return Plugin("tpu", path, "libtpu") if path and os.path.exists(path) else None


# The accelerator platforms, in the order JAX prefers them when none is named.
ACCELERATORS = {"tpu": tpu_plugin, "gpu": cuda_plugin}
# Names JAX_PLATFORMS accepts for them.
PLATFORM_ALIASES = {"cpu": "cpu", "tpu": "tpu", "gpu": "gpu", "cuda": "gpu"}


def find_plugin(platform: str | None = None) -> Plugin | None:
  """The XLA tier's plugin (``platform`` None or 'cpu'), or an accelerator's ('tpu',
  'gpu' or 'cuda'); None where it is not installed.

  ``JAXLITE_PLATFORM`` set to anything but a platform name (``none``, say) hides every
  plugin: the process then runs tier 0 alone.
  """
  if os.environ.get("JAXLITE_PLATFORM", "") not in ("", *PLATFORM_ALIASES):
    return None
  if platform in (None, "cpu"):
    return cpu_plugin()
  found = ACCELERATORS.get(PLATFORM_ALIASES.get(platform, platform))
  return found() if found else None


def missing_message(platform: str | None = None) -> str:
  if platform in ("cuda", "gpu"):
    return f"No CUDA PJRT plugin is installed. Install one with: {INSTALL_CUDA}"
  if platform == "tpu":
    return f"No TPU PJRT plugin (libtpu) is installed. Install it with: {INSTALL_TPU}"
  return (f"No XLA PJRT plugin is installed (the XLA backend needs one). Install the CPU "
          f"plugin with: {INSTALL_CPU}")
