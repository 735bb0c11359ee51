"""pmap, shard_map, sharded jit and shardings on N CPU devices, on both tiers.

Not collected directly: tests/test_sharding.py and tests/test_pmap.py run this file with
pytest in a subprocess whose device count is fixed (JAX_NUM_CPU_DEVICES=4 or 8), since
a process's devices are fixed when first used. Every result is compared with the same
computation done on one device with NumPy (or with values recorded from JAX 0.10.2).
"""
import json
import os
import pathlib

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src import tiers
from jaxlite.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding

N = int(os.environ["JAX_NUM_CPU_DEVICES"])
REF = json.loads((pathlib.Path(__file__).parent / "data" / "sharding_reference.json")
                 .read_text())[str(N)]
TIERS = ["numpy", "xla"]
AUTO = jax.sharding.AxisType.Auto


@pytest.fixture(params=TIERS)
def tier(request):
  if request.param == "xla" and not tiers.xla_available():
    pytest.skip("no XLA plugin")
  with jax.config.override("jaxlite_tier", request.param):
    yield request.param


def mesh2d():
  return jax.make_mesh((N // 2, 2), ("x", "y"), axis_types=(AUTO, AUTO))   # (as recorded)


def close(a, b):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=2e-5)  # float32 rounding


# ----------------------------------------------------------------------------- devices

def test_device_count():
  assert jax.device_count() == jax.local_device_count() == N
  assert [d.id for d in jax.devices()] == list(range(N))
  assert repr(jax.devices()[1]) == "CpuDevice(id=1)"


def test_device_count_is_fixed_once_used():
  with pytest.raises(RuntimeError, match="cannot change"):
    jax.config.update("jax_num_cpu_devices", N + 1)


def test_xla_client_has_the_devices():
  if not tiers.xla_available():
    pytest.skip("no XLA plugin")
  from jaxlite._src.backends import xla
  assert len(xla.devices()) == N


# ----------------------------------------------------------------------------- shardings

def test_reprs_match_jax():
  m = mesh2d()
  s = NamedSharding(m, P("x", "y"))
  assert repr(P("x", None)) == "P('x', None)"
  assert repr(P(("x", "y"))) == "P(('x', 'y'),)"
  assert repr(m) == REF["mesh_repr"]
  assert repr(s) == REF["named_repr"]
  assert repr(SingleDeviceSharding(jax.devices()[0])) == REF["single_repr"]
  assert repr(jnp.ones(3).sharding) == REF["single_repr"]
  assert s.shard_shape((8, 4)) == tuple(REF["shard_shape"])
  assert s.num_devices == N and not s.is_fully_replicated
  assert NamedSharding(m, P()).is_fully_replicated


@pytest.mark.parametrize("spec", [P("x", "y"), P("x"), P(None, "y"), P(("x", "y")), P(),
                                  P("y", "x")])
def test_device_put_places_one_piece_per_device(spec):
  m = mesh2d()
  s = NamedSharding(m, spec)
  value = np.arange(8 * N, dtype=np.float32).reshape(8, N) if spec != P(("x", "y")) else \
      np.arange(8 * N, dtype=np.float32).reshape(N * 2, 4)
  x = jax.device_put(value, s)
  assert x.sharding == s and x.shape == value.shape and x.dtype == np.float32
  assert len(x._placed.pieces) == N
  shards = x.addressable_shards
  assert [sh.device for sh in shards] == list(m.devices.flat)
  for sh in shards:
    np.testing.assert_array_equal(np.asarray(sh.data), value[sh.index])
  # replica ids count the copies of one block
  blocks = {}
  for sh in shards:
    key = tuple((i.start, i.stop) for i in sh.index)
    assert sh.replica_id == blocks.get(key, 0)
    blocks[key] = sh.replica_id + 1
  np.testing.assert_array_equal(np.asarray(x), value)
  np.testing.assert_array_equal(np.asarray(x * 2 + 1), value * 2 + 1)


def test_shard_indices_match_jax():
  s = NamedSharding(mesh2d(), P("x", "y"))
  x = jax.device_put(jnp.arange(32.).reshape(8, 4), s)
  got = [[[i.start, i.stop] for i in sh.index] for sh in x.addressable_shards]
  assert got == REF["indices"]


def _expand_iota(text):
  """JAX's ``{devices=[4,2]<=[2,4]T(1,0) ...}`` with the device list written out."""
  import re
  m = re.fullmatch(r"\{devices=\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?(.*)\}", text)
  if m is None:
    return text
  dims, reshape, perm, rest = m.groups()
  ids = np.arange(np.prod([int(d) for d in reshape.split(",")]))
  ids = ids.reshape([int(d) for d in reshape.split(",")])
  if perm:
    ids = ids.transpose([int(p) for p in perm.split(",")])
  return f"{{devices=[{dims}]{','.join(map(str, ids.ravel()))}{rest}}}"


def test_hlo_sharding_strings_match_jax():
  m = mesh2d()
  for k, spec in REF["hlo_specs"].items():
    got = NamedSharding(m, P(*[tuple(e) if isinstance(e, list) else e for e in spec]))
    assert got.hlo_sharding(2) == _expand_iota(REF["hlo"][k]), k


SURFACE = json.loads((pathlib.Path(__file__).parent / "data" / "api_surface_reference.json")
                     .read_text())[str(N)]


def test_visualize_array_sharding_draws_jax_table(capsys):
  pytest.importorskip("rich")
  x = jax.device_put(jnp.zeros((4, 4)), NamedSharding(mesh2d(), P("x", "y")))
  jax.debug.visualize_array_sharding(x, use_color=False)
  assert capsys.readouterr().out == SURFACE["visualize"]["mesh2d_xy_4x4"]


def test_visualize_sharding_draws_jax_tables(capsys):
  pytest.importorskip("rich")
  if N != 4:
    pytest.skip("recorded from JAX with 4 devices")
  for k, (spec, shape) in SURFACE["visualize_cases"].items():
    spec = P(*[tuple(e) if isinstance(e, list) else e for e in spec])
    jax.debug.visualize_sharding(tuple(shape), NamedSharding(mesh2d(), spec), use_color=False)
    assert capsys.readouterr().out == SURFACE["visualize"][k], k


def test_smap_maps_one_mesh_axis_as_jax():
  if N != 4:
    pytest.skip("recorded from JAX with 4 devices")
  ref = SURFACE["smap"]
  x = jnp.arange(16.).reshape(4, 4)
  with jax.set_mesh(jax.make_mesh((4,), ("a",), axis_types=(jax.sharding.AxisType.Auto,))):
    f = jax.smap(lambda a: a * lax.axis_index("a"), in_axes=0, out_axes=0, axis_name="a")
    close(f(x), ref["f"])
    g = jax.smap(lambda a, b: (a.sum(0), b), in_axes=(1, None), out_axes=(0, None),
                 axis_name="a")
    ga, gb = g(x, jnp.ones(2))
    close(ga, ref["g0"])
    close(gb, ref["g1"])
    h = jax.smap(lambda a: lax.psum(a, "a"), in_axes=0, out_axes=None, axis_name="a")
    close(h(jnp.arange(4.)), ref["h"])
    for k, kw in {"axis_name_tuple": dict(in_axes=0, out_axes=0, axis_name=("a",)),
                  "in_axes_list": dict(in_axes=[0], out_axes=0, axis_name="a"),
                  "out_axes_str": dict(in_axes=0, out_axes="x", axis_name="a"),
                  "in_axes_float": dict(in_axes=(0.5,), out_axes=0, axis_name="a"),
                  "infer_on_auto": dict(out_axes=0, axis_name="a")}.items():
      cls, message = SURFACE["smap_errors"][k]
      with pytest.raises(TypeError) as info:
        jax.smap(lambda a: a, **kw)(x)
      assert (type(info.value).__name__, str(info.value)) == (cls, message), k


def test_explicit_axes_types_inside_and_out_as_jax():
  if N != 4:
    pytest.skip("recorded from JAX with 4 devices")
  ref, inner = SURFACE["explicit_axes"], []

  def body(a):
    inner.append(str(jax.typeof(a)))
    return a * 2
  with jax.set_mesh(jax.make_mesh((4,), ("a",), axis_types=(jax.sharding.AxisType.Auto,))):
    y = jax.sharding.explicit_axes(body, in_sharding=P("a"))(jnp.arange(16.).reshape(4, 4))
  assert inner == [ref["inner"]]
  assert str(jax.typeof(y)) == ref["out"]
  close(y, ref["value"])


# ----------------------------------------------------------------------------- jax.set_mesh
# Reprs and messages recorded from JAX 0.10.2 (with N = 4).

def auto_mesh(types=None):
  return jax.make_mesh((N,), ("a",), axis_types=types or (jax.sharding.AxisType.Auto,))


def test_set_mesh_puts_the_mesh_in_context():
  from jaxlite.sharding import get_abstract_mesh, get_mesh
  assert repr(get_abstract_mesh()) == "AbstractMesh((), axis_types=())"
  assert repr(get_mesh()) == "Mesh(axis_sizes=(), axis_names=())" and str(get_mesh()) == \
      "Mesh()" and get_mesh().empty and get_mesh().size == 0
  mesh = auto_mesh()
  abstract = (f"AbstractMesh('a': {N}, axis_types=(Auto,), device_kind=cpu, "
              "num_cores=None, platform=cpu)")
  seen = []

  @jax.jit
  def f(x):
    seen.append(repr(get_abstract_mesh()))
    with pytest.raises(ValueError, match=r"`get_mesh` can only be used outside of "
                       r"`jax.jit`. Maybe you want `jax.sharding.get_abstract_mesh\(\)`\?"):
      get_mesh()
    with pytest.raises(ValueError, match="`set_mesh` can only be used outside of `jax.jit`."):
      jax.set_mesh(mesh)
    return x + 1
  with jax.set_mesh(mesh) as entered:
    assert entered is None and get_mesh() is mesh
    assert repr(get_abstract_mesh()) == abstract and get_abstract_mesh() == mesh.abstract_mesh
    assert repr(jax.typeof(jnp.ones(3)).sharding) == (
        f"NamedSharding(mesh={abstract}, spec=P(None,))")
    f(1.0)
  assert repr(get_abstract_mesh()) == "AbstractMesh((), axis_types=())"
  f(1.0)   # the mesh in context is part of the trace context: traced again
  assert seen == [abstract, "AbstractMesh((), axis_types=())"]
  jax.set_mesh(mesh)   # the global setter, for this thread
  try:
    assert get_mesh() is mesh
  finally:
    jax.set_mesh(None)
  assert get_mesh().empty
  with pytest.raises(ValueError, match="Expected mesh of type `jax.sharding.Mesh`. Got "
                     "<class 'int'>"):
    jax.set_mesh(3)
  with jax.sharding.use_abstract_mesh(mesh.abstract_mesh):
    assert get_abstract_mesh() == mesh.abstract_mesh and get_mesh().empty


def test_partition_specs_name_axes_of_the_mesh_in_context(tier):
  x = jnp.arange(2.0 * N)
  with pytest.raises(RuntimeError, match="with_sharding_constraint requires a non-empty mesh "
                     "in context if you are passing `PartitionSpec`s to shardings"):
    lax.with_sharding_constraint(x, P("a"))
  with pytest.raises(ValueError, match="Please set a mesh via `jax.set_mesh` if a "
                     "PartitionSpec is passed to device_put"):
    jax.device_put(x, P("a"))
  with pytest.raises(RuntimeError, match="jit requires a non-empty mesh in context if you are "
                     "passing `PartitionSpec`s to in_shardings"):
    jax.jit(lambda v: v, in_shardings=P("a"))(x)
  with pytest.raises(ValueError, match="The context mesh cannot be empty. Use "
                     r"`jax.set_mesh\(mesh\)` to enter into a mesh context"):
    jax.shard_map(lambda v: v, in_specs=P("a"), out_specs=P("a"))
  mesh = auto_mesh()
  split = NamedSharding(mesh, P("a"))
  with jax.set_mesh(mesh):
    outs = [lax.with_sharding_constraint(x, P("a")),
            lax.with_sharding_constraint(x, NamedSharding(mesh.abstract_mesh, P("a"))),
            jax.device_put(x, P("a")),
            jax.jit(lambda v: v - 0.0, out_shardings=P("a"))(x),
            jax.jit(lambda v: lax.with_sharding_constraint(v * 1.0, P("a")),
                    out_shardings=P("a"))(x),
            jax.shard_map(lambda v: v, in_specs=P("a"), out_specs=P("a"))(x)]
  for out in outs:
    assert out.sharding == split
    np.testing.assert_array_equal(out, np.arange(2.0 * N))
  assert [s.data.tolist() for s in outs[0].addressable_shards][1] == [2.0, 3.0]


def test_reshard_lays_out_over_explicit_axes(tier):
  x = jnp.arange(2.0 * N)
  with jax.set_mesh(auto_mesh()):
    with pytest.raises(ValueError, match=r"PartitionSpec passed to reshard cannot contain "
                       r"axis names that are of type Auto or Manual. Got PartitionSpec: "
                       r"P\('a',\) with axis name: a of type: AxisType.Auto."):
      jax.sharding.reshard(x, P("a"))
  with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh "
                     "context is not allowed"):
    jax.sharding.reshard(x, P("a"))
  mesh = auto_mesh((jax.sharding.AxisType.Explicit,))
  assert repr(mesh) == f"Mesh(axis_sizes=({N},), axis_names=('a',), axis_types=(Explicit,))"
  with jax.set_mesh(mesh):
    out = jax.reshard({"v": x}, P("a"))["v"]
    inner = jax.jit(lambda v: jax.sharding.reshard(v, P("a")) + 1)(x)
  assert out.sharding == NamedSharding(mesh, P("a")) and mesh.are_all_axes_explicit
  np.testing.assert_array_equal(out, np.arange(2.0 * N))
  np.testing.assert_array_equal(inner, np.arange(2.0 * N) + 1)
  # out_sharding= takes a PartitionSpec of Explicit axes of the mesh in context
  a, b = jnp.ones((2 * N, 3)), jnp.ones((3, 2))
  with jax.set_mesh(mesh):
    r = jnp.einsum("ij,jk->ik", a, b, out_sharding=P("a", None))
  assert r.sharding == NamedSharding(mesh, P("a", None))
  np.testing.assert_array_equal(r, np.full((2 * N, 2), 3.0))
  with jax.set_mesh(auto_mesh()):
    with pytest.raises(ValueError, match=r"PartitionSpec passed to einsum cannot contain "
                       r"axis names that are of type Auto or Manual"):
      jnp.einsum("ij,jk->ik", a, b, out_sharding=P("a", None))
  with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh "
                     "context is not allowed"):
    jnp.einsum("ij,jk->ik", a, b, out_sharding=P("a", None))
  s = NamedSharding(mesh, P("a"))
  assert s.update(spec=P(None, "a")) == NamedSharding(mesh, P(None, "a"))
  assert s.update(spec=(None,)).spec == P(None)


