"""Record JAX 0.10.2's answers for tests/test_api_surface_gaps.py and the 4- and 8-device
cases of tests/spmd_cases.py that use them (jax.debug.visualize_sharding's tables, smap,
explicit_axes).

Run with the reference venv, with ``rich`` importable (JAX's visualize_sharding draws with
it): PYTHONPATH=<a folder holding rich> /work/jaxref/bin/python
tests/data/make_api_surface_reference.py (it starts one process per device count). Never
imported by the tests.
"""
import json
import os
import pathlib
import subprocess
import sys

OUT = pathlib.Path(__file__).parent / "api_surface_reference.json"

CHILD = r'''
import contextlib, io, json
import numpy as np, jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType
N = jax.device_count()

def shown(fn):
  buf = io.StringIO()
  with contextlib.redirect_stdout(buf):
    fn()
  return buf.getvalue()

out = {"visualize": {}}
vis = out["visualize"]
if N == 1:
  d = jax.sharding.SingleDeviceSharding(jax.devices()[0])
  vis["single_4x4"] = shown(lambda: jax.debug.visualize_sharding((4, 4), d, use_color=False))
  vis["single_8"] = shown(lambda: jax.debug.visualize_sharding((8,), d, use_color=False))
  vis["single_8x2_scale2_min12"] = shown(lambda: jax.debug.visualize_sharding(
      (8, 2), d, use_color=False, scale=2, min_width=12))
else:
  mesh = jax.make_mesh((N // 2, 2), ("x", "y"))
  vis["mesh2d_xy_4x4"] = shown(lambda: jax.debug.visualize_array_sharding(
      jax.device_put(jnp.zeros((4, 4)), NamedSharding(mesh, P("x", "y"))), use_color=False))
if N == 4:
  cases = {"x_4x4": (["x"], (4, 4)), "y_4x8": ([None, "y"], (4, 8)),
           "xy_8": ([["x", "y"]], (8,)), "x_8": (["x"], (8,)), "rep_8": ([], (8,)),
           "yx_6x4": (["y", "x"], (6, 4))}
  out["visualize_cases"] = {k: [spec, list(shape)] for k, (spec, shape) in cases.items()}
  for k, (spec, shape) in cases.items():
    spec = P(*[tuple(e) if isinstance(e, list) else e for e in spec])
    vis[k] = shown(lambda: jax.debug.visualize_sharding(shape, NamedSharding(mesh, spec),
                                                         use_color=False))
  amesh = jax.make_mesh((4,), ("a",), axis_types=(AxisType.Auto,))
  x = jnp.arange(16.).reshape(4, 4)
  with jax.set_mesh(amesh):
    f = jax.smap(lambda a: a * jax.lax.axis_index("a"), in_axes=0, out_axes=0,
                 axis_name="a")
    g = jax.smap(lambda a, b: (a.sum(0), b), in_axes=(1, None), out_axes=(0, None),
                 axis_name="a")
    h = jax.smap(lambda a: jax.lax.psum(a, "a"), in_axes=0, out_axes=None, axis_name="a")
    ga, gb = g(x, jnp.ones(2))
    out["smap"] = {"f": np.asarray(f(x)).tolist(), "g0": np.asarray(ga).tolist(),
                   "g1": np.asarray(gb).tolist(), "h": np.asarray(h(jnp.arange(4.))).tolist()}
    errors = {}
    for k, kw in {"axis_name_tuple": dict(in_axes=0, out_axes=0, axis_name=("a",)),
                  "in_axes_list": dict(in_axes=[0], out_axes=0, axis_name="a"),
                  "out_axes_str": dict(in_axes=0, out_axes="x", axis_name="a"),
                  "in_axes_float": dict(in_axes=(0.5,), out_axes=0, axis_name="a")}.items():
      try:
        jax.smap(lambda a: a, **kw)(x)
      except Exception as e:
        errors[k] = [type(e).__name__, str(e)]
    try:
      jax.smap(lambda a: a, out_axes=0, axis_name="a")(x)
    except Exception as e:
      errors["infer_on_auto"] = [type(e).__name__, str(e)]
    out["smap_errors"] = errors
    inner = []
    def body(a):
      inner.append(str(jax.typeof(a)))
      return a * 2
    y = jax.sharding.explicit_axes(body, in_sharding=P("a"))(x)
    out["explicit_axes"] = {"inner": inner[0], "out": str(jax.typeof(y)),
                            "value": np.asarray(y).tolist()}
print(json.dumps(out))
'''


def main():
  result = {}
  for n in (1, 4, 8):
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n}",
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, check=True)
    result[str(n)] = json.loads(proc.stdout)
  import jax
  result["jax_version"] = jax.__version__
  OUT.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
  main()
