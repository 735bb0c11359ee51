"""``jax.debug.inspect_array_sharding``: the shardings it calls back with, eagerly and under
jit/vmap/grad, and the jaxpr it stages, for ``make_inspect_sharding_reference.py`` (run
with real JAX) and ``tests/test_inspect_sharding.py``. ``report(jax)`` gives reprs."""
import numpy as np


def report(jax):
  jnp = jax.numpy
  AxisType, NamedSharding = jax.sharding.AxisType, jax.sharding.NamedSharding
  P = jax.sharding.PartitionSpec
  mesh = jax.make_mesh((1,), ("x",), axis_types=(AxisType.Explicit,))
  x = jnp.arange(8.)
  xs = jax.device_put(x, NamedSharding(mesh, P("x")))
  seen = []

  def cb(s):
    seen.append(repr(s))

  def inspecting(a):
    jax.debug.inspect_array_sharding(a, callback=cb)
    return a * 2

  calls = {
      "eager": lambda: jax.debug.inspect_array_sharding(x, callback=cb),
      "eager_named": lambda: jax.debug.inspect_array_sharding(xs, callback=cb),
      "vmap": lambda: jax.vmap(inspecting)(x),
      "grad": lambda: jax.grad(lambda a: inspecting(a).sum())(x),
      "jit": lambda: jax.jit(inspecting)(x),
      "jit_named": lambda: jax.jit(inspecting)(xs),
      "jit_in_shardings": lambda: jax.jit(inspecting, in_shardings=NamedSharding(mesh, P()))(x),
      "jit_lower_compile": lambda: jax.jit(inspecting).lower(x).compile() and None,
  }
  out = {}
  for name, call in calls.items():
    seen.clear()
    result = call()
    out[name] = repr(seen)
    if result is not None:
      out[name + ".result"] = repr(np.asarray(result).tolist())
  out["jaxpr"] = str(jax.make_jaxpr(inspecting)(x))
  out["make_mesh_default"] = repr(jax.make_mesh((1,), ("x",)))
  return out
