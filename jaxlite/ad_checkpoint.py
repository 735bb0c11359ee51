"""``jax.ad_checkpoint``: naming values (``checkpoint_name``) for the policies of
``jax.checkpoint`` (``checkpoint_policies``), what a policy may answer (``Recompute``,
``Saveable``, ``Offloadable``), and ``print_saved_residuals``."""
from jaxlite._src.autodiff_api import print_saved_residuals as print_saved_residuals
from jaxlite._src.lax.ad_checkpoint import (
    Offloadable as Offloadable,
    Recompute as Recompute,
    Saveable as Saveable,
    checkpoint_name as checkpoint_name,
    checkpoint_policies as checkpoint_policies,
)

# removed from JAX in v0.10.0; reading them raises AttributeError with JAX's message
_removed = {
    "checkpoint": "jax.ad_checkpoint.checkpoint was deprecated in JAX v0.8.2 and removed in"
                  " JAX v0.10.0; use jax.checkpoint instead.",
    "remat": "jax.ad_checkpoint.remat was deprecated in JAX v0.8.2 and removed in"
             " JAX v0.10.0; use jax.remat instead.",
}


def __getattr__(name):
  if name in _removed:
    raise AttributeError(_removed[name])
  raise AttributeError(f"module 'jax.ad_checkpoint' has no attribute {name!r}")
