"""Record what JAX 0.10.2 says for tests/test_ecosystem.py (run with /work/jaxref/bin/python).

    /work/jaxref/bin/python tests/data/make_ecosystem_reference.py

Writes tests/data/ecosystem_reference.json: the public names of the modules JAX libraries
use, every commonly set config option's default, the errors bad values raise, and the
messages of jax_debug_nans/jax_debug_infs and jax_numpy_rank_promotion, and the sharding
in the types (``jax.typeof(x).sharding``) that optax reads.
"""
import inspect
import json
import os
import warnings

import jax
import jax.dtypes
import jax.flatten_util
import jax.numpy as jnp
import jax.test_util
import jax.tree
import jax.tree_util
import jax.typing

OPTIONS = [
    "jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
    "jax_debug_nans", "jax_debug_infs", "jax_numpy_rank_promotion",
    "jax_default_matmul_precision", "jax_platforms", "jax_traceback_filtering",
    "jax_enable_checks", "jax_default_prng_impl", "jax_threefry_partitionable",
    "jax_check_tracer_leaks", "jax_log_compiles", "jax_explain_cache_misses",
    "jax_disable_jit", "jax_enable_x64"]
BAD_VALUES = {
    "jax_numpy_rank_promotion": "sometimes", "jax_default_matmul_precision": "fastest",
    "jax_traceback_filtering": "all", "jax_default_prng_impl": "mt19937",
    "jax_persistent_cache_min_compile_time_secs": "soon", "jax_platforms": 3,
    "jax_compilation_cache_dir": 3,
}


def public(module):
  return sorted(n for n in dir(module) if not n.startswith("_"))


def error_of(thunk):
  try:
    thunk()
  except Exception as e:  # recorded, class and message
    return [type(e).__name__, str(e)]
  return None


def describe_sharding(s):
  """What optax and chex read of ``jax.typeof(x).sharding`` and its mesh."""
  m = s.mesh
  return {"repr": repr(s), "spec": repr(s.spec), "memory_kind": s.memory_kind,
          "num_devices": s.num_devices, "is_fully_replicated": s.is_fully_replicated,
          "mesh": repr(m), "empty": m.empty, "size": m.size, "axis_names": list(m.axis_names),
          "are_all_axes_explicit": m.are_all_axes_explicit,
          "are_all_axes_auto": m.are_all_axes_auto, "are_all_axes_manual": m.are_all_axes_manual,
          "device_set": error_of(lambda: s.device_set), "devices": error_of(lambda: m.devices)}


def typeof_sharding():
  """``jax.typeof(x).sharding`` eagerly, under jit, vmap and grad, and AbstractMesh."""
  from jax.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec as P
  out = {f"eager{list(shape)}": describe_sharding(jax.typeof(jnp.ones(shape)).sharding)
         for shape in [(), (3,), (3, 4)]}
  out["python_scalar"] = repr(jax.typeof(1.0).sharding)
  seen = {}
  def probe(name):
    def f(y):
      seen[name] = repr(jax.typeof(y).sharding)
      return y.sum()
    return f
  jax.jit(probe("jit"))(jnp.ones((3, 4)))
  jax.vmap(probe("vmap"))(jnp.ones((3, 4)))
  jax.grad(probe("grad"))(jnp.ones((3, 4)))
  out["traced"] = seen
  out["shard_shape"] = list(jax.typeof(jnp.ones((3, 4))).sharding.shard_shape((3, 4)))
  named = AbstractMesh((2, 3), ("a", "b"))
  explicit = AbstractMesh((2,), ("a",), axis_types=(AxisType.Explicit,))
  out["abstract_meshes"] = [[repr(m), m.size, m.are_all_axes_explicit, m.are_all_axes_auto,
                             [repr(t) for t in m.axis_types]] for m in (named, explicit)]
  out["named_shard_shape"] = list(NamedSharding(named, P("b", "a")).shard_shape((6, 4)))
  out["bad_axis"] = error_of(lambda: NamedSharding(AbstractMesh((), ()), P("x")))
  return out


