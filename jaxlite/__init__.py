"""jaxlite: composable transformations of NumPy programs, rebuilt from scratch.

Use it as JAX: ``import jaxlite as jax; import jaxlite.numpy as jnp``.
"""
from jaxlite._src.base.version import __version__

from jaxlite._src.base.config import config
from jaxlite._src import backends as _backends
from jaxlite._src.core.array import PublicArray as Array
from jaxlite._src.core.core import ShapeDtypeStruct
from jaxlite._src.libraries.numpy import array_methods as _array_methods
from jaxlite._src.api import (
    make_jaxpr, eval_shape, device_put, device_get, block_until_ready, disable_jit,
    enable_x64, log_compiles, explain_cache_misses, numpy_dtype_promotion,
    default_matmul_precision, numpy_rank_promotion, default_device, checking_leaks,
    check_tracer_leaks, threefry_partitionable, default_prng_impl, enable_custom_prng,
    legacy_prng_key, debug_key_reuse, softmax_custom_jvp, no_tracing,
    enable_checks, ensure_compile_time_eval, allow_f16_reductions, no_execution,
    array_garbage_collection_guard, auto_pcast, remove_size_one_mesh_axis_from_type,
    thread_guard, jax2tf_associative_scan_reductions, memory,
    typeof, effects_barrier, process_count, process_index, host_count, host_id, live_arrays,
    process_indices, host_ids, copy_to_host_async,
    print_environment_info, named_call, named_scope, linear_transpose, closure_convert,
    custom_gradient)
from jaxlite._src.base.dtypes import float0
from jaxlite._src.base.transfer_guard import (
    transfer_guard, transfer_guard_host_to_device, transfer_guard_device_to_host,
    transfer_guard_device_to_device)
from jaxlite._src.autodiff_api import jvp, linearize, vjp, grad, value_and_grad, fwd_and_bwd
from jaxlite._src import autodiff_api as _autodiff_api
from jaxlite._src.base.config import make_user_context
from jaxlite._src.libraries.numpy.indexing import dslice as ds
import types as _types
# jax.ad: how VJP.with_refs is told, and tells, which cotangents are wanted
ad = _types.SimpleNamespace(DontWant=_autodiff_api.DontWant, DidntWant=_autodiff_api.DidntWant,
                            GradRef=_autodiff_api.GradRef, GradValue=_autodiff_api.GradValue)
del _types, _autodiff_api
from jaxlite._src.jit import jit
from jaxlite._src.debugging import pure_callback
from jaxlite._src.lax.custom_derivatives import (custom_jvp, custom_vjp, checkpoint, remat,
                                             checkpoint_policies)
from jaxlite._src.vmap_api import vmap
from jaxlite._src.autodiff_api import jacfwd, jacrev, hessian
from jaxlite._src.autodiff_api import jacrev as jacobian
from jaxlite._src.backends import devices, local_devices, default_backend, Device
from jaxlite import (numpy, lax, tree_util, tree, errors, dtypes, ops, stages, profiler,
                     debug, dlpack, custom_batching, image)


def device_count(backend=None) -> int:
  """How many devices ``backend`` ('cpu', 'tpu' or 'gpu'; default: the default backend)
  has.

  Raises RuntimeError for a backend that is unknown or does not work here, as JAX does.
  """
  return len(devices(backend))


local_device_count = device_count


def clear_caches():
  """Empty every in-process cache (compiled functions, dtype promotion)."""
  from jaxlite._src.base import dtypes as _dtypes
  from jaxlite._src import jit as _jit
  _jit.clear_caches()
  _dtypes.clear_caches()


del _backends, _array_methods
from jaxlite import random, nn  # noqa

# -- several devices (issue 18): shardings, pmap, shard_map
from jaxlite import sharding  # noqa: E402
from jaxlite._src.sharding import (  # noqa: E402
    make_mesh, make_array_from_callback, make_array_from_single_device_arrays,
    make_array_from_process_local_data)
from jaxlite._src.sharding import NamedSharding, PartitionSpec as P, Shard  # noqa: E402
from jaxlite._src.sharding import set_mesh, reshard  # noqa: E402
from jaxlite._src.sharding_map import shard_map, smap  # noqa: E402
from jaxlite._src.pmap import pmap  # noqa: E402
from jaxlite._src import sharding_jit as _sharding_jit  # noqa: E402,F401  (jit's shardings)
del _sharding_jit
from jaxlite import distributed  # noqa: E402

# Running JAX programs on jaxlite (issue 17): `import jax` served by jaxlite.
from jaxlite._src.jax_alias import install_as_jax  # noqa
from jaxlite._src.api import debug_nans, debug_infs  # noqa
from jaxlite import core, typing  # noqa: imported by `import jax` in JAX too
from jaxlite._src import debug_nans as _debug_nans  # noqa: watches jax_debug_nans/infs
from jaxlite import custom_derivatives, monitoring  # noqa: E402  (attributes of jax in JAX too)
from jaxlite import interpreters  # noqa: E402  (jax.interpreters.xla is read as an attribute)
# Mutable array references (jax.new_ref, jax.Ref, jax.ref.get/set/swap/addupdate)
from jaxlite import ref  # noqa: E402
from jaxlite.ref import Ref, new_ref, empty_ref, free_ref, freeze  # noqa: E402

# Submodules that `import jax` leaves as attributes of jax (`jax.scipy.special.gammaln`
# with no `import jax.scipy`): jaxlite imports each when first read, so `import jaxlite`
# stays light (SciPy and the experimental modules load on demand).
_SUBMODULES_ON_DEMAND = frozenset({"api_util", "experimental", "scipy"})


def __getattr__(name):
  if name in _SUBMODULES_ON_DEMAND:
    import importlib
    return importlib.import_module(f"jaxlite.{name}")
  raise AttributeError(f"module 'jaxlite' has no attribute {name!r}")
