"""``PartitionSpec`` as a value (construction, unreduced/reduced axes, printing, equality,
the sequence protocol, errors) against JAX 0.10.2's, recorded in
tests/data/partition_spec_reference.json by make_partition_spec_reference.py from the
cases in partition_spec_cases.py."""
import json
import os
import sys

import pytest

import jaxlite

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from partition_spec_cases import report  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data",
                       "partition_spec_reference.json")) as _f:
  JAX = json.load(_f)["report"]


@pytest.fixture(scope="module")
def ours():
  return report(jaxlite)


@pytest.mark.parametrize("case", sorted(JAX))
def test_partition_spec_behaves_as_jax(ours, case):
  assert ours[case] == JAX[case]


def test_every_case_was_recorded(ours):
  assert set(ours) == set(JAX)


# jaxlite does not model arrays that hold partial sums (JAX's unreduced axes; JAX 0.10.2
# computes these): each way of asking for one raises, rather than lay it out replicated.
@pytest.mark.parametrize("how", ["dot_out_sharding", "jit_dot_out_sharding", "device_put",
                                 "reshard", "jit_out_shardings", "constraint"])
def test_arrays_over_unreduced_axes_are_refused_clearly(how):
  jax, jnp = jaxlite, jaxlite.numpy
  P, NamedSharding = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
  mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
  unreduced, reduced = P(None, None, unreduced={"x"}), P(None, reduced={"x"})
  dot = lambda a, b: jnp.dot(a, b, out_sharding=unreduced)
  calls = {
      "dot_out_sharding": lambda a, b: dot(a, b),
      "jit_dot_out_sharding": lambda a, b: jax.jit(dot)(a, b),
      "device_put": lambda a, b: jax.device_put(a, NamedSharding(mesh, reduced)),
      "reshard": lambda a, b: jax.sharding.reshard(a, reduced),
      "jit_out_shardings": lambda a, b: jax.jit(
          lambda a: a, out_shardings=NamedSharding(mesh, reduced))(a),
      "constraint": lambda a, b: jax.lax.with_sharding_constraint(
          a, NamedSharding(mesh, reduced)),
  }
  with jax.set_mesh(mesh):
    a, b = jnp.ones((4, 8)), jnp.ones((8, 4))
    with pytest.raises(NotImplementedError, match="jaxlite does not lay out arrays over "
                                                  "unreduced or reduced mesh axes"):
      calls[how](a, b)