def chex_surface():
  """What chex's asserts and fakes read: jitted functions' names and signatures, device
  counts per backend, jnp.array of a list of bfloat16 arrays, and the message of a
  checkify.check whose arguments are arrays in a container (chexify's assertions)."""
  def f(x, y=2, *, k=3):
    return x
  jitted = jax.jit(f)
  bf16 = jnp.bfloat16(128)
  listed = [jnp.array([bf16, bf16], dtype=jnp.bfloat16), jnp.array([bf16, bf16]),
            jnp.array((jnp.ones(2, jnp.bfloat16), [1.0, 2.0]), dtype=jnp.bfloat16)]
  from jax.experimental import checkify

  def checked(x, d):
    checkify.check(False, "s={} v={v} d={d} f={s:.2f}", x[0], v=x, d=d, s=x[1])
    return x
  err, _ = checkify.checkify(jax.jit(checked))(
      jnp.array([-1.0, 2.5]), {"a": jnp.float32(0), "b": jnp.int32(3)})
  return {"check_message": err.get(), "jit_type": type(jitted).__name__, "jit_repr": repr(jitted).split(" at 0x")[0],
          "jit_signature": str(inspect.signature(jitted, follow_wrapped=False)),
          "device_count": [jax.device_count("cpu"), jax.local_device_count("cpu")],
          "unknown_backend": error_of(lambda: jax.device_count("bogus"))[0],
          "array_of_bf16_arrays": [[str(a.dtype), a.tolist()] for a in listed]}


def main():
  # chex's set_n_cpu_devices reads it: no backend before the devices are first listed,
  # 'cpu' after
  created = [sorted(jax._src.xla_bridge._backends)]
  jax.devices()
  created.append(sorted(jax._src.xla_bridge._backends))
  out = {"xla_bridge_backends": created,
         "modules": {m.__name__: public(m) for m in (jax.tree, jax.dtypes, jax.typing,
                                                        jax.test_util, jax.flatten_util)}}
  out["defaults"] = {name: getattr(jax.config, name) for name in OPTIONS}
  out["bad_values"] = {name: [value, *error_of(lambda: jax.config.update(name, value))]
                       for name, value in BAD_VALUES.items()}
  out["unknown_option"] = error_of(lambda: jax.config.update("jax_no_such_option", 1))
  with jax.debug_nans(True):
    out["nan_eager"] = error_of(lambda: jnp.log(-jnp.ones(2)))
    out["nan_jit"] = error_of(lambda: jax.jit(lambda x: jnp.log(x) * 2)(-jnp.ones(2)))
  with jax.debug_infs(True):
    out["inf_eager"] = error_of(lambda: jnp.ones(2) / 0.0)
    out["inf_jit"] = error_of(lambda: jax.jit(lambda x: jnp.exp(x) + 1)(jnp.float32(100.0)))
  with jax.numpy_rank_promotion("raise"):
    out["rank_raise"] = error_of(lambda: jnp.ones(3) + jnp.ones((2, 3)))
  with jax.numpy_rank_promotion("warn"), warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    jnp.ones(3) * jnp.ones((2, 3))
    jnp.ones(3) * 2.0   # a scalar: no warning
  out["rank_warn"] = [str(w.message) for w in seen]
  flat, unravel = jax.flatten_util.ravel_pytree({"a": jnp.arange(2, dtype=jnp.int32),
                                                 "b": [jnp.ones((2, 2)), 3.0]})
  out["ravel"] = {"flat": flat.tolist(), "dtype": str(flat.dtype),
                  "leaf_dtypes": [str(x.dtype) for x in jax.tree.leaves(unravel(flat))],
                  "wrong_dtype": error_of(lambda: unravel(flat.astype(jnp.float16)))}
  out["typeof_sharding"] = typeof_sharding()
  out["chex_surface"] = chex_surface()
  path = os.path.join(os.path.dirname(__file__), "ecosystem_reference.json")
  with open(path, "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
  main()
