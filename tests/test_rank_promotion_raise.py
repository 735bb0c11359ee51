"""Library functions under ``jax_numpy_rank_promotion='raise'`` against JAX 0.10.2's
values (tests/data/make_rank_promotion_reference.py), eagerly and under ``jit``.

The setting refuses the user's implicit rank promotion only: JAX's library code broadcasts
its own operands explicitly, so ``jnp.polyfit``, ``jnp.cov`` with weights, the spectral
functions of ``scipy.signal``, ``expm`` of a stack, the bounded ``random`` samplers and
``dot_product_attention``'s masks all run where diffrax's and equinox's tests set 'raise'.
"""
import json
import os
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
import rank_promotion_cases  # noqa: E402

with open(os.path.join(DATA, "rank_promotion_reference.json")) as _fh:
  REFERENCE = json.load(_fh)


def _evaluate(src):
  env = {"jax": jax, "jnp": jnp}
  exec(rank_promotion_cases.ARRAYS, env)
  return eval(src, env)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("name", sorted(rank_promotion_cases.CASES))
def test_matches_jax_under_rank_promotion_raise(name, mode):
  src = rank_promotion_cases.CASES[name]
  with jax.numpy_rank_promotion("raise"):
    got = _evaluate(src) if mode == "eager" else jax.jit(lambda: _evaluate(src))()
  leaves = jax.tree.leaves(got)
  assert len(leaves) == len(REFERENCE[name])
  for leaf, want in zip(leaves, REFERENCE[name]):
    leaf = np.asarray(leaf)
    assert leaf.dtype == np.dtype(want["dtype"]) and list(leaf.shape) == want["shape"]
    expected = (np.array(want["real"]) + 1j * np.array(want["imag"])).reshape(want["shape"])
    if leaf.dtype.kind in "biu":
      np.testing.assert_array_equal(leaf, expected.real)
    else:
      scale = np.abs(expected).max() if expected.size else 1.0
      np.testing.assert_allclose(leaf, expected if leaf.dtype.kind == "c" else expected.real,
                                 rtol=2e-4, atol=2e-5 * scale)


def test_implicit_rank_promotion_of_the_users_operands_still_raises():
  # JAX 0.10.2: ValueError "Operands could not be broadcast together for clip ..."
  with jax.numpy_rank_promotion("raise"), pytest.raises(ValueError, match="rank_promotion"):
    jnp.polyval(jnp.ones(3), jnp.ones((2, 2))) + jnp.ones(2)
