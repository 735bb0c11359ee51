"""What the ``jax.stages`` objects of a jitted function report about its signature
(``args_info``, ``in_tree``, ``in_avals``, ``donate_argnums``, ``out_avals``, ...) and which
public attributes they have, for ``make_stages_reference.py`` (run with real JAX) and
``tests/test_stages_info.py``. ``report(jax)`` gives reprs, which both libraries share."""
import numpy as np


def _f(x, y=2., *, z=None):
  return {"a": x * y, "b": x + 1}


def report(jax):
  jnp = jax.numpy
  x = jnp.arange(3.)
  out = {}
  calls = {
      "positional": (jax.jit(_f), (x, 3.), {}),
      "keyword": (jax.jit(_f), (x,), {"y": np.float32(3.)}),
      "static_name": (jax.jit(_f, static_argnames="z"), (x,), {"z": 1}),
      "donated": (jax.jit(_f, donate_argnums=0), (jnp.arange(3.), jnp.ones(3)), {}),
      "donated_name": (jax.jit(_f, donate_argnames="y"), (x,), {"y": jnp.ones(3)}),
  }
  for name, (f, args, kwargs) in calls.items():
    traced = f.trace(*args, **kwargs)
    lowered = traced.lower()
    compiled = lowered.compile()
    for stage, obj in (("traced", traced), ("lowered", lowered), ("compiled", compiled)):
      for attr in ("args_info", "in_tree", "in_avals", "donate_argnums", "out_tree"):
        out[f"{name}.{stage}.{attr}"] = repr(getattr(obj, attr))
    out[f"{name}.traced.out_avals"] = repr(traced.out_avals)
    out[f"{name}.traced.fun_name"] = repr(traced.fun_name)
    out[f"{name}.compiled.output_shardings.type"] = repr(
        jax.tree.map(lambda s: type(s).__name__, compiled.output_shardings))
    out[f"{name}.compiled.result"] = repr(jax.tree.map(
        lambda a: np.asarray(a).tolist(),
        compiled(*args, **{k: v for k, v in kwargs.items() if k != "z"})))   # (z: static)
  traced = jax.jit(_f).trace(x)
  lowered = traced.lower()
  for stage, obj in (("traced", traced), ("lowered", lowered), ("compiled", lowered.compile())):
    out[f"dir.{stage}"] = repr(sorted(n for n in dir(obj) if not n.startswith("_")))
  return out
