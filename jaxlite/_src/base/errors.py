"""The exception classes users can catch, named and arranged as in ``jax.errors``.

Each message says what happened, where, and what to do instead; the classes add the
link to the explanation page the way JAX's do.
"""

_DOCS = "https://docs.jax.dev/en/latest/errors.html#jax.errors."


class _JAXErrorMixin:
  """Appends the link to JAX's explanation of this error class."""

  def __init__(self, message: str):
    super().__init__(f"{message}\nSee {_DOCS}{type(self).__name__}")


class JAXTypeError(_JAXErrorMixin, TypeError):
  pass


class JAXIndexError(_JAXErrorMixin, IndexError):
  pass


def _tracer_origin(tracer) -> str:
  """The sentence naming the traced function and the arguments the value came from."""
  describe = getattr(tracer._trace, "describe_origin", None)
  return describe(tracer) if describe is not None else ""


class ConcretizationTypeError(JAXTypeError):
  """A concrete Python value was needed from a traced (abstract) array."""

  def __init__(self, tracer, context: str = ""):
    super().__init__(
        f"Abstract tracer value encountered where concrete value is expected: "
        f"traced array with shape {tracer.aval.str_short()}\n{context}{_tracer_origin(tracer)}\n")


class TracerBoolConversionError(ConcretizationTypeError):
  """``bool()`` (an ``if``, ``while``, ``and``, ``or``) applied to a traced array."""

  def __init__(self, tracer):
    JAXTypeError.__init__(
        self,
        f"Attempted boolean conversion of traced array with shape {tracer.aval.str_short()}.\n"
        f"{_tracer_origin(tracer)}\n"
        "Python control flow cannot branch on a traced value. Express the choice as data "
        "with jnp.where(pred, x, y), or as structured control flow with "
        "jax.lax.cond / jax.lax.while_loop; or mark the argument static with "
        "static_argnums / static_argnames.")


class TracerIntegerConversionError(JAXTypeError):
  """``__index__`` (indexing a Python list, ``range``) applied to a traced array."""

  def __init__(self, tracer):
    super().__init__(
        f"The __index__() method was called on traced array with shape {tracer.aval.str_short()}.\n"
        f"{_tracer_origin(tracer)}\n"
        "A traced value cannot index a Python sequence or size a range. Keep the value "
        "static (static_argnums) or use jnp / lax indexing instead.")


class TracerArrayConversionError(JAXTypeError):
  """``np.asarray`` (or another NumPy call) applied to a traced array."""

  def __init__(self, tracer):
    super().__init__(
        f"The numpy.ndarray conversion method __array__() was called on traced array "
        f"with shape {tracer.aval.str_short()}.\n{_tracer_origin(tracer)}\n"
        "NumPy functions cannot run on traced values: use the jax.numpy equivalent "
        "(import jaxlite.numpy as jnp) inside transformed functions.")


class UnexpectedTracerError(JAXTypeError):
  """A tracer escaped the transformation that created it (e.g. saved in a global)."""

  def __init__(self, tracer, detail: str = ""):
    where = getattr(tracer._trace, "description", "a transformation")
    super().__init__(
        f"Encountered an unexpected tracer. A function transformed by JAX had a side "
        f"effect, allowing for a reference to an intermediate value with type "
        f"{tracer.aval.str_short()} wrapped in a {type(tracer).__name__} to escape the "
        f"scope of the transformation.\n"
        f"JAX transformations require that functions explicitly return their outputs, "
        f"and disallow saving intermediate values to global state.\n"
        f"The function being traced when the value leaked was {where}.{detail}\n"
        "Return the value from the function instead of storing it in a global, a closure "
        "or an attribute.")


class NonConcreteBooleanIndexError(JAXIndexError):
  """Boolean-mask indexing needs the mask's value to know the result's shape."""

  def __init__(self, tracer):
    super().__init__(
        f"Array boolean indices must be concrete; got {tracer.aval}\n"
        "The result's shape would depend on the mask's values. Use "
        "jnp.where(mask, x, fill) to keep the shape, or pass size= to jnp.nonzero.\n")


class KeyReuseError(JAXTypeError):
  pass


class JaxRuntimeError(RuntimeError):
  """An error the runtime reports: XLA's (a failed compile, an out-of-memory device, a
  donated buffer used again), its message prefixed by its status code, or a transfer the
  transfer guard disallows. JAX's older name for it is ``XlaRuntimeError``."""


class ShardingTypeError(Exception):
  """An operation whose operands' splits over Explicit mesh axes give no well-defined
  split of its result (``jax._src.core.ShardingTypeError``)."""


class InconclusiveDimensionOperation(Exception):
  """A comparison or arithmetic on symbolic dimensions whose result depends on the values
  the symbols take (``jax.errors.InconclusiveDimensionOperation``)."""


class JaxprTypeError(TypeError):
  """A jaxpr that is not well typed: an equation's inputs do not have the types its
  primitive requires (``jax.errors.JaxprTypeError``, raised by jaxpr type checks)."""