def test_is_equivalent_to_and_unconstrained_match_jax():
  # recorded from JAX 0.10.2 (flax compares a Variable's sharding with the one asked for)
  m = jax.make_mesh((2, 2), ("a", "b"))
  m1 = jax.make_mesh((1,), ("c",))
  cases = [(NamedSharding(m, P("a")), NamedSharding(m, P("a", None)), 2),
           (NamedSharding(m, P("a")), NamedSharding(m, P("b")), 2),
           (NamedSharding(m, P()), NamedSharding(m, P(None, None)), 2),
           (NamedSharding(m1, P("c")), SingleDeviceSharding(jax.devices()[0]), 1),
           (NamedSharding(m1, P()), SingleDeviceSharding(jax.devices()[1]), 1),
           (NamedSharding(m.abstract_mesh, P("a")),
            NamedSharding(m.abstract_mesh, P("a", None)), 2),
           (NamedSharding(m.abstract_mesh, P("a")), NamedSharding(m, P("a")), 2)]
  assert [a.is_equivalent_to(b, n) for a, b, n in cases] == [True, False, True, True, False,
                                                            True, False]
  assert repr(P.UNCONSTRAINED) == "UNCONSTRAINED"
  s = NamedSharding(m, P("a", P.UNCONSTRAINED))
  assert repr(s.spec) == "P('a', UNCONSTRAINED)" and s.shard_shape((4, 4)) == (2, 4)


def test_full_like_keeps_the_layout_and_keys_take_constraints(tier):
  # recorded from JAX 0.10.2: the *_like of a laid-out or committed array keeps its layout
  # (optax's zeros_like of flax's sharded parameters), unless the shape changes and it
  # is split; a constraint on keys lays out their data
  m = jax.make_mesh((2, 2), ("a", "b"), axis_types=(AUTO, AUTO))
  split = NamedSharding(m, P("a", "b"))
  x = jax.device_put(jnp.ones((4, 2)), split)
  d1 = jax.device_put(jnp.ones(3), jax.devices()[1])
  r = jax.device_put(jnp.ones(3), NamedSharding(m, P()))
  one = SingleDeviceSharding(jax.devices()[0])
  assert [jnp.zeros_like(x).sharding, lax.full_like(x, 2).sharding,
          jnp.ones_like(x, shape=(2,)).sharding, jnp.full_like(x, 3.0, jnp.int32).sharding] \
      == [split, split, one, split]
  assert [jnp.zeros_like(d1).sharding, jnp.zeros_like(r, shape=(5,)).sharding,
          jnp.zeros_like(jnp.ones(3)).sharding] == [
              SingleDeviceSharding(jax.devices()[1]), NamedSharding(m, P()), one]
  np.testing.assert_array_equal(lax.full_like(x, 2), np.full((4, 2), 2.0))
  keys = jax.random.split(jax.random.key(0), 4)
  s = NamedSharding(m, P("a"))
  for out in (lax.with_sharding_constraint(jax.device_put(keys, s), s),
              jax.jit(lambda k: lax.with_sharding_constraint(k, s))(keys)):
    assert out.sharding == s
    np.testing.assert_array_equal(jax.random.key_data(out), jax.random.key_data(keys))


def test_with_sharding_constraint_takes_a_format(tier):
  # JAX 0.10.2 lays the array out by the Format's sharding (flax passes Formats through)
  from jaxlite.experimental.layout import Format, Layout
  m = jax.make_mesh((2, 2), ("a", "b"), axis_types=(AUTO, AUTO))
  ns = NamedSharding(m, P("a", None))
  x = lax.with_sharding_constraint(jnp.ones((4, 4)), Format(Layout(major_to_minor=(0, 1)), ns))
  assert x.sharding == ns
  assert x.format == Format(Layout((0, 1), ()), ns)
  # another order lays the pieces out so too, as JAX 0.10.2 does (values unchanged)
  y = lax.with_sharding_constraint(jnp.arange(16.0).reshape(4, 4),
                                   Format(Layout(major_to_minor=(1, 0)), ns))
  assert repr(y.format.layout) == ("Layout(major_to_minor=(1, 0), tiling=(), "
                                   "sub_byte_element_size_in_bits=0)")
  assert y.sharding == ns
  np.testing.assert_array_equal(np.asarray(y), np.arange(16.0).reshape(4, 4))
  np.testing.assert_array_equal(np.asarray(y.addressable_shards[2].data),
                                np.arange(8.0, 16.0).reshape(2, 4))


