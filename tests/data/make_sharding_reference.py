"""Record JAX 0.10.2's shardings and shard_map answers for tests/spmd_cases.py.

Run with the reference venv: /work/jaxref/bin/python tests/data/make_sharding_reference.py
(it starts one process per device count). Never imported by the tests.
"""
import json
import os
import pathlib
import subprocess
import sys

OUT = pathlib.Path(__file__).parent / "sharding_reference.json"

CHILD = r'''
import json, numpy as np, jax, jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding
N = jax.device_count()
auto = jax.sharding.AxisType.Auto
m = jax.make_mesh((N // 2, 2), ("x", "y"), axis_types=(auto, auto))
s = NamedSharding(m, P("x", "y"))
x = jax.device_put(jnp.arange(32.).reshape(8, 4), s)
specs = {"xy": ["x", "y"], "x": ["x"], "_y": [None, "y"], "both": [["x", "y"]], "none": [],
         "yx": ["y", "x"]}
hlo = {k: str(NamedSharding(m, P(*[tuple(e) if isinstance(e, list) else e for e in v]))
              ._to_xla_hlo_sharding(2)) for k, v in specs.items()}
n = N // 2
perm = [(i, (i + 1) % n) for i in range(n)]
def f(a):
  return (lax.psum(a, "x"), lax.all_gather(a, "y", tiled=True, axis=1),
          (lax.axis_index("x") + 10 * lax.axis_index("y")).reshape(1, 1),
          lax.ppermute(a, "x", perm), lax.pmax(a, ("x", "y")))
g = jax.shard_map(f, mesh=m, in_specs=P("x", "y"), check_vma=False,
                  out_specs=(P(None, "y"), P("x"), P("x", "y"), P("x", "y"), P()))
h = jax.shard_map(lambda a: lax.all_to_all(a, "x", 0, 0, tiled=True), mesh=m,
                  in_specs=P("x"), out_specs=P("x"), check_vma=False)
print(json.dumps({
    "mesh_repr": repr(m), "named_repr": repr(s),
    "single_repr": repr(SingleDeviceSharding(jax.devices()[0])),
    "shard_shape": list(s.shard_shape((8, 4))),
    "indices": [[[i.start, i.stop] for i in sh.index] for sh in x.addressable_shards],
    "hlo_specs": specs, "hlo": hlo,
    "shard_map": [np.asarray(o).tolist() for o in g(jnp.arange(64.).reshape(8, 8))],
    "shard_map_a2a": np.asarray(h(jnp.arange(4. * n * n).reshape(-1, 1))).tolist(),
}))
'''

result = {}
for n in (4, 8):
  env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n}",
             JAX_PLATFORMS="cpu")
  out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                       text=True, check=True).stdout
  result[str(n)] = json.loads(out.strip().splitlines()[-1])
OUT.write_text(json.dumps(result, indent=1) + "\n")
print("wrote", OUT)
