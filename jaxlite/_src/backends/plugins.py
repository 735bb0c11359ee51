"""Finding PJRT plugins installed from PyPI, without importing jax or jaxlib.

CPU: ``xla-cpu-pjrt`` installs ``xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so``.
CUDA: ``jax-cuda13-pjrt`` / ``jax-cuda12-pjrt`` install ``jax_plugins/xla_cuda13`` (or
``xla_cuda12``) holding ``xla_cuda_plugin.so``. Only the file is located here; it is
loaded by ``pjrt.load_api`` when a client is first needed.
"""
from __future__ import annotations

import glob
import importlib.util
import os
from typing import NamedTuple

INSTALL_CPU = "pip install xla-cpu-pjrt"
INSTALL_CUDA = "pip install 'jaxlite[cuda]'  (or: pip install jax-cuda13-pjrt)"


class Plugin(NamedTuple):
  platform: str   # "cpu" or "cuda"
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
      return Plugin("cuda", path, package)
  return None


def find_plugin(platform: str | None = None) -> Plugin | None:
  """The plugin for ``platform`` ('cpu', 'cuda'), or the best available one if None.

  ``JAXLITE_PLATFORM`` (as ``JAX_PLATFORMS``) overrides the automatic choice. A CUDA
  plugin is preferred when installed, as JAX prefers a GPU.
  """
  platform = platform or os.environ.get("JAXLITE_PLATFORM") or None
  if platform == "cpu":
    return cpu_plugin()
  if platform in ("cuda", "gpu"):
    return cuda_plugin()
  if platform is not None:
    return None
  return cuda_plugin() or cpu_plugin()


def missing_message(platform: str | None = None) -> str:
  if platform in ("cuda", "gpu"):
    return f"No CUDA PJRT plugin is installed. Install one with: {INSTALL_CUDA}"
  return (f"No XLA PJRT plugin is installed (the XLA backend needs one). Install the CPU "
          f"plugin with: {INSTALL_CPU}")