def test_sharding_errors():
  m = mesh2d()
  with pytest.raises(ValueError, match="Resource axis: z of P\\('z',\\) is not found in mesh"):
    NamedSharding(m, P("z"))
  with pytest.raises(ValueError, match="does not evenly divide the dimension size 3"):
    jax.device_put(jnp.ones(3), NamedSharding(m, P("x")))


# ----------------------------------------------------------------------------- pmap

def test_pmap_collectives(tier):
  x = np.arange(N * 3, dtype=np.float32).reshape(N, 3) - 5
  perm = [(i, (i + 1) % N) for i in range(N)]

  def f(v):
    return (lax.psum(v, "i"), lax.pmean(v, "i"), lax.pmax(v, "i"), lax.pmin(v, "i"),
            lax.all_gather(v, "i"), lax.all_gather(v, "i", tiled=True),
            lax.axis_index("i"), lax.ppermute(v, "i", perm))
  outs = jax.pmap(f, axis_name="i")(x)
  want = (np.broadcast_to(x.sum(0), x.shape), np.broadcast_to(x.mean(0), x.shape),
          np.broadcast_to(x.max(0), x.shape), np.broadcast_to(x.min(0), x.shape),
          np.broadcast_to(x, (N,) + x.shape), np.broadcast_to(x.reshape(-1), (N, 3 * N)),
          np.arange(N), np.roll(x, 1, axis=0))
  for o, w in zip(outs, want):
    close(o, w)
  assert outs[0].sharding.spec == P("i") and len(outs[0].addressable_shards) == N
  assert outs[6].dtype == np.int32


def test_pmap_all_to_all(tier):
  x = np.arange(N * N * 2, dtype=np.float32).reshape(N, N, 2)
  out = jax.pmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(x)
  close(out, x.transpose(1, 0, 2))
  tiled = jax.pmap(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), axis_name="i")(
      np.arange(N * N * 2 * 3, dtype=np.float32).reshape(N, 2 * N, 3))
  v = np.arange(N * N * 2 * 3, dtype=np.float32).reshape(N, N, 2, 3)   # [src, chunk, 2, 3]
  close(tiled, v.transpose(1, 2, 0, 3).reshape(N, 2, N * 3))


def test_pmap_axes_and_static_args(tier):
  x = np.arange(3 * N, dtype=np.float32).reshape(3, N)
  w = np.arange(3, dtype=np.float32)
  f = jax.pmap(lambda a, b, k: a * b * k, in_axes=(1, None, None), out_axes=1,
               static_broadcasted_argnums=2)
  close(f(x, w, 2.0), x * w[:, None] * 2)
  g = jax.pmap(lambda a: lax.psum(a, "i"), "i", out_axes=None)
  close(g(x.T), x.T.sum(0))
  h = jax.pmap(lambda d: {"a": d["a"] + 1}, in_axes=({"a": 0},))
  close(h({"a": x.T})["a"], x.T + 1)


def test_pmap_keyword_arguments_map_over_leading_axis(tier):
  # in_axes covers the positional arguments only; keyword arguments are mapped over axis 0
  x = np.arange(3 * N, dtype=np.float32).reshape(N, 3)
  f = jax.pmap(lambda a, b, k, y: a * k + y["c"] * b, in_axes=(0, None),
               static_broadcasted_argnums=2)
  close(f(x, 2.0, 3.0, y={"c": x + 1}), x * 3 + (x + 1) * 2)
  with pytest.raises(ValueError):
    f(x, 2.0, 3.0, y={"c": np.ones(3)})


