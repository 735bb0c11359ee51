"""``jaxlite.scipy.spatial`` (``jax.scipy.spatial``): its ``transform`` module is imported
by name (``import jax.scipy.spatial.transform``), as in JAX."""
