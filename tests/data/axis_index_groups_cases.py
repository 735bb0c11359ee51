"""Collectives with ``axis_index_groups``, written once for JAX 0.10.2 (recorded by
make_axis_index_groups_reference.py) and jaxlite (replayed by
tests/axis_index_groups_spmd.py on N CPU devices, both tiers).

``cases(jax, jnp, lax, n)`` takes either library and the device count and returns
``{name: thunk}``; a thunk computes a pytree of arrays. ``error_cases`` returns thunks
that must raise. Inputs hold small integers, so sums are exact in any order.
"""
import numpy as np


def groups(n):
  """Index groups of the axis of size n: halves, reversed pairs, evens/odds, uneven."""
  return {
      "halves": [list(range(n // 2)), list(range(n // 2, n))],
      "pairs": [[n - 1 - i, i] for i in range(n // 2)],
      "strided": [list(range(0, n, 2)), list(range(1, n, 2))],
      "uneven": [[0, 1, 2], list(range(3, n))],
  }


def cases(jax, jnp, lax, n):
  g = groups(n)
  x = jnp.asarray(np.arange(n * 3, dtype=np.float32).reshape(n, 3) - n)
  out = {}

  def pmap(f, *args):
    return lambda: jax.pmap(f, axis_name="i")(*args)

  for op in ("psum", "pmax", "pmin", "pmean"):
    for gname, grp in g.items():
      out[f"{op}_{gname}"] = pmap(
          lambda v, op=op, grp=grp: getattr(lax, op)(v, "i", axis_index_groups=grp), x)
  out["pmean_int"] = pmap(lambda v: lax.pmean(v, "i", axis_index_groups=g["halves"]),
                          jnp.arange(n * 2).reshape(n, 2))
  out["psum_tree"] = pmap(lambda v: lax.psum({"a": v, "b": (2 * v, v[0])}, "i",
                                             axis_index_groups=g["pairs"]), x)
  out["psum_constant"] = pmap(lambda v: v * lax.psum(1, "i",
                                                     axis_index_groups=g["halves"]), x)
  out["psum_tuple_groups"] = pmap(lambda v: lax.psum(
      v, "i", axis_index_groups=tuple(tuple(a) for a in g["strided"])), x)

  for gname in ("halves", "pairs", "strided"):
    grp = g[gname]
    out[f"all_gather_{gname}"] = pmap(
        lambda v, grp=grp: lax.all_gather(v, "i", axis_index_groups=grp), x)
    out[f"all_gather_axis1_tiled_{gname}"] = pmap(
        lambda v, grp=grp: lax.all_gather(v.reshape(1, 3), "i", axis_index_groups=grp,
                                          axis=1, tiled=True), x)
  # all_to_all: per-device [group size, 3] (untiled) or [2 * group size, 3] (tiled)
  xp = jnp.asarray(np.arange(n * 2 * 3, dtype=np.float32).reshape(n, 2, 3))
  out["all_to_all_pairs"] = pmap(
      lambda v: lax.all_to_all(v, "i", 0, 0, axis_index_groups=g["pairs"]), xp)
  out["all_to_all_pairs_concat1"] = pmap(
      lambda v: lax.all_to_all(v, "i", 0, 1, axis_index_groups=g["pairs"]), xp)
  xh = jnp.asarray(np.arange(n * n * 3, dtype=np.float32).reshape(n, n, 3))
  out["all_to_all_strided_tiled"] = pmap(
      lambda v: lax.all_to_all(v, "i", 0, 1, axis_index_groups=g["strided"], tiled=True),
      xh)
  out["all_to_all_halves_split1"] = pmap(
      lambda v: lax.all_to_all(v.T, "i", 1, 0, axis_index_groups=g["halves"],
                               tiled=True), xh)
  # psum_scatter: per-device [group size, 3], or tiled [n, 3] in groups of n/2
  xs = jnp.asarray(np.arange(n * (n // 2) * 3, dtype=np.float32).reshape(n, n // 2, 3))
  out["psum_scatter_halves"] = pmap(
      lambda v: lax.psum_scatter(v, "i", axis_index_groups=g["halves"]), xs)
  out["psum_scatter_strided_tiled"] = pmap(
      lambda v: lax.psum_scatter(v, "i", scatter_dimension=0,
                                 axis_index_groups=g["strided"], tiled=True), xh)
  out["psum_scatter_pairs_dim1"] = pmap(
      lambda v: lax.psum_scatter(v.T, "i", scatter_dimension=1,
                                 axis_index_groups=g["pairs"]), xp)

  # derivatives inside pmap (JAX has no rule for pmax/pmin)
  w = jnp.arange(3.0)
  out["grad_psum"] = pmap(jax.grad(
      lambda v: (lax.psum(v * v, "i", axis_index_groups=g["pairs"]) * w).sum()), x)
  out["grad_pmean"] = pmap(jax.grad(
      lambda v: (lax.pmean(v * v, "i", axis_index_groups=g["uneven"]) * w).sum()), x)
  out["grad_all_gather"] = pmap(jax.grad(
      lambda v: (lax.all_gather(v, "i", axis_index_groups=g["pairs"])
                 * jnp.arange(6.0).reshape(2, 3)).sum()), x)
  out["grad_all_gather_tiled"] = pmap(jax.grad(
      lambda v: (lax.all_gather(v, "i", axis_index_groups=g["halves"], tiled=True)
                 * jnp.arange(n // 2 * 3.0)).sum()), x)
  # (JAX 0.10.2's transpose of an untiled all_to_all with split != concat axis fails)
  out["grad_all_to_all"] = pmap(jax.grad(
      lambda v: (lax.all_to_all(v, "i", 0, 0, axis_index_groups=g["pairs"])
                 * jnp.arange(6.0).reshape(2, 3)).sum()), xp)
  out["grad_all_to_all_tiled"] = pmap(jax.grad(
      lambda v: (lax.all_to_all(v, "i", 0, 1, axis_index_groups=g["strided"], tiled=True)
                 * jnp.arange(n * 3.0).reshape(2, n // 2 * 3)).sum()), xh)
  out["grad_psum_scatter"] = pmap(jax.grad(
      lambda v: (lax.psum_scatter(v, "i", axis_index_groups=g["halves"])
                 * jnp.arange(3.0)).sum()), xs)
  out["jvp_psum"] = pmap(lambda v: jax.jvp(
      lambda u: lax.psum(u * u, "i", axis_index_groups=g["strided"]), (v,), (v + 1,)), x)
  out["vjp_all_gather"] = pmap(lambda v: jax.vjp(
      lambda u: lax.all_gather(u, "i", axis_index_groups=g["strided"]), v)[1](
          jnp.ones((n // 2, 3)) * v[0]), x)

  # shard_map on a (n/2, 2) mesh: groups index one mesh axis, or several together
  mesh = jax.make_mesh((n // 2, 2), ("x", "y"))
  P = jax.sharding.PartitionSpec
  xm = jax.device_put(jnp.asarray(np.arange(n * 2, dtype=np.float32).reshape(n, 2)),
                      jax.sharding.NamedSharding(mesh, P("x", "y")))

  def smap(f, out_specs=P("x", "y")):
    return lambda: jax.shard_map(f, mesh=mesh, in_specs=P("x", "y"), out_specs=out_specs,
                                 check_vma=False)(xm)
  half = [list(reversed(range(n // 2)))]   # one group on 'x', in reverse order
  out["shard_map_psum_x"] = smap(lambda v: lax.psum(v, "x", axis_index_groups=half))
  out["shard_map_psum_xy"] = smap(lambda v: lax.psum(v, ("x", "y"),
                                                     axis_index_groups=g["pairs"]))
  out["shard_map_pmax_yx"] = smap(lambda v: lax.pmax(v, ("y", "x"),
                                                     axis_index_groups=g["halves"]))
  out["shard_map_psum_xy_uneven"] = smap(lambda v: lax.psum(v, ("x", "y"),
                                                            axis_index_groups=g["uneven"]))
  out["shard_map_all_gather_y"] = smap(
      lambda v: lax.all_gather(v, "y", axis_index_groups=[[1, 0]], axis=1, tiled=True),
      P("x", None))
  return out


def error_cases(jax, jnp, lax, n):
  """Thunks that raise under pmap (the pmapped inputs have n rows)."""
  g = groups(n)
  x = jnp.arange(n * 2.0).reshape(n, 2)

  def pmap(f):
    return lambda: jax.pmap(f, axis_name="i")(x)
  return {
      "psum_overlap": pmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [1, 2]])),
      "pmean_gap": pmap(lambda v: lax.pmean(v, "i", axis_index_groups=[[0, 2]])),
      "all_gather_overlap": pmap(lambda v: lax.all_gather(v, "i",
                                                          axis_index_groups=[[0, 0]])),
      "psum_too_many": pmap(lambda v: lax.psum(
          v, "i", axis_index_groups=[list(range(n)), list(range(n, n + 2))])),
      "all_gather_uneven": pmap(lambda v: lax.all_gather(v, "i",
                                                         axis_index_groups=g["uneven"])),
      "psum_scatter_uneven": pmap(lambda v: lax.psum_scatter(
          jnp.ones((3, 2)), "i", axis_index_groups=g["uneven"])),
      "all_to_all_uneven": pmap(lambda v: lax.all_to_all(
          jnp.ones((3, 2)), "i", 0, 0, axis_index_groups=g["uneven"])),
      "all_to_all_wrong_split": pmap(lambda v: lax.all_to_all(
          v, "i", 0, 0, axis_index_groups=g["halves"] if n != 4 else [[0, 1, 2, 3]])),
      "psum_scatter_wrong_size": pmap(lambda v: lax.psum_scatter(
          jnp.ones((3, 2)), "i", axis_index_groups=g["pairs"])),
  }


def vmap_cases(jax, jnp, lax):
  """Under vmap JAX rejects groups (except for a constant's psum); run on one device."""
  x = jnp.arange(4.0)
  grp = [[0, 1], [2, 3]]

  def vmap(f, *args):
    return lambda: jax.vmap(f, axis_name="i")(*args)
  return {
      "psum": vmap(lambda v: lax.psum(v, "i", axis_index_groups=grp), x),
      "pmean": vmap(lambda v: lax.pmean(v, "i", axis_index_groups=grp), x),
      "pmax": vmap(lambda v: lax.pmax(v, "i", axis_index_groups=grp), x),
      "pmin": vmap(lambda v: lax.pmin(v, "i", axis_index_groups=grp), x),
      "all_gather": vmap(lambda v: lax.all_gather(v, "i", axis_index_groups=grp), x),
      "all_to_all": vmap(lambda v: lax.all_to_all(v, "i", 0, 0, axis_index_groups=grp),
                         jnp.ones((4, 2))),
      "psum_scatter": vmap(lambda v: lax.psum_scatter(v, "i", axis_index_groups=grp),
                           jnp.ones((4, 2))),
      "psum_in_jit": vmap(jax.jit(lambda v: lax.psum(v, "i", axis_index_groups=grp)), x),
      "psum_uneven": vmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1, 2], [3]]),
                          x),
      "psum_overlap": vmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [1, 2]]),
                           x),
      "all_gather_overlap": vmap(lambda v: lax.all_gather(
          v, "i", axis_index_groups=[[0, 1], [1, 2]]), x),
      "psum_constant": vmap(lambda v: lax.psum(2.0, "i", axis_index_groups=grp), x),
      "pmean_constant": vmap(lambda v: lax.pmean(3.0, "i", axis_index_groups=grp), x),
      "psum_unmapped_arg": lambda: jax.vmap(
          lambda v, c: lax.psum(c, "i", axis_index_groups=grp), in_axes=(0, None),
          axis_name="i")(x, 5.0),
      "make_jaxpr": lambda: str(jax.make_jaxpr(
          lambda v: lax.psum(v, "i", axis_index_groups=grp), axis_env=[("i", 4)])(1.0)),
  }
