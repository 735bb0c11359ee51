"""The one function every jit compile passes through (the part JAX's ``jax._src.compiler``
plays for libraries).

``jit`` calls ``backend_compile_and_load(backend, compile, *args)`` through this module's
attribute each time it compiles a signature, for either tier, so a wrapper installed on it
(chex's ``restrict_backends`` does this, by name, on ``jax._src.compiler``) sees every
compile together with the platform it is for.
"""
import dataclasses


@dataclasses.dataclass(frozen=True)
class Backend:
  """What a compile targets: ``platform`` is 'cpu' or 'gpu', as JAX's backends say."""
  platform: str


def backend_compile_and_load(backend, compile, *args):
  """Compile for ``backend`` by calling ``compile(*args)``; returns what it returns."""
  del backend   # one process-wide compiler per tier; the platform is for wrappers to read
  return compile(*args)
