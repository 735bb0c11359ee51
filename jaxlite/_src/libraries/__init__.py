"""The libraries layer: ``jax.numpy``, ``jax.nn``, ``jax.scipy``, ``jax.random`` and
friends, written over ``lax``. Nothing below imports them; the public ``jaxlite.*``
modules re-export them."""
