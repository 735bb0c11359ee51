"""Record JAX's answers for the ``jax.ad_checkpoint`` cases as
tests/data/ad_checkpoint_reference.json.

Run with the reference venv: /work/jaxref/bin/python tests/data/make_ad_checkpoint_reference.py
The cases are defined in ad_checkpoint_cases.py, shared with tests/test_ad_checkpoint.py.
"""
import contextlib
import inspect
import io
import json
import os
import sys

import jax
import jax.ad_checkpoint  # noqa: F401  (not loaded by `import jax`)
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ad_checkpoint_cases as cases  # noqa: E402


def printed(f, args):
  out = io.StringIO()
  with contextlib.redirect_stdout(out):
    jax.ad_checkpoint.print_saved_residuals(f, *args)
  return out.getvalue().splitlines()


def error(f):
  try:
    f()
  except Exception as e:  # noqa: BLE001 - the class and message are what is recorded
    return [type(e).__name__, str(e)]
  return None


def values(policy):
  g = jax.checkpoint(cases.model(jax), policy=policy)
  v, (gw, gx) = jax.value_and_grad(g, argnums=(0, 1))(cases.W, cases.X)
  return {"value": float(v), "grad_w": np.asarray(gw).tolist(),
          "grad_x": np.asarray(gx).tolist()}


g = jax.checkpoint(cases.scalar_model(jax),
                   policy=jax.checkpoint_policies.save_only_these_names("y"))
out = {
    "jax_version": jax.__version__,
    "names": sorted(n for n in dir(jax.ad_checkpoint) if not n.startswith("_")),
    "policies": {n: str(inspect.signature(getattr(jax.checkpoint_policies, n)))
                 for n in vars(jax.checkpoint_policies)},
    "checkpoint_name_signature": str(inspect.signature(jax.ad_checkpoint.checkpoint_name)),
    "values": {k: values(p) for k, p in cases.policies(jax).items()},
    "scalar": {
        "vmap_grad": np.asarray(jax.vmap(jax.grad(g))(cases.XS)).tolist(),
        "jvp": [np.asarray(a).tolist() for a in jax.jvp(g, (cases.XS,),
                                                       (np.ones_like(cases.XS),))],
    },
    "hessians": {k: np.asarray(jax.hessian(jax.checkpoint(cases.outer_model(jax), policy=p))(
        cases.XS[1:])).tolist() for k, p in cases.policies(jax).items()},
    "jaxprs": {k: str(jax.make_jaxpr(f)(*a)) for k, (f, a) in cases.jaxpr_cases(jax).items()},
    "residuals": {k: printed(f, a) for k, (f, a) in cases.residual_cases(jax).items()},
    "errors": {k: error(f) for k, f in cases.error_cases(jax).items()},
}
with open(os.path.join(os.path.dirname(__file__), "ad_checkpoint_reference.json"), "w") as f:
  json.dump(out, f, indent=1)
