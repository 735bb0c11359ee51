"""The one function every jit compile passes through (the part JAX's ``jax._src.compiler``
plays for libraries).

``jit`` calls ``backend_compile_and_load(backend, compile, *args)`` through this module's
attribute each time it compiles a signature, for either tier, so a wrapper installed on it
(chex's ``restrict_backends`` does this, by name, on ``jax._src.compiler``) sees every
compile together with the platform it is for.

It also defines the executables a jitted signature runs, which ``jit`` dispatches on by
class: a host function of NumPy values (tier 0), an ``XlaDispatch`` (device buffers in
and out), or a ``tiers.Race`` (argument leaves in, Arrays out) while the policy chooses.
"""
import dataclasses

from jaxlite._src.base import trace_events
from jaxlite._src.core import core


@dataclasses.dataclass(frozen=True)
class Backend:
  """What a compile targets: ``platform`` is 'cpu' or 'gpu', as JAX's backends say."""
  platform: str


def backend_compile_and_load(backend, compile, *args):
  """Compile for ``backend`` by calling ``compile(*args)``; returns what it returns."""
  # (one process-wide compiler per tier; the platform is for wrappers and traces to read)
  # at the eager trace: a compile asked for while a function is traced (an AOT
  # ``lower().compile()`` inside a jit) reads its constants and stages nothing there
  with core.set_current_trace(core.eval_trace):
    if trace_events.recording is None:
      return compile(*args)
    # a profiler trace names the compiler (tier 0's compile_jaxpr, XLA's compile_xla)
    with trace_events.span("backend_compile_and_load", platform=backend.platform,
                           compiler=compile.__qualname__,
                           fun_name=args[1] if len(args) > 1 else ""):
      return compile(*args)


class XlaDispatch:
  """The XLA tier serving a signature. The jit call paths use ``execute_device``:
  buffers of device-backed arguments go in as they are and the outputs come back as
  device buffers, not waited for (asynchronous dispatch). Called with NumPy values it
  runs synchronously and returns NumPy arrays (``Compiled``, the tier race: the race
  times XLA including the wait for its results and their transfer)."""
  __slots__ = ("executable", "execute_device", "client", "consts")

  def __init__(self, executable, consts=()):
    self.executable = executable
    self.client = executable.loaded.client   # whose buffers its arguments must be
    # the buffers of constants that live on a device, its leading parameters (``jit._hoist``)
    self.consts = list(consts)
    if self.consts:
      run, before = executable.execute_device, self.consts
      self.execute_device = lambda bufs: run(before + list(bufs))
    else:
      self.execute_device = executable.execute_device

  def __call__(self, *values):
    return self.executable(*self.consts, *values)

  def execute_donating(self, bufs, donate):
    n = len(self.consts)
    return self.executable.execute_donating(self.consts + list(bufs), [i + n for i in donate])
