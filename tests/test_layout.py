"""Device memory layouts (``jax.experimental.layout``): ``Layout``, ``Format``, arrays laid
out in another dimension order, jit's layouts, ``with_layout_constraint``.

Expected reprs, messages and layouts were recorded from JAX 0.10.2 on CPU; values are
checked against NumPy (a layout never changes a value). The layouts over a mesh of
devices are in ``spmd_cases.py``."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.experimental.layout import Format, Layout, with_layout_constraint
from jaxlite.sharding import SingleDeviceSharding

COL = "Layout(major_to_minor=(1, 0), tiling=(), sub_byte_element_size_in_bits=0)"
ROW = "Layout(major_to_minor=(0, 1), tiling=(), sub_byte_element_size_in_bits=0)"
ASKED_COL = "Layout(major_to_minor=(1, 0), tiling=None, sub_byte_element_size_in_bits=0)"


@pytest.fixture
def s0():
  return SingleDeviceSharding(jax.devices()[0])


def m16():
  return np.arange(16.0, dtype=np.float32).reshape(4, 4)


def test_layout_and_format_are_jaxs_values():
  assert repr(Layout((1, 0))) == ASKED_COL
  assert repr(Layout.AUTO) == "AUTO"
  assert repr(Format()) == "Format(layout=None, sharding=None)"
  assert repr(Format(Layout.AUTO)) == "Format(layout=AUTO, sharding=None)"
  assert Layout((1, 0)) == Layout([1, 0], tiling=None)
  assert hash(Layout((1, 0))) == hash(Layout((1, 0), None))
  assert Layout((0, 1), ()) != Layout((0, 1))
  assert (repr(Layout((1, 0)).update(tiling=((8,),)))
          == "Layout(major_to_minor=(1, 0), tiling=((8,),), sub_byte_element_size_in_bits=0)")
  with pytest.raises(ValueError, match=r"Length of major_to_minor and the rank of the value "
                     r"should match. Got major_to_minor=\(1, 0\) and shape=\(2, 2, 2\)"):
    Layout((1, 0)).check_compatible_aval((2, 2, 2))
  with pytest.raises(ValueError, match="Sharding has to be concrete when layout is of type"):
    Format(Layout((1, 0)))
  with pytest.raises(TypeError, match="Invalid value received for the layout argument"):
    Format("x")
  with pytest.raises(TypeError, match="Invalid value received for the sharding argument"):
    Format(None, jax.sharding.PartitionSpec("a"))


def test_an_array_reports_its_format(s0):
  x = jnp.arange(12.0).reshape(3, 4)
  assert repr(x.format) == (f"Format(layout={ROW}, sharding=SingleDeviceSharding("
                            "device=CpuDevice(id=0), memory_kind=device))")
  assert repr(jnp.float32(3).format.layout) == (
      "Layout(major_to_minor=(), tiling=(), sub_byte_element_size_in_bits=0)")


def test_device_put_lays_an_array_out_column_major(s0):
  y = jax.device_put(jnp.asarray(m16()), Format(Layout((1, 0)), s0))
  assert repr(y.format.layout) == COL
  assert y.committed and y.sharding == s0
  np.testing.assert_array_equal(np.asarray(y), m16())
  # every way of reading or computing with it sees the same values
  np.testing.assert_array_equal(np.asarray(y + 1), m16() + 1)
  np.testing.assert_array_equal(np.asarray(y.sum(0)), m16().sum(0))
  np.testing.assert_array_equal(np.asarray(y.T[0]), m16().T[0])
  np.testing.assert_array_equal(np.asarray(y.addressable_shards[0].data), m16())
  assert repr(y.T.format.layout) == ROW   # (computed: the default layout, as in JAX)
  # already there: kept; a Format with no layout asks for the default one
  assert repr(jax.device_put(y, s0).format.layout) == COL
  # an array's own format lays another out the same way
  again = jax.device_put(m16() + 1, y.format)
  assert again.format == y.format
  np.testing.assert_array_equal(np.asarray(again), m16() + 1)
  back = jax.device_put(y, Format(None, s0))
  assert repr(back.format.layout) == ROW
  np.testing.assert_array_equal(np.asarray(back), m16())


@pytest.mark.parametrize("shape,order,dtype", [
    ((2, 3, 4), (2, 0, 1), np.float32), ((2, 3), (1, 0), np.int8),
    ((3, 1, 2, 2), (3, 1, 0, 2), np.float64), ((5, 7), (1, 0), np.complex64)])
def test_device_put_in_any_dimension_order_keeps_values(s0, shape, order, dtype):
  value = (np.arange(np.prod(shape)) % 100).reshape(shape).astype(dtype)
  y = jax.device_put(value, Format(Layout(order), s0))
  assert y.format.layout == Layout(order, ())
  np.testing.assert_array_equal(np.asarray(y), value)
  np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a * 2)(y)), value * 2)


def test_bad_layouts_are_refused_before_anything_runs(s0):
  x = jnp.ones((4, 4))
  with pytest.raises(ValueError, match=r"Length of major_to_minor and the rank"):
    jax.device_put(x, Format(Layout((1, 0, 2)), s0))
  with pytest.raises(jax.errors.JaxRuntimeError, match="INVALID_ARGUMENT"):
    jax.device_put(x, Format(Layout((1, 1)), s0))
  with pytest.raises(NotImplementedError, match="tiles"):   # (JAX tiles on CPU too)
    jax.device_put(x, Format(Layout((1, 0), tiling=((2, 2),)), s0))
  with pytest.raises(ValueError, match="must be of type `Layout`"):
    with_layout_constraint(x, "C")


@pytest.mark.parametrize("tier", ["numpy", "xla", "auto"])
def test_a_plain_jit_reads_an_array_in_another_layout_by_its_values(s0, tier):
  # PJRT would read a column-major buffer fed to a row-major parameter permuted: a plain
  # jit on either tier must read it by its values (NumPy on the same values: the oracle)
  y = jax.device_put(jnp.asarray(m16()), Format(Layout((1, 0)), s0))
  f = lambda a: a @ jnp.arange(4.0) + a[0]
  expected = m16() @ np.arange(4.0, dtype=np.float32) + m16()[0]
  with jax.config.override("jaxlite_tier", tier):
    jitted = jax.jit(f)
    for _ in range(3):   # the first call, then the cached dispatch
      out = jitted(y)
      np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
      assert out.format.layout == Layout((0,), ())


def test_jit_out_and_in_layouts(s0):
  x = jnp.asarray(m16())
  f = jax.jit(lambda a: a * 2, out_shardings=Format(Layout((1, 0)), s0))
  w = f(x)
  assert repr(w.format.layout) == COL
  np.testing.assert_array_equal(np.asarray(w), m16() * 2)
  # an uncommitted row-major argument is relaid out to the layout the jit reads
  g = jax.jit(lambda a: a + 1, in_shardings=Format(Layout((1, 0)), s0))
  out = g(x)
  assert repr(out.format.layout) == ROW
  np.testing.assert_array_equal(np.asarray(out), m16() + 1)
  # a committed argument laid out otherwise than the jit's layout is JAX's error
  y = jax.device_put(x, Format(Layout((1, 0)), s0))
  with pytest.raises(ValueError) as e:
    jax.jit(lambda a: a + 1, in_shardings=Format(Layout((0, 1)), s0))(y)
  assert str(e.value) == (
      "Layout passed to jit does not match the layout on the respective arg. Got jit "
      "layout: Layout(major_to_minor=(0, 1), tiling=None, sub_byte_element_size_in_bits=0),"
      f"\narg layout: {COL} for arg type: float32[4,4].")
  both = jax.jit(lambda a: a.T + 1, in_shardings=Format(Layout((1, 0)), s0),
                 out_shardings=Format(Layout((1, 0)), s0))(y)
  assert repr(both.format.layout) == COL
  np.testing.assert_array_equal(np.asarray(both), m16().T + 1)
  # a sharding alone reads a committed argument in its own layout
  own = jax.jit(lambda a: a.T + 1, in_shardings=s0)(y)
  assert repr(own.format.layout) == ROW
  np.testing.assert_array_equal(np.asarray(own), m16().T + 1)
  with pytest.raises(ValueError, match="incompatible with its layout annotation"):
    jax.jit(lambda a: a + 1, out_shardings=Format(Layout((1, 0, 2)), s0))(x)


def test_auto_layouts_are_xlas_choice(s0):
  x = jnp.asarray(m16())
  np.testing.assert_array_equal(
      np.asarray(jax.jit(lambda a: a + 1, in_shardings=Format(Layout.AUTO))(x)), m16() + 1)
  out = jax.jit(lambda a: a + 1, out_shardings=Format(Layout.AUTO))(x)
  assert repr(out.format.layout) == ROW
  compiled = jax.jit(lambda a: a * 2, in_shardings=Format(Layout.AUTO),
                     out_shardings=Format(Layout.AUTO)).lower(
                         jax.ShapeDtypeStruct((4, 4), jnp.float32)).compile()
  assert repr(compiled.output_formats.layout) == ROW


def test_compiled_stages_know_the_layouts(s0):
  x = jnp.asarray(m16())
  jitted = jax.jit(lambda a: a + 1, in_shardings=Format(Layout((1, 0)), s0),
                   out_shardings=Format(Layout((1, 0)), s0))
  lowered = jitted.lower(x)
  # JAX 0.10.2 writes the same attribute (XLA's minor-to-major order)
  assert ('%arg0: tensor<4x4xf32> {mhlo.layout_mode = "{0,1}"}'
          in lowered.as_text())
  compiled = lowered.compile()
  assert repr(compiled.output_formats) == (
      f"Format(layout={COL}, sharding=SingleDeviceSharding(device=CpuDevice(id=0), "
      "memory_kind=device))")
  assert repr(compiled.input_formats[0][0].layout) == COL
  out = compiled(x)
  assert repr(out.format.layout) == COL
  np.testing.assert_array_equal(np.asarray(out), m16() + 1)
  plain = jax.jit(lambda a: a + 1).lower(x)
  assert "layout_mode" not in plain.as_text()
  assert repr(plain.compile().output_formats.layout) == ROW


def test_shape_dtype_struct_takes_a_format(s0):
  s = jax.ShapeDtypeStruct((4, 4), jnp.float32, sharding=Format(Layout((1, 0)), s0))
  assert repr(s) == (
      "ShapeDtypeStruct(shape=(4, 4), dtype=float32, sharding=SingleDeviceSharding("
      f"device=CpuDevice(id=0), memory_kind=device), format={ASKED_COL})")
  assert s.sharding == s0 and s.format == Format(Layout((1, 0)), s0)
  compiled = jax.jit(lambda a: a * 2).lower(s).compile()
  assert repr(compiled.input_formats[0][0].layout) == COL
  with pytest.raises(TypeError, match="`Layout.AUTO` cannot be used"):
    jax.ShapeDtypeStruct((4, 4), jnp.float32, sharding=Format(Layout.AUTO, s0))


def test_with_layout_constraint_eagerly_and_in_jit():
  x = jnp.asarray(m16())
  y = with_layout_constraint(x, Layout((1, 0)))
  assert repr(y.format.layout) == COL and y.committed and not x.committed
  np.testing.assert_array_equal(np.asarray(y), m16())
  f = jax.jit(lambda a: with_layout_constraint(a * 2, Layout((1, 0))))
  out = f(x)   # a result computed by the constraint keeps its layout, as in JAX
  assert repr(out.format.layout) == COL
  np.testing.assert_array_equal(np.asarray(out), m16() * 2)
  assert repr(f.lower(x).compile().output_formats.layout) == COL
  assert "LayoutConstraint" in f.lower(x).as_text()
  later = jax.jit(lambda a: with_layout_constraint(a * 2, Layout((1, 0))) + 1)(x)
  assert repr(later.format.layout) == ROW
  np.testing.assert_array_equal(np.asarray(later), m16() * 2 + 1)


def test_layout_constraint_jaxprs_are_jaxs():
  x = jnp.ones((4, 4))
  assert str(jax.make_jaxpr(lambda a: with_layout_constraint(a, Layout((1, 0))))(x)) == (
      "{ lambda ; a:f32[4,4]. let\n"
      "    b:f32[4,4] = layout_constraint[\n"
      f"      layout={ASKED_COL}\n"
      "    ] a\n"
      "  in (b,) }")
  batched = jax.make_jaxpr(jax.vmap(lambda a: with_layout_constraint(a * 2, Layout((0, 1)))))
  assert str(batched(jnp.ones((3, 4, 4)))) == (
      "{ lambda ; a:f32[3,4,4]. let\n"
      "    b:f32[3,4,4] = mul a 2.0:f32[]\n"
      "    c:f32[3,4,4] = layout_constraint[\n"
      "      layout=Layout(major_to_minor=(0, 1, 2), tiling=None, "
      "sub_byte_element_size_in_bits=0)\n"
      "    ] b\n"
      "  in (c,) }")


def test_layout_constraint_differentiates_and_batches():
  x = jnp.asarray(m16())
  g = jax.grad(lambda a: (with_layout_constraint(a * 2, Layout((1, 0))) ** 2).sum())(x)
  np.testing.assert_allclose(np.asarray(g), 8 * m16())
  batched = jax.vmap(lambda a: with_layout_constraint(a * 2, Layout((1, 0))))(
      jnp.stack([x, x + 1]))
  np.testing.assert_array_equal(np.asarray(batched), np.stack([m16(), m16() + 1]) * 2)
  tangent = jax.jvp(lambda a: with_layout_constraint(jnp.sin(a), Layout((1, 0))),
                    (x,), (jnp.ones_like(x),))[1]
  np.testing.assert_allclose(np.asarray(tangent), np.cos(m16()), rtol=1e-6)
