"""``jax.ad_checkpoint`` and ``jax.checkpoint_policies`` against JAX 0.10.2: the module's
names, ``checkpoint_name``'s jaxprs under each transformation, the values and gradients
of ``jax.checkpoint`` under every policy, what each policy saves (``print_saved_residuals``)
and the errors. Recorded by tests/data/make_ad_checkpoint_reference.py from the cases in
tests/data/ad_checkpoint_cases.py."""
import contextlib
import inspect
import io
import json
import os
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.ad_checkpoint  # noqa: F401  (jax.ad_checkpoint, as JAX's, loads on import)
import jaxlite.numpy as jnp
from jaxlite._src import tiers
from jaxlite.ad_checkpoint import checkpoint_name

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
import ad_checkpoint_cases as cases  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data",
                       "ad_checkpoint_reference.json")) as _f:
  JAX = json.load(_f)


def close(actual, expected):
  np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=2e-5, atol=1e-6)


def test_the_module_has_jax_s_public_names():
  assert sorted(n for n in dir(jax.ad_checkpoint) if not n.startswith("_")) == JAX["names"]
  assert str(inspect.signature(checkpoint_name)) == JAX["checkpoint_name_signature"]


def test_every_policy_of_jax_is_there_with_its_signature():
  assert {n: str(inspect.signature(getattr(jax.checkpoint_policies, n)))
          for n in vars(jax.checkpoint_policies)} == JAX["policies"]


@pytest.mark.parametrize("case", sorted(JAX["jaxprs"]))
def test_jaxprs_print_as_jax_s(case):
  f, args = cases.jaxpr_cases(jax)[case]
  assert str(jax.make_jaxpr(f)(*args)) == JAX["jaxprs"][case]


@pytest.mark.parametrize("policy", sorted(JAX["values"]))
def test_values_and_gradients_under_each_policy(policy):
  g = jax.checkpoint(cases.model(jax), policy=cases.policies(jax)[policy])
  v, (gw, gx) = jax.value_and_grad(g, argnums=(0, 1))(cases.W, cases.X)
  expected = JAX["values"][policy]
  close(v, expected["value"])
  close(gw, expected["grad_w"])
  close(gx, expected["grad_x"])


@pytest.mark.parametrize("policy", sorted(JAX["hessians"]))
def test_second_derivatives_under_each_policy(policy):
  g = jax.checkpoint(cases.outer_model(jax), policy=cases.policies(jax)[policy])
  close(jax.hessian(g)(cases.XS[1:]), JAX["hessians"][policy])


@pytest.mark.parametrize("tier", ["numpy", "xla"])
def test_named_values_under_jit_on_both_tiers(tier):
  if tier == "xla" and not tiers.xla_available():
    pytest.skip("no XLA plugin")
  g = jax.checkpoint(cases.scalar_model(jax),
                     policy=jax.checkpoint_policies.save_only_these_names("y"))
  with jax.config.override("jaxlite_tier", tier):
    close(jax.jit(jax.vmap(jax.grad(g)))(cases.XS), JAX["scalar"]["vmap_grad"])
    primal, tangent = jax.jit(lambda x: jax.jvp(g, (x,), (jnp.ones_like(x),)))(cases.XS)
    close(primal, JAX["scalar"]["jvp"][0])
    close(tangent, JAX["scalar"]["jvp"][1])
    policy = jax.checkpoint_policies.save_only_these_names("a")
    grads = jax.jit(jax.grad(jax.checkpoint(cases.model(jax), policy=policy),
                             argnums=(0, 1)))(cases.W, cases.X)
  close(grads[0], JAX["values"]["save_only_these_names(a)"]["grad_w"])
  close(grads[1], JAX["values"]["save_only_these_names(a)"]["grad_x"])


def test_checkpoint_name_is_the_identity_eagerly():
  x = jnp.arange(3.0)
  assert checkpoint_name(x, "x") is x
  tree = checkpoint_name({"a": x, "b": (x, 2.0)}, "t")
  assert tree["a"] is x and tree["b"][0] is x and float(tree["b"][1]) == 2.0


def _jax_residual(line):
  # JAX ends the description of a value made by an equation with " from file:line (fun)"
  # (its source line); jaxlite records no source lines, so that part is left out
  if " named '" in line or " output of " in line:
    return line[:line.rindex(" from ")]
  return line


@pytest.mark.parametrize("case", sorted(JAX["residuals"]))
def test_print_saved_residuals_names_what_jax_s_saves(case):
  f, args = cases.residual_cases(jax)[case]
  out = io.StringIO()
  with contextlib.redirect_stdout(out):
    jax.ad_checkpoint.print_saved_residuals(f, *args)
  assert out.getvalue().splitlines() == [_jax_residual(x) for x in JAX["residuals"][case]]


@pytest.mark.parametrize("case", sorted(JAX["errors"]))
def test_errors_are_jax_s(case):
  cls, msg = JAX["errors"][case]
  with pytest.raises(Exception) as info:
    cases.error_cases(jax)[case]()
  assert type(info.value).__name__ == cls
  # (the messages name sets and objects whose printing differs between runs)
  assert str(info.value).split(" Got")[0] == msg.split(" Got")[0]
