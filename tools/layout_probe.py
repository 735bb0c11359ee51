"""Prints how arrays are laid out in device memory (x.format, device_put and jit with a
Format, compiled formats) under JAX or jaxlite, for diffing the two on one machine:

  python3 tools/layout_probe.py jax > jax.txt; python3 tools/layout_probe.py jaxlite > jaxlite.txt
"""
import sys
import numpy as np
if sys.argv[1] == "jax":
  import jax, jax.numpy as jnp, jax.experimental.layout
else:
  import jaxlite as jax, jaxlite.numpy as jnp, jaxlite.experimental.layout
Format, Layout = jax.experimental.layout.Format, jax.experimental.layout.Layout
s = jax.sharding.SingleDeviceSharding(jax.devices()[0])
print(jax.devices()[0].platform)
for shape, order in [((4, 8), (1, 0)), ((256, 128), (1, 0)), ((2, 3, 4), (2, 0, 1)),
                     ((8, 128), (0, 1)), ((16,), (0,))]:
  a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
  x = jnp.asarray(a)
  print("default", shape, x.format.layout)
  try:
    y = jax.device_put(a, Format(Layout(order), s))
    print("put", order, y.format.layout, np.array_equal(np.asarray(y), a))
    z = jax.jit(lambda v: v * 2, out_shardings=Format(Layout(order), s))(x)
    print("jit out", z.format.layout, np.array_equal(np.asarray(z), a * 2))
    w = jax.jit(lambda v: v + 1)(y)
    print("plain jit", w.format.layout, np.array_equal(np.asarray(w), a + 1))
    c = jax.jit(lambda v: v + 1, out_shardings=Format(Layout(order), s)).lower(x).compile()
    print("compiled", c.output_formats.layout)
    r = jax.device_put(a, y.format)
    print("round trip", r.format.layout, np.array_equal(np.asarray(r), a))
    d = jax.device_put(y, x.format)
    print("to default", d.format.layout, np.array_equal(np.asarray(d), a))
  except Exception as e:
    print("error", type(e).__name__, str(e)[:200])
