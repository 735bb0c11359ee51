"""The NumPy backend's rows for collectives: they never run here.

``vmap`` computes a collective over its axis with ordinary operations on the batch, so a
collective reaches a backend only from a jaxpr traced inside a vmap (by ``jit``, say)
and then run outside it; that is an error, and the message says why.
"""
from jaxlite._src.backends.numpy.impls import impl_rules
from jaxlite._src.lax import parallel
from jaxlite._src.lax.sharding_constraint import layout_constraint_p, sharding_constraint_p


def _outside_vmap(name, axis_names):
  def impl(*args, **params):
    names = params[axis_names]
    names = names if isinstance(names, tuple) else (names,)
    raise NameError(f"unbound axis name: {names[0]}. {name} ran outside the vmap that "
                    f"binds the name: it was traced inside jax.vmap(..., axis_name="
                    f"{names[0]!r}) and then evaluated without it.")
  return impl


impl_rules.update({
    parallel.psum_p: _outside_vmap("psum", "axes"),
    parallel.pmax_p: _outside_vmap("pmax", "axes"),
    parallel.pmin_p: _outside_vmap("pmin", "axes"),
    parallel.all_gather_p: _outside_vmap("all_gather", "axis_name"),
    parallel.axis_index_p: _outside_vmap("axis_index", "axis_name"),
    parallel.ppermute_p: _outside_vmap("ppermute", "axis_name"),
    parallel.all_to_all_p: _outside_vmap("all_to_all", "axis_name"),
    # a layout request for XLA's partitioner: tier 0 computes unsharded
    sharding_constraint_p: lambda x, *, sharding: x,
    # a device memory layout: host arrays have one layout, and values never change
    layout_constraint_p: lambda x, *, layout: x,
})
