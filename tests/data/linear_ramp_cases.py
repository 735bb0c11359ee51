"""Cases of jnp.linspace and jnp.pad(mode='linear_ramp') that
make_linear_ramp_reference.py records from JAX and tests/test_linear_ramp.py replays.

``cases()`` maps a key ``name|dtype`` to the source of an expression over ``jnp`` and
``np``. Each integer case has a ``|float32`` twin: the ramp JAX floors, so that the test
can leave out the few positions within a few ulps of an integer, where the floor depends
on how XLA fused the arithmetic (the shape, the CPU), not on the rule.
"""
SIGNED = ["int32", "int8", "int16"]
# name -> (source with {d} for the dtype, the integer dtypes it is recorded for)
CASES = {
    "linspace_0_10_7": ("jnp.linspace(0, 10, 7, dtype=np.{d})", SIGNED + ["uint8"]),
    "linspace_3_m4_6": ("jnp.linspace(3, -4, 6, dtype=np.{d})", SIGNED),
    "linspace_m7_5_9_open": ("jnp.linspace(-7, 5, 9, endpoint=False, dtype=np.{d})", SIGNED),
    "linspace_0_120_10_open": ("jnp.linspace(0, 120, 10, endpoint=False, dtype=np.{d})",
                               SIGNED + ["uint8"]),
    "linspace_10_0_4_open": ("jnp.linspace(10, 0, 4, endpoint=False, dtype=np.{d})",
                             SIGNED + ["uint8"]),
    "linspace_m100_100_13": ("jnp.linspace(-100, 100, 13, dtype=np.{d})", SIGNED),
    "linspace_rows": ("jnp.linspace(np.array([0, -5]), np.array([9, 20]), 6, endpoint=False,"
                      " axis=1, dtype=np.{d})", SIGNED),
    "pad_1d": ("jnp.pad(np.array([1, 7, 3], np.{d}), (4, 3), 'linear_ramp', "
               "end_values=(10, 60))", SIGNED + ["uint8"]),
    "pad_1d_signed": ("jnp.pad(np.array([100, -37, 59], np.{d}), 5, 'linear_ramp', "
                      "end_values=(-6, 0))", SIGNED),
    "pad_2d": ("jnp.pad(np.array([[3, 7, 1], [120, 100, 50]], np.{d}), ((3, 2), (2, 4)), "
               "'linear_ramp', end_values=((1, 110), (3, 4)))", SIGNED + ["uint8"]),
    "pad_2d_scalar": ("jnp.pad(np.array([[30, -70, 10], [-100, 100, 50]], np.{d}), 3, "
                      "'linear_ramp', end_values=-20)", SIGNED),
}
FLOATS = ["float32", "float16"]


def cases():
  out = {}
  for name, (src, ints) in CASES.items():
    for d in ints:
      out[f"{name}|{d}"] = src.format(d=d)
    for d in FLOATS if name.startswith("linspace") else ["float32"]:
      out[f"{name}|{d}"] = src.format(d=d)
  return out