def test_pmap_devices_argument(tier):
  devs = jax.devices()[N // 2:]
  out = jax.pmap(lambda v: lax.psum(v, "i"), "i", devices=devs)(np.ones((N // 2, 2)))
  assert out.sharding.device_set == set(devs)
  close(out, np.full((N // 2, 2), N // 2))


def test_pmap_composes_with_grad_vmap_jit(tier):
  rng = np.random.RandomState(0)
  w = rng.randn(3, 2).astype(np.float32)
  xs = rng.randn(N, 5, 3).astype(np.float32)

  def loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)

  def step(w, x):
    g = jax.grad(loss)(w, x)
    return lax.pmean(g, "i"), jax.vmap(lambda r: jnp.sum(r))(x), jax.jit(jnp.sin)(x)
  g, sums, sins = jax.pmap(step, "i", in_axes=(None, 0))(w, xs)
  th = np.tanh(xs @ w)
  want = np.einsum("nbi,nbj->ij", xs, 2 * th * (1 - th ** 2)) / N
  for k in range(N):
    close(g[k], want)
  close(sums, xs.sum(-1))
  close(sins, np.sin(xs))


def test_grad_of_collectives_inside_pmap(tier):
  x = np.arange(N * 2, dtype=np.float32).reshape(N, 2)
  f = jax.pmap(jax.grad(lambda v: jnp.sum(lax.all_gather(v, "i") ** 2)), "i")
  # every device's v appears in every device's gather: the gradient sums N copies
  close(f(x), 2 * N * x)


def test_pmap_output_feeds_next_pmap(tier):
  step = jax.pmap(lambda v: v + lax.psum(v, "i"), "i")
  x = np.ones((N, 2), np.float32)
  y = step(step(x))
  close(y, (1 + N) * (1 + N) * np.ones((N, 2)))


def test_pmap_errors(tier):
  with pytest.raises(ValueError, match=f"requires {N + 1} logical devices, but only {N}"):
    jax.pmap(lambda v: v)(np.ones((N + 1, 2)))
  with pytest.raises(ValueError, match="inconsistent sizes"):
    jax.pmap(lambda a, b: a + b)(np.ones((N, 2)), np.ones((N - 1, 2)))
  with pytest.raises(NameError, match="unbound axis name: j"):
    jax.pmap(lambda v: lax.psum(v, "j"), "i")(np.ones((N, 2)))
  with pytest.raises(ValueError, match="given 2 devices, but the mapped axis has size"):
    jax.pmap(lambda v: v, devices=jax.devices()[:2])(np.ones((N, 2)))


def test_pmap_and_shard_map_under_outer_transforms(tier):
  # Called under jit, grad, vmap or checkify (on tracers, or on constants while a trace is
  # staging), the per-device program runs as named vmaps over the shards: the same values
  x = np.linspace(-1, 1, N * 3, dtype=np.float32).reshape(N, 3)
  f = jax.pmap(lambda v: jnp.sin(v) * lax.psum(v ** 2, "i"), "i")
  s = (x ** 2).sum(0)
  close(jax.jit(f)(x), np.sin(x) * s)
  close(jax.jit(lambda: f(x))(), np.sin(x) * s)
  close(jax.grad(lambda v: f(v).sum())(x), np.cos(x) * s + 2 * x * np.sin(x).sum(0))
  xs = np.stack([x, 2 * x])
  close(jax.vmap(f)(xs), np.sin(xs) * (xs ** 2).sum(1, keepdims=True))
  from jaxlite.experimental import checkify
  g = jax.pmap(lambda v: (checkify.check(jnp.all(v < 0.5), "too big: {}", v.max()), v)[1],
               "i")
  err, out = checkify.checkify(g)(x)
  assert err.get() is not None and "too big" in err.get()
  close(out, x)
  err, _ = checkify.checkify(g)(x - 2)
  assert err.get() is None
  mesh = mesh2d()
  h = jax.shard_map(lambda a: lax.psum(jnp.sum(a ** 2), ("x", "y")), mesh=mesh,
                    in_specs=P(("x", "y")), out_specs=P())
  v = np.arange(N * 2, dtype=np.float32)
  close(jax.jit(h)(v), (v ** 2).sum())
  close(jax.grad(h)(v), 2 * v)


def test_nested_meshes_and_smaller_meshes(tier):
  inner = jax.pmap(lambda y: lax.psum(y, "j"), "j")
  with pytest.raises(ValueError, match="should match the mesh passed to pmap"):
    jax.pmap(inner, "i")(np.ones((2, 2, 2), np.float32))
  # as in JAX, make_mesh takes the first prod(shape) devices
  mesh = jax.make_mesh((N // 2,), ("x",))
  assert list(mesh.devices.flat) == jax.devices()[:N // 2]
  with pytest.raises(ValueError, match=f"Number of devices {N} must be >= the product"):
    jax.make_mesh((N + 1,), ("x",))


def test_collective_outside_a_map_is_a_name_error():
  with pytest.raises(NameError, match="unbound axis name: i"):
    lax.psum(1.0, "i")


# ----------------------------------------------------------------------------- shard_map

def test_shard_map_collectives_match_jax(tier):
  m = mesh2d()
  x = jnp.arange(64.).reshape(8, 8)
  n = N // 2
  perm = [(i, (i + 1) % n) for i in range(n)]

  def f(a):
    return (lax.psum(a, "x"), lax.all_gather(a, "y", tiled=True, axis=1),
            (lax.axis_index("x") + 10 * lax.axis_index("y")).reshape(1, 1),
            lax.ppermute(a, "x", perm), lax.pmax(a, ("x", "y")))
  g = jax.shard_map(f, mesh=m, in_specs=P("x", "y"),
                    out_specs=(P(None, "y"), P("x"), P("x", "y"), P("x", "y"), P()))
  for o, want in zip(g(x), REF["shard_map"]):
    close(o, np.asarray(want))
  h = jax.shard_map(lambda a: lax.all_to_all(a, "x", 0, 0, tiled=True), mesh=m,
                    in_specs=P("x"), out_specs=P("x"))
  close(h(jnp.arange(4. * n * n).reshape(-1, 1)), np.asarray(REF["shard_map_a2a"]))


def test_shard_map_matches_single_device(tier):
  m = mesh2d()
  rng = np.random.RandomState(1)
  a = rng.randn(8, 6).astype(np.float32)
  b = rng.randn(6, 4).astype(np.float32)

  # a row-sharded matmul whose contraction is split over 'y' and summed with psum
  def local(a_blk, b_blk):
    return lax.psum(a_blk @ b_blk, "y")
  f = jax.shard_map(local, mesh=m, in_specs=(P("x", "y"), P("y", None)),
                    out_specs=P("x", None))
  close(f(a, b), a @ b)
  from jaxlite.experimental.shard_map import shard_map
  g = shard_map(lambda v: v * 2, mesh=m, in_specs=P(), out_specs=P())
  close(g(a), 2 * a)


class _Unprintable:
  """A pytree node whose repr raises (flax's Modules holding PartitionSpecs do)."""

  def __init__(self, v):
    self.v = v

  def __repr__(self):
    raise IndexError("no repr")


jax.tree_util.register_pytree_node(_Unprintable, lambda u: ((u.v,), None),
                                   lambda _, c: _Unprintable(c[0]))


def test_shard_map_specs_are_matched_without_printing_them(tier):
  # the prefix-mismatch message is made only on a mismatch: its repr of the spec tree
  mesh = jax.make_mesh((N,), ("x",), axis_types=(AUTO,))
  f = jax.shard_map(lambda u: u.v * 2, mesh=mesh, in_specs=(_Unprintable(P("x")),),
                    out_specs=P("x"))
  np.testing.assert_array_equal(f(_Unprintable(jnp.arange(N * 1.0))), np.arange(N) * 2.0)


def test_shard_map_errors(tier):
  m = mesh2d()
  # (JAX 0.10.2's messages)
  with pytest.raises(ValueError, match=r"shard_map in_specs argument must refer to an axis "
                                       r"marked as manual \(frozenset\(\{'[xy]', '[xy]'\}\)\), "
                                       r"but:\n\n  in_specs refers to 'z'\n\nCheck the"):
    jax.shard_map(lambda v: v, mesh=m, in_specs=P("z"), out_specs=P())(np.ones(8))
  with pytest.raises(ValueError, match="out_specs refers to 'z'"):
    jax.shard_map(lambda v: v, mesh=m, in_specs=P("x"), out_specs=P("z"))(np.ones(8))
  with pytest.raises(ValueError, match=r"jax.shard_map requires axis_names=frozenset\(\{'z'\}\) "
                                       r"to be a subset of mesh.axis_names="):
    jax.shard_map(lambda v: v, mesh=m, in_specs=P("x"), out_specs=P("x"),
                  axis_names={"z"})(np.ones(8))
  with pytest.raises(ValueError, match="does not divide evenly"):
    jax.shard_map(lambda v: v, mesh=m, in_specs=P("x"), out_specs=P("x"))(np.ones(N + 1))


def test_shard_map_reads_in_specs_from_the_arguments_types(tier):
  # JAX 0.10.2's default in_specs (Infer) over Explicit axes: each argument is split as
  # its type says; an unsplit one is passed whole (values: NumPy, as JAX gives them)
  EXPLICIT = jax.sharding.AxisType.Explicit
  k = N // 2
  with jax.set_mesh(jax.make_mesh((2, k), ("x", "y"), axis_types=(EXPLICIT, EXPLICIT))):
    a_np, c_np = np.arange(16.).reshape(4, 4), np.arange(8. * k).reshape(4, 2 * k)
    a, b = jax.device_put(a_np, P("x", None)), jax.device_put(np.arange(4.), P())
    c = jax.device_put(c_np, P("x", "y"))
    shifted, total = jax.shard_map(lambda a, b: (a + b, lax.psum(a.sum(), "x")),
                                   out_specs=(P("x"), P()))(a, b)
    close(shifted, a_np + np.arange(4.))
    close(total, a_np.sum())
    assert [int(n) for n in jax.shard_map(lambda c: c.shape, out_specs=P())(c)] == [2, 2]
    close(jax.jit(jax.shard_map(lambda c: c * 2, out_specs=P("x", "y")))(c), c_np * 2)
    # only the mapped axes are read: over x alone, c's rows are split and its columns whole
    assert [int(n) for n in jax.shard_map(lambda c: c.shape, out_specs=P(),
                                          axis_names={"x"})(c)] == [2, 2 * k]
    close(jax.shard_map(lambda v: v * 2, out_specs=P("x"))(np.arange(4.)),
          np.tile(np.arange(4.) * 2, 2))
    assert [int(n) for n in jax.smap(lambda c: c.shape, out_axes=None, axis_name="y")(c)] \
        == [4, 2]
    # None: closed over, passed whole; refused for an input split over Explicit axes
    close(jax.shard_map(lambda v, s: v * s, out_specs=P("x"), in_specs=(P(), None))(
        np.arange(4.), 3.), np.tile(np.arange(4.) * 3, 2))
    with pytest.raises(NotImplementedError, match="Closing over inputs to shard_map where "
                                                  "the input is sharded on `Explicit`"):
      jax.shard_map(lambda v: v, out_specs=P("x"), in_specs=None)(a)


# ----------------------------------------------------------------------------- sharded jit

def test_sharded_jit_matches_unsharded(tier):
  m = mesh2d()
  rng = np.random.RandomState(2)
  w = rng.randn(4, 4).astype(np.float32)
  x = rng.randn(8, 4).astype(np.float32)

  def f(w, x):
    h = jnp.tanh(x @ w)
    h = lax.with_sharding_constraint(h, NamedSharding(m, P("x", "y")))
    return h.sum(0), h, jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)
  g = jax.jit(f, in_shardings=(NamedSharding(m, P()), NamedSharding(m, P("x"))),
              out_shardings=(NamedSharding(m, P()), NamedSharding(m, P("x", "y")),
                             NamedSharding(m, P())))
  got = g(w, x)
  th = np.tanh(x @ w)
  close(got[0], th.sum(0))
  close(got[1], th)
  close(got[2], x.T @ (2 * th * (1 - th ** 2)))
  assert got[1].sharding == NamedSharding(m, P("x", "y"))
  assert len(got[1].addressable_shards) == N
  if tier == "xla":
    assert all(type(p).__name__ == "DeviceBuffer" for p in got[1]._placed.pieces)


def test_sharded_jit_takes_arguments_already_placed(tier):
  m = mesh2d()
  s = NamedSharding(m, P("x"))
  x = jax.device_put(np.arange(8 * 2, dtype=np.float32).reshape(8, 2), s)
  f = jax.jit(lambda v: v * 3, out_shardings=s)
  close(f(x), np.arange(16).reshape(8, 2) * 3)
  assert f(x).sharding == s


def test_plain_jit_follows_argument_and_constraint_shardings(tier):
  """As JAX 0.10.2 (recorded with 4 devices): a jit of split arguments, or with a
  constraint inside, is partitioned, and its results keep the layouts the partitioner
  keeps (equinox's filter_shard counts on it): elementwise results the argument's, a
  reduction's replicated, a constraint's its own."""
  mesh = jax.make_mesh((N,), ("x",), axis_types=(AUTO,))
  s = NamedSharding(mesh, P("x"))
  x = jax.device_put(jnp.arange(2.0 * N), s)
  added, total, doubled = jax.jit(lambda v: (v + 1, v.sum(), v * 2))(x)
  assert added.sharding == doubled.sharding == s
  assert total.sharding == NamedSharding(mesh, P())
  np.testing.assert_array_equal(added, np.arange(2.0 * N) + 1)
  assert float(total) == float(np.arange(2.0 * N).sum())
  z = jax.jit(lambda v: lax.with_sharding_constraint(v + 1, s))(jnp.zeros(2 * N))
  assert z.sharding == s
  np.testing.assert_array_equal(z, np.ones(2 * N))
  # only where asked: a one-device jit stays one
  assert jax.jit(lambda v: v + 1)(jnp.zeros(3)).sharding == SingleDeviceSharding(
      jax.devices()[0])


def test_sharded_jit_of_typed_prng_keys(tier):
  """Keys split over the devices: the program takes and gives their uint32 data."""
  s = NamedSharding(jax.make_mesh((N,), ("x",)), P("x"))
  keys = jax.random.split(jax.random.key(0), 2 * N)
  f = jax.jit(lambda ks: (jax.vmap(jax.random.split)(ks), jax.vmap(jax.random.bits)(ks)),
              in_shardings=s, out_shardings=s)
  split, bits = f(keys)
  assert split.shape == (2 * N, 2) and str(split.dtype) == "key<fry>"
  np.testing.assert_array_equal(jax.random.key_data(split),
                                jax.random.key_data(jax.vmap(jax.random.split)(keys)))
  np.testing.assert_array_equal(bits, jax.vmap(jax.random.bits)(keys))


def test_pmap_and_shard_map_of_typed_prng_keys(tier):
  """Keys in and out of a per-device program: it runs on their uint32 data (recorded
  from JAX 0.10.2 with two devices; nnx.pmap and nnx.shard_map carry Rngs so)."""
  keys = jax.random.split(jax.random.key(0), 2)
  split, normal = jax.pmap(lambda k: (jax.random.split(k)[0], jax.random.normal(k, (2,))),
                           devices=jax.devices()[:2])(keys)
  assert split.shape == (2,) and str(split.dtype) == "key<fry>"
  np.testing.assert_array_equal(jax.random.key_data(split),
                                [[4165894930, 804218099], [346279018, 360566543]])
  close(normal, [[1.0040143, -0.9063372], [-2.4424558, -2.0356805]])
  mesh = jax.make_mesh((2,), ("x",), axis_types=(AUTO,))   # (as recorded)
  g = jax.shard_map(lambda k: jax.random.split(k[0])[None], mesh=mesh, in_specs=P("x"),
                    out_specs=P("x"))
  out = g(keys)
  assert out.shape == (2, 2) and out.sharding == NamedSharding(mesh, P("x", None))
  np.testing.assert_array_equal(jax.random.key_data(out), [
      [[4165894930, 804218099], [1353695780, 2116000888]],
      [[346279018, 360566543], [3968330031, 3923691647]]])


def test_pmap_collectives_lower_to_stablehlo_collectives():
  if not tiers.xla_available():
    pytest.skip("no XLA plugin")
  with jax.config.override("jaxlite_tier", "xla"):
    f = jax.pmap(lambda v: (lax.psum(v, "i"), lax.all_gather(v, "i"), lax.axis_index("i"),
                            lax.ppermute(v, "i", [(0, 1), (1, 0)]),
                            lax.all_to_all(v, "i", 0, 0)), "i")
    f(np.ones((N, N), np.float32))
  (program,) = f._programs.values()
  (entry,) = program._cache.values()
  text = entry[4].text
  assert f"mhlo.num_replicas = {N} : i32" in text
  groups = "[[" + ", ".join(map(str, range(N))) + "]]"
  for op in ("all_reduce", "all_gather", "all_to_all"):
    assert f'"stablehlo.{op}"' in text and f"replica_groups = dense<{groups}>" in text
  assert '"stablehlo.collective_permute"' in text and '"stablehlo.replica_id"' in text


def test_make_array_from_callback_and_single_device_arrays():
  s = NamedSharding(mesh2d(), P("x"))
  value = np.arange(N * 6, dtype=np.float32).reshape(N, 6)
  a = jax.make_array_from_callback(value.shape, s, lambda index: value[index])
  np.testing.assert_array_equal(np.asarray(a), value)
  assert a.sharding == s
  pieces = [value[sh.index] for sh in a.addressable_shards]
  b = jax.make_array_from_single_device_arrays(value.shape, s, pieces)
  np.testing.assert_array_equal(np.asarray(b), value)
  with pytest.raises(ValueError, match="expected the shard shape"):
    jax.make_array_from_single_device_arrays(value.shape, s, [value] * N)
  assert jax.P is P and jax.NamedSharding is NamedSharding


# ----------------------------------------------------------------------------- committed

# What JAX 0.10.2 answers (recorded on 2 CPU devices; the device ids are the operands').
_INCOMPATIBLE = ("Received incompatible devices for jitted computation. Got argument {a} of "
                 "{fun} with shape float32[3] and with device ids [0] on platform CPU and "
                 "argument {b} of {fun} with shape float32[3] and with device ids [1] on "
                 "platform CPU")


def test_computations_follow_a_committed_operand(tier):
  d = jax.devices()
  x = jax.device_put(jnp.ones(3), d[1])
  assert x.committed and x.devices() == {d[1]}
  assert jax.device_put(jnp.ones(3), d[0]).committed   # an explicit device commits
  assert not jax.device_put(jnp.ones(3)).committed and not jnp.ones(3).committed
  f = jax.jit(lambda a, b: a * b + 1)
  for _ in range(3):   # (later calls take the cached path)
    y = f(x, jnp.ones(3))
    assert y.committed and y.devices() == {d[1]}
    close(y, [2.0, 2.0, 2.0])
    z = f(jnp.ones(3), jnp.ones(3))
    assert not z.committed and z.devices() == {d[0]}
  for eager in (x * 2, jnp.sin(x), x + np.ones(3), jax.lax.add(x, x)):
    assert eager.committed and eager.devices() == {d[1]}
  close(jnp.sin(x), np.sin(np.ones(3)))
  outs = jax.jit(lambda a: (a, a.sum(), 3.0))(x)
  assert [o.committed for o in outs] == [True, True, True]
  assert all(o.devices() == {d[1]} for o in outs)
  close(outs[1], 3.0)
  moved = jax.jit(lambda a: a + 1, device=d[0])(x)   # an explicit device wins
  assert moved.committed and moved.devices() == {d[0]}


def test_operands_committed_to_two_devices_raise_jaxs_error(tier):
  d = jax.devices()
  x0 = jax.device_put(jnp.ones(3), d[0])
  x1 = jax.device_put(jnp.ones(3), d[1])
  cases = [   # (JAX names a jitted function by its __qualname__)
      (lambda: jax.jit(lambda a, b: a + b)(x0, x1), "a", "b", "test_operands_committed_to_"
       "two_devices_raise_jaxs_error.<locals>.<lambda>.<locals>.<lambda>"),
      (lambda: jax.jit(lambda t: t["a"] + t["b"])({"a": x0, "b": x1}), "t['a']", "t['b']",
       None),
      (lambda: jax.jit(lambda a, b, c: a + b + c)(x0, 1.0, x1), "a", "c", None),
      (lambda: jax.lax.add(x0, x1), "args[0]", "args[1]", "add"),
      (lambda: jax.lax.concatenate([x0, x1], 0), "args[0]", "args[1]", "concatenate"),
  ]
  for run, a, b, fun in cases:
    with pytest.raises(ValueError) as e:
      run()
    message = str(e.value)
    if fun is not None:
      assert message == _INCOMPATIBLE.format(a=a, b=b, fun=fun)
    else:
      assert message.startswith("Received incompatible devices for jitted computation. Got "
                                f"argument {a} of ") and f"argument {b} of " in message


# ----------------------------------------------------------------------------- sharding in types
# Splits over Explicit mesh axes are part of types (JAX's sharding in types). Recorded from
# JAX 0.10.2 with N = 4 (/work/jaxref/bin/python, XLA_FLAGS=
# --xla_force_host_platform_device_count=4); the sizes printed scale with N.

def explicit_mesh():
  return jax.make_mesh((N // 2, 2), ("X", "Y"),
                       axis_types=(jax.sharding.AxisType.Explicit,) * 2)


def _typ(v):
  return str(jax.typeof(v))


def test_types_carry_splits_over_explicit_axes_through_operations(tier):
  with jax.set_mesh(explicit_mesh()):
    x = jax.sharding.reshard(jnp.arange(4. * N).reshape(N, 4), P("X", None))
    w = jnp.ones((4, 6))
    got = [_typ(x), _typ(x + 1), _typ(jnp.sin(x) * x), _typ(x @ w), _typ(x.sum(0)),
           _typ(x.sum(1)), _typ(x.T), _typ(x.reshape(4 * N)), _typ(x.reshape(N, 2, 2)),
           _typ(x[None]), _typ(x.astype(jnp.int32)), _typ(jnp.where(x > 0, x, 0.)),
           _typ(jnp.max(x, axis=-1, keepdims=True)),
           _typ(lax.dot_general(x, w, (((1,), (0,)), ((), ())), out_sharding=P("X", "Y"))),
           _typ(x[:, 1:3]), _typ(jnp.concatenate([x, x], 1))]
    text = str(jax.make_jaxpr(lambda v: v * 2 + 1)(x))
  assert got == [f"float32[{N}@X,4]", f"float32[{N}@X,4]", f"float32[{N}@X,4]",
                 f"float32[{N}@X,6]", "float32[4]", f"float32[{N}@X]", f"float32[4,{N}@X]",
                 f"float32[{4 * N}@X]", f"float32[{N}@X,2,2]", f"float32[1,{N}@X,4]",
                 f"int32[{N}@X,4]", f"float32[{N}@X,4]", f"float32[{N}@X,1]",
                 f"float32[{N}@X,6@Y]", f"float32[{N}@X,2]", f"float32[{N}@X,8]"]
  assert text == (f"{{ lambda ; a:f32[{N}@X,4]. let\n"
                  f"    b:f32[{N}@X,4] = mul a 2.0:f32[]\n"
                  f"    c:f32[{N}@X,4] = add b 1.0:f32[]\n"
                  "  in (c,) }")


def test_library_functions_keep_the_split(tier):
  # JAX 0.10.2 (N = 4), jax.typeof of each
  with jax.set_mesh(explicit_mesh()):
    x = jax.sharding.reshard(jnp.arange(4. * N).reshape(N, 4), P("X", None))
    got = [jax.nn.relu(x), jax.nn.softmax(x), x ** 2, jnp.cumsum(x, axis=1),
           jnp.sort(x, axis=1), jax.scipy.special.erf(x), jnp.clip(x, 0, 3), jnp.tanh(x),
           jnp.round(x), x[:, ::-1], jax.grad(lambda v: (v ** 2).sum())(x),
           jax.vmap(lambda r: r * 2)(x)]
    reduced = [jax.nn.logsumexp(x, axis=1), x.mean(1), x.var(1)]
    other = [_typ(jnp.isnan(x)), _typ(x.argmax(1)), _typ(jnp.pad(x, ((0, 0), (1, 1)))),
             _typ(jnp.expand_dims(x, 1)), _typ(jnp.stack([x, x]))]
  assert [_typ(v) for v in got] == [f"float32[{N}@X,4]"] * len(got)
  assert [_typ(v) for v in reduced] == [f"float32[{N}@X]"] * len(reduced)
  assert other == [f"bool[{N}@X,4]", f"int32[{N}@X]", f"float32[{N}@X,6]",
                   f"float32[{N}@X,1,4]", f"float32[2,{N}@X,4]"]


def test_arrays_computed_under_a_mesh_are_laid_out_over_it(tier):
  mesh = explicit_mesh()
  with jax.set_mesh(mesh):
    x = jax.sharding.reshard(jnp.arange(4. * N).reshape(N, 4), P("X", None))
    plain, split = jnp.arange(3.), x + 1
    jitted = jax.jit(lambda v: v * 2)(x)
    struct = jax.eval_shape(lambda: jax.sharding.reshard(jnp.ones((N, 4)), P("X", "Y")))
  assert plain.sharding == NamedSharding(mesh, P(None))
  assert split.sharding == NamedSharding(mesh, P("X", None))
  assert _typ(jitted) == f"float32[{N}@X,4]" and jitted.sharding.spec == P("X", None)
  assert struct.sharding.spec == P("X", "Y")
  np.testing.assert_array_equal(split, np.arange(4. * N).reshape(N, 4) + 1)
  np.testing.assert_array_equal(jitted, np.arange(4. * N).reshape(N, 4) * 2)


def test_ambiguous_splits_raise_jaxs_sharding_type_error(tier):
  from jaxlite._src.base.errors import ShardingTypeError
  with jax.set_mesh(explicit_mesh()):
    x = jax.sharding.reshard(jnp.arange(4. * N).reshape(N, 4), P("X", None))
    with pytest.raises(ShardingTypeError) as info:
      x + jax.sharding.reshard(jnp.ones((N, 4)), P(None, "X"))
    assert str(info.value) == (f"add operation with inputs: f32[{N}@X,4], f32[{N},4@X] "
                               f"produces an illegally sharded result: f32[{N}@X,4@X]")
    with pytest.raises(ShardingTypeError) as info:
      x + jax.sharding.reshard(jnp.ones((N, 4)), P("Y", None))
    assert str(info.value) == ("add got incompatible shardings for broadcasting: "
                               "('X', None), ('Y', None).")
    with pytest.raises(ShardingTypeError) as info:
      x @ jax.sharding.reshard(jnp.ones((4, 8)), P(None, "X"))
    assert str(info.value) == (f"dot_general operation with inputs: f32[{N}@X,4], "
                               f"f32[4,8@X] produces an illegally sharded result: "
                               f"f32[{N}@X,8@X]")
    with pytest.raises(ShardingTypeError) as info:
      jnp.cumsum(x, axis=0)
    assert str(info.value) == ("Input should be unsharded over the axis being reduced. Got "
                               f"input type=float32[{N}@X,4] and axis=0")
    with pytest.raises(ShardingTypeError) as info:
      x[jnp.array([0, 1])]
    assert str(info.value) == (
        "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
        "indexing as out sharding could not be resolved unambiguously (or would require "
        f"collectives on inputs). Got operand=ShapedArray(float32[{N}@X,4]), "
        "indices=ShapedArray(int32[2,1])")
    # auto_axes lifts the splits for the call and lays its result out as asked
    take = jax.sharding.auto_axes(lambda v, i: jnp.take(v, i, axis=0), out_sharding=P("X"))
    out = take(x, jax.sharding.reshard(jnp.array([0, 1, 1, 0]), P("Y")))
  assert _typ(out) == "float32[4@X,4]"
  np.testing.assert_array_equal(out, np.arange(4. * N).reshape(N, 4)[[0, 1, 1, 0]])


def test_jit_results_under_a_mesh_are_laid_out_over_it(tier):
  # JAX 0.10.2: spec=P() over Auto axes, P(None,) over Explicit ones, eagerly and jitted
  for types, spec in [((jax.sharding.AxisType.Auto,) * 2, "P()"),
                      ((jax.sharding.AxisType.Explicit,) * 2, "P(None,)")]:
    mesh = jax.make_mesh((N // 2, 2), ("X", "Y"), axis_types=types)
    f = jax.jit(lambda v: v * 2)
    with jax.set_mesh(mesh):
      out = f(jnp.arange(3.))
      again = f(jnp.arange(3.))   # (a cached call too)
      eager = jnp.arange(3.)
    for x in (out, again, eager):
      t = types[0].name
      assert repr(x.sharding) == (f"NamedSharding(mesh=Mesh('X': {N // 2}, 'Y': 2, "
                                  f"axis_types=({t}, {t})), spec={spec}, "
                                  "memory_kind=device)")
    np.testing.assert_array_equal(again, [0., 2., 4.])
  assert f(jnp.arange(3.)).sharding == SingleDeviceSharding(jax.devices()[0])


def _raises(f):
  """The class and message ``f()`` raises."""
  try:
    f()
  except Exception as e:   # noqa: BLE001 (the class is what is compared)
    return type(e).__name__, str(e)
  raise AssertionError("no error")


def test_scan_over_xs_split_along_the_scanned_axis_raises_as_jax(tier):
  # JAX 0.10.2 (N = 4): ValueError eagerly, under jit and in lax.map; a split on another
  # axis stays on the slices and the ys, and is part of the carry's type
  with jax.set_mesh(explicit_mesh()):
    x = jax.sharding.reshard(jnp.arange(4. * N).reshape(N, 4), P("X", None))
    xy = jax.sharding.reshard(jnp.arange(32.).reshape(8, 4), P(None, "Y"))
    body = lambda c, v: (c + v, v * 2)
    errors = [_raises(lambda: lax.scan(body, jnp.zeros(4), x)),
              _raises(lambda: jax.jit(lambda v: lax.scan(body, jnp.zeros(4), v))(x)),
              _raises(lambda: lax.map(lambda v: v * 2, x)),
              _raises(lambda: lax.scan(lambda c, v: (c, v), 0., (xy, x)))]
    _, ys = lax.scan(lambda c, v: (c, v * 2), 0., xy)
    carry = _raises(lambda: lax.scan(lambda c, v: (c + v, None), jnp.zeros(4), xy))
  one = ("ValueError", "0th dimension of all xs should be replicated. Got P('X', None)")
  assert errors == [one] * 3 + [(
      "ValueError",
      "0th dimension of all xs should be replicated. Got P(None, 'Y'), P('X', None)")]
  assert _typ(ys) == "float32[8,4@Y]"
  np.testing.assert_array_equal(ys, np.arange(32.).reshape(8, 4) * 2)
  assert carry == ("TypeError", (
      "scan body function carry input and carry output must have equal types, but they "
      "differ:\n\nThe input carry c has type float32[4] but the corresponding output carry "
      "component has type float32[4@Y].\n\nRevise the function so that all output types "
      "match the corresponding input types."))


def test_every_primitive_types_split_operands_as_jax(tier):
  # jax.typeof of each, or the error, recorded from JAX 0.10.2 (N = 4)
  from jaxlite._src.base.errors import ShardingTypeError
  stack = lambda: jax.sharding.reshard(jnp.broadcast_to(jnp.eye(3), (N, 3, 3)), P("X"))
  with jax.set_mesh(explicit_mesh()):
    x = jax.sharding.reshard(jnp.arange(4. * N).reshape(N, 4), P("X", None))
    got = {
        "scatter": x.at[:, 0].set(1.), "scatter_add": x.at[:, 1].add(jnp.ones(N)),
        "jit_scatter": jax.jit(lambda v: v.at[:, 0].set(1.))(x),
        "iota": lax.broadcasted_iota(jnp.int32, (8, 4), 0, out_sharding=P("X", "Y")),
        "jit_iota": jax.jit(lambda: lax.broadcasted_iota(jnp.int32, (8,), 0,
                                                         out_sharding=P("Y")))(),
        "dynamic_slice": lax.dynamic_slice_in_dim(x, 0, N // 2, 0),
        "jit_slice": jax.jit(lambda v: v[0:N // 2])(x),
        "top_k": lax.top_k(x, 2), "svd": jnp.linalg.svd(stack()),
        "eigh": jnp.linalg.eigh(stack()), "lu": lax.linalg.lu(stack()),
        "triangular_solve": lax.linalg.triangular_solve(
            stack(), jax.sharding.reshard(jnp.ones((N, 3, 2)), P("X", None, "Y")),
            left_side=True, lower=True),
        "fft": jnp.fft.fft(x), "rfft": jnp.fft.rfft(x), "conj": lax.conj(x),
        "bitcast": lax.bitcast_convert_type(x, jnp.uint16),
        "reduce_window": lax.reduce_window(x, 0., lax.add, (1, 2), (1, 2), "VALID"),
        "argsort": jnp.argsort(x, axis=1), "reduce": lax.reduce(x, 0., lax.add, (1,)),
    }
    errors = {
        "scatter": lambda: x.at[0].set(1.), "eager_slice": lambda: x[0:1],
        "jit_slice": lambda: jax.jit(lambda v: v[0:1])(x),
        "pad": lambda: jax.jit(lambda v: lax.pad(v, 0., ((1, 0, 0), (0, 0, 0))))(x),
        "sort": lambda: jnp.sort(x, axis=0), "top_k": lambda: lax.top_k(x.T, 1),
        "qr": lambda: jnp.linalg.qr(jax.sharding.reshard(jnp.ones((N, 3)), P("X", None))),
    }
    raised = {}
    for name, f in errors.items():
      with pytest.raises(ShardingTypeError) as info:
        f()
      raised[name] = str(info.value)
  h = N // 2
  assert {k: [_typ(v) for v in jax.tree.leaves(o)] for k, o in got.items()} == {
      "scatter": [f"float32[{N}@X,4]"], "scatter_add": [f"float32[{N}@X,4]"],
      "jit_scatter": [f"float32[{N}@X,4]"], "iota": ["int32[8@X,4@Y]"],
      "jit_iota": ["int32[8@Y]"], "dynamic_slice": [f"float32[{h}@X,4]"],
      "jit_slice": [f"float32[{h}@X,4]"],
      "top_k": [f"float32[{N}@X,2]", f"int32[{N}@X,2]"],
      "svd": [f"float32[{N}@X,3,3]", f"float32[{N}@X,3]", f"float32[{N}@X,3,3]"],
      "eigh": [f"float32[{N}@X,3]", f"float32[{N}@X,3,3]"],
      "lu": [f"float32[{N}@X,3,3]", f"int32[{N}@X,3]", f"int32[{N}@X,3]"],
      "triangular_solve": [f"float32[{N}@X,3,2@Y]"], "fft": [f"complex64[{N}@X,4]"],
      "rfft": [f"complex64[{N}@X,3]"], "conj": [f"complex64[{N}@X,4]"],
      "bitcast": [f"uint16[{N}@X,4,2]"], "reduce_window": [f"float32[{N}@X,2]"],
      "argsort": [f"int32[{N}@X,4]"], "reduce": [f"float32[{N}@X]"]}
  np.testing.assert_array_equal(got["scatter"][:, 0], np.ones(N))
  np.testing.assert_array_equal(got["jit_iota"], np.arange(8))
  gather = ("Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
            "indexing as out sharding could not be resolved unambiguously (or would require "
            f"collectives on inputs). Got operand=ShapedArray(float32[{N}@X,4]), "
            "indices=ShapedArray(int32[1])")
  mesh = ("AbstractMesh('X': %d, 'Y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
          "num_cores=None, platform=cpu)" % h)
  assert raised == {
      "scatter": (
          "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for "
          "the scatter update as out sharding could not be resolved unambiguously (or would "
          f"require collectives on inputs). Got operand=ShapedArray(float32[{N}@X,4]), "
          "indices=ShapedArray(int32[1]), updates=ShapedArray(float32[4])"),
      "eager_slice": gather,
      "jit_slice": (f"slicing on sharded dims where out dim (1) is not divisible by mesh axes "
                    f"({h}) with spec (X) is not implemented. Got input type=f32[{N}@X,4] "
                    "and output shape=(1, 4)"),
      "pad": (f"padding on sharded dims where out dim ({N + 1}) is not divisible by mesh "
              f"axes ({h}) with spec (X) is not implemented. Got input type=f32[{N}@X,4] "
              f"and output shape=({N + 1}, 4)"),
      "sort": ("Arguments to sort must be unsharded over the sorting dimension. Got arg "
               f"sharding=NamedSharding(mesh={mesh}, spec=P('X', None)) and sorting "
               "dimension=0"),
      "top_k": ("The input should be unsharded over the axis along which to compute the "
                f"top_k values. Got input type=float32[4,{N}@X] and axis=1"),
      "qr": "Input 0 to qr must be unsharded on non-batch dimensions, but got P('X', None).",
  }


def test_vmap_of_a_jit_keeps_the_batch_axis_split(tier):
  # JAX 0.10.2: vmapping a jitted function (or a library function JAX jits, as
  # jax.random.normal) over an array split over an Explicit axis keeps that split
  mesh = explicit_mesh()
  with jax.set_mesh(mesh):
    x = jax.sharding.reshard(jnp.arange(N * 3.0).reshape(N, 3), P("X"))
    doubled = jax.vmap(jax.jit(lambda r: r * 2))(x)
    assert _typ(doubled) == f"float32[{N}@X,3]"
    np.testing.assert_array_equal(np.asarray(doubled), np.arange(N * 3.0).reshape(N, 3) * 2)
    keys = jax.sharding.reshard(jax.random.split(jax.random.key(0), N), P("X"))
    assert _typ(jax.vmap(lambda k: jax.random.uniform(k, (3,)))(keys)) == f"float32[{N}@X,3]"


def test_keys_under_a_mesh_are_laid_out_over_it(tier):
  # JAX 0.10.2 (N = 4): a key array's sharding names its own dimensions (its data's less
  # the key's), its type shows its split, and jitted keys are laid out as arrays are
  mesh = explicit_mesh()
  with jax.set_mesh(mesh):
    k = jax.random.key(0)
    ks = jax.sharding.reshard(jax.random.split(k, N), P("X"))
    keys = [k, jax.random.split(k), ks, jax.vmap(jax.random.split)(ks),
            jax.random.key_data(ks), jax.vmap(lambda kk: jax.random.normal(kk, (3,)))(ks),
            jax.jit(lambda kk: kk)(ks), jax.random.wrap_key_data(jax.random.key_data(ks)),
            jax.vmap(jax.random.fold_in, (0, None))(ks, 3),
            jax.vmap(lambda kk: jax.random.bits(kk, (2,)))(ks)]
    specs = [k.sharding.spec, jax.random.split(k).sharding.spec, ks.sharding.spec,
             jax.jit(lambda: jax.random.key(1))().sharding.spec,
             jax.jit(jax.random.split)(k).sharding.spec]
  assert [_typ(v) for v in keys] == [
      "key<fry>[]", "key<fry>[2]", f"key<fry>[{N}@X]", f"key<fry>[{N}@X,2]",
      f"uint32[{N}@X,2]", f"float32[{N}@X,3]", f"key<fry>[{N}@X]", f"key<fry>[{N}@X]",
      f"key<fry>[{N}@X]", f"uint32[{N}@X,2]"]
  assert specs == [P(), P(None), P("X"), P(), P(None)]
  assert k.sharding.mesh == mesh
  auto = jax.make_mesh((N // 2, 2), ("X", "Y"), axis_types=(AUTO, AUTO))
  with jax.set_mesh(auto):
    k = jax.random.key(0)
    specs = [k.sharding.spec, jax.random.split(k).sharding.spec,
             jax.jit(jax.random.split)(k).sharding.spec]
  assert specs == [P(), P(None), P(None)]
  np.testing.assert_array_equal(jax.random.key_data(keys[6]), jax.random.key_data(ks))


def test_creation_functions_take_out_sharding(tier):
  # JAX 0.10.2 (N = 4): jax.typeof and the sharding's spec of each
  with jax.set_mesh(explicit_mesh()):
    got = [jnp.zeros((N, 2), out_sharding=P("X")), jnp.ones(4, jnp.int32, out_sharding=P("Y")),
           jnp.full((N, 2), 3., out_sharding=P(None, "Y")), jnp.arange(8, out_sharding=P("X")),
           jnp.arange(1., 5., 0.5, out_sharding=P("X")),
           jax.jit(lambda: jnp.zeros((N, 2), out_sharding=P("X")))(),
           lax.broadcast_in_dim(1., (N,), (), out_sharding=P("X"))]
  assert [(_typ(v), v.sharding.spec) for v in got] == [
      (f"float32[{N}@X,2]", P("X", None)), ("int32[4@Y]", P("Y")),
      (f"~float32[{N},2@Y]", P(None, "Y")), ("int32[8@X]", P("X")),
      ("float32[8@X]", P("X")), (f"float32[{N}@X,2]", P("X", None)),
      (f"~float32[{N}@X]", P("X"))]
  np.testing.assert_array_equal(got[4], np.arange(1., 5., 0.5, dtype=np.float32))
  with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh "
                     "context is not allowed"):
    jnp.zeros(4, out_sharding=P("X"))


def test_device_put_inside_jit_lays_the_value_out(tier):
  # JAX 0.10.2 (N = 4): a traced value is laid out as asked (its type split so); a Device
  # leaves it as it is
  mesh = explicit_mesh()
  with jax.set_mesh(mesh):
    x = jnp.arange(8.)
    got = [jax.jit(lambda v: jax.device_put(v, P("X")) * 2)(x),
           jax.jit(lambda v: jax.device_put(v, NamedSharding(mesh, P("Y"))))(x),
           jax.jit(lambda v: jax.device_put(v, jax.devices()[0]) + 1)(x)]
  assert [(_typ(v), v.sharding.spec) for v in got] == [
      ("float32[8@X]", P("X")), ("float32[8@Y]", P("Y")), ("float32[8]", P(None))]
  np.testing.assert_array_equal(got[0], np.arange(8.) * 2)


def test_a_constraint_over_devices_is_found_once_a_mesh_of_several_was_made():
  # jit's trace skips the walk for a layout over devices until a Mesh of several devices
  # exists (``mesh_context.several_devices``): here one does, and the walk finds it
  from jaxlite._src import jit as jit_mod
  from jaxlite._src.base import mesh_context
  mesh = jax.make_mesh((N,), ("a",), axis_types=(AUTO,))
  assert mesh_context.several_devices
  split = NamedSharding(mesh, P("a"))
  nested = jax.make_jaxpr(lambda v: lax.cond(True, lambda u: lax.with_sharding_constraint(
      u * 2.0, split), lambda u: u, v))(jnp.ones(N))
  plain = jax.make_jaxpr(lambda v: v * 2.0)(jnp.ones(N))
  for closed, found in ((nested, True), (plain, False)):
    assert jit_mod.constrains_over_devices(closed.jaxpr) is found
    assert jit_mod._constrains_over_devices(closed.jaxpr) is found
  out = jax.jit(lambda v: lax.with_sharding_constraint(v * 2.0, split))(jnp.arange(float(N)))
  assert out.sharding == split
  np.testing.assert_array_equal(out, 2.0 * np.arange(N))


def test_creation_functions_place_their_result_on_the_device_named():
  # JAX 0.10.2: jnp.zeros(..., device=d) is committed to d; a sharding lays it out
  second = jax.devices()[1]
  for out in (jnp.zeros(4, device=second), jnp.arange(4.0, device=second),
              jnp.asarray(np.ones(4), device=second), jnp.ones(4).astype(jnp.int32,
                                                                        device=second)):
    assert out.committed and out.devices() == {second}
    assert (out + 1).devices() == {second}   # (computations follow a committed array)
  split = NamedSharding(jax.make_mesh((N,), ("a",)), P("a"))
  out = jnp.arange(2.0 * N, device=split)
  assert out.sharding == split
  assert [s.data.tolist() for s in out.addressable_shards][1] == [2.0, 3.0]


def test_results_are_laid_out_as_jax():
  # JAX 0.10.2's types and layouts of results computed from arrays split over a 2x2 mesh
  # of Auto and of Explicit axes, eagerly and jitted, loops and branches included
  # (tests/data/make_partitioning_reference.py)
  ref = json.loads((pathlib.Path(__file__).parent / "data" / "partitioning_reference.json")
                   .read_text())
  operands, differ = ref["operands"], []
  for key, expected in ref["cases"].items():
    kind, how, text = key.split("|")
    if (how, text) == ("jit", "jnp.zeros_like(y)"):
      continue   # (JAX places a jit's output reached from no operand on one device)
    if key == "Auto|eager|lax.fori_loop(0, 3, lambda i, a: a * 2, y)":
      continue   # (JAX spells this one P('x',), its jitted form P('x', None): one layout)
    m = jax.make_mesh((2, 2), ("x", "y"), axis_types=(getattr(jax.sharding.AxisType, kind),) * 2)
    args = [jax.device_put(jnp.ones(shape), NamedSharding(m, P(*[
        tuple(e) if isinstance(e, list) else e for e in spec])))
            for shape, spec in operands.values()]
    f = eval("lambda " + ", ".join(operands) + ": " + text, {"jnp": jnp, "lax": lax})
    try:
      r = f(*args) if how == "eager" else jax.jit(f)(*args)
      s = r.sharding
      got = [str(jax.typeof(r)), repr(s.spec) if hasattr(s, "spec") else type(s).__name__]
      np.testing.assert_allclose(np.asarray(r), np.asarray(f(*map(np.asarray, args))),
                                 rtol=1e-6)
    except Exception as e:   # (an error's class and the start of its message)
      got = [type(e).__name__, str(e).splitlines()[0][:80]]
    if got != expected:
      differ.append((key, got, expected))
  assert not differ, "\n".join(map(str, differ))


def test_make_mesh_makes_explicit_axes():
  # as JAX 0.10.2's: make_mesh's axes are Explicit by default, a Mesh's Auto
  assert jax.make_mesh((2, 2), ("x", "y")).axis_types == (jax.sharding.AxisType.Explicit,) * 2
  mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("x",))
  assert mesh.axis_types == (jax.sharding.AxisType.Auto,)
  x = jax.device_put(jnp.arange(8.0), NamedSharding(jax.make_mesh((2,), ("x",)), P("x")))
  assert str(jax.typeof(x * 3)) == "float32[8@x]" and (x * 3).sharding.spec == P("x")


def test_remove_size_one_mesh_axis_from_type():
  # the types JAX 0.10.2 gives with and without the flag
  m = jax.make_mesh((1, 4), ("a", "x"))
  s = NamedSharding(m, P("x", "a"))
  x = jax.device_put(jnp.ones((8, 4)), s)
  assert str(jax.typeof(x)) == "float32[8@x,4@a]"
  with jax.remove_size_one_mesh_axis_from_type(True):
    x2 = jax.device_put(jnp.ones((8, 4)), s)
    assert [str(jax.typeof(x2)), str(jax.typeof(x))] == ["float32[8@x,4]"] * 2
    assert x2.sharding.spec == P("x", "a")
    y = jax.jit(lambda a: a * 2)(x2)
    assert y.sharding.spec == P("x", None) and str(jax.typeof(y)) == "float32[8@x,4]"
    assert str(jax.make_jaxpr(lambda a: a + 1)(x2)) == (
        "{ lambda ; a:f32[8@x,4]. let b:f32[8@x,4] = add a 1.0:f32[] in (b,) }")
  assert str(jax.make_jaxpr(lambda a: a + 1)(x2)) == (
      "{ lambda ; a:f32[8@x,4@a]. let b:f32[8@x,4@a] = add a 1.0:f32[] in (b,) }")


def test_a_constraint_inside_a_branch_lays_out_the_result():
  # JAX 0.10.2: P('x',) (the branch's constraint reaches the jit's result)
  s = NamedSharding(jax.make_mesh((N,), ("x",), axis_types=(AUTO,)), P("x"))
  f = jax.jit(lambda x, p: lax.cond(p, lambda x: lax.with_sharding_constraint(x, s),
                                    lambda x: x * 1, x))
  out = f(jnp.ones((8, 4)), True)
  assert out.sharding == s
  np.testing.assert_array_equal(np.asarray(out), np.ones((8, 4)))


def test_out_sharding_settles_what_the_type_rules_refuse():
  # JAX 0.10.2 runs a call given out_sharding= over Explicit axes with them made Auto:
  # (type, spec, sum) or (error, message start) as it printed them
  m = jax.make_mesh((2, 2), ("x", "y"))
  y = jax.device_put(jnp.arange(32.0).reshape(8, 4), NamedSharding(m, P("x", None)))
  z = jax.device_put(jnp.ones((8, 4)), NamedSharding(m, P(None, "y")))
  idx = jnp.array([0, 2, 5])
  cases = {
      "plain": (lambda: y[idx], ("ShardingTypeError", "Use `.at[...].get(out_sharding=)`")),
      "get": (lambda: y.at[idx].get(out_sharding=NamedSharding(m, P(None, "y"))),
              ("float32[3,4@y]", P(None, "y"), 130.0)),
      "get_jit": (lambda: jax.jit(lambda a, i: a.at[i].get(
          out_sharding=NamedSharding(m, P("y", None))))(y, idx),
                  ("ValueError", "Sharding spec ('y',) implies that array axis 0 is "
                                 "partitioned 2 times, but does not evenly")),
      "set": (lambda: y.at[idx].set(1.0, out_sharding=NamedSharding(m, P("x", None))),
              ("float32[8@x,4]", P("x", None), 378.0)),
      "reshape": (lambda: jnp.reshape(z, (32,), out_sharding=NamedSharding(m, P("x"))),
                  ("float32[32@x]", P("x"), 32.0)),
  }
  for name, (f, expected) in cases.items():
    try:
      r = f()
      got = (str(jax.typeof(r)), r.sharding.spec, float(r.sum()))
    except Exception as e:
      got = (type(e).__name__, str(e)[:len(expected[1])])
    assert got == expected, (name, got)


def test_constraints_and_jit_shardings_check_as_jax():
  # JAX 0.10.2: with_sharding_constraint names Auto axes only (reshard moves Explicit
  # ones) and asserts under an all-Explicit mesh in context; jit refuses in_shardings that
  # differ from a committed argument's layout
  mesh = jax.make_mesh((2, 2), ("x", "y"))
  x = jax.device_put(jnp.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("x", "y")))
  with pytest.raises(ValueError, match=r"The spec of NamedSharding passed to "
                     r"with_sharding_constraint can only refer to Auto axes of the mesh\. "
                     r"Got spec=P\('y', 'x'\)"):
    jax.jit(lambda a: lax.with_sharding_constraint(a * 2, NamedSharding(mesh, P("y", "x"))))(x)
  r = jax.jit(lambda a: jax.sharding.reshard(a * 2, NamedSharding(mesh, P("y", "x"))))(x)
  assert str(jax.typeof(r)) == "float32[8@y,4@x]"
  with jax.set_mesh(mesh):
    same = lax.with_sharding_constraint(x, P("x", "y"))
    assert same is x
    with pytest.raises(AssertionError, match=r"The array sharding: P\('x', 'y'\) did not "
                       r"match the sharding provided: P\('y', None\)"):
      lax.with_sharding_constraint(x, P("y"))
  for kind in (jax.sharding.AxisType.Explicit, AUTO):
    m = jax.make_mesh((2, 2), ("x", "y"), axis_types=(kind, kind))
    a = jax.device_put(jnp.arange(32.0).reshape(8, 4), NamedSharding(m, P("x", "y")))
    with pytest.raises(ValueError, match="Sharding passed to jit does not match the "
                       "sharding on the respective arg"):
      jax.jit(lambda v: v + 1, in_shardings=NamedSharding(m, P("x")))(a)
    assert jax.jit(lambda v: v + 1, in_shardings=NamedSharding(m, P("x", "y")))(
        a).sharding.spec == P("x", "y")
    r = jax.jit(lambda v: v + 1, in_shardings=NamedSharding(m, P("x")))(jnp.ones((8, 4)))
    assert r.sharding.spec == P("x")   # (JAX spells it as the argument's sharding)
