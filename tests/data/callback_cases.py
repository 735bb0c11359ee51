"""Host callbacks under vmap, recorded from JAX (make_callbacks_vmap.py) and replayed on
jaxlite (tests/test_callbacks_vmap.py).

``cases(jax, jnp, io_callback, jit)`` takes the modules, so the same code builds the
functions for real JAX and for jaxlite, and ``jit``, the jit that cases use inside vmap.
Each case is ``(make, args)``: ``make(record)`` returns the function to run, whose
callbacks pass ``record`` what they were called with (see ``describe``), in call order.
"""
import numpy as np

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized")


def describe(jax, value):
  """What a callback saw of one argument: [is a jax.Array, shape, dtype, values]."""
  host = np.asarray(value)
  return [isinstance(value, jax.Array), list(host.shape), host.dtype.name, host.tolist()]


def _arange(*shape, dtype=np.float32):
  return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def _pure_cases(jax, jnp, jit):
  vmap = jax.vmap

  def host(record, describe_all):
    def add(x, y=None, *, z=None):
      record(["add", describe_all(x, y, z)])
      other = y if y is not None else z
      return np.asarray(x) + np.asarray(other)
    return add

  def sds(shape, dtype=np.float32):
    return jax.ShapeDtypeStruct(shape, dtype)

  def seen(*values):
    return [describe(jax, v) for v in values if v is not None]

  out = {}
  for m in VMAP_METHODS:
    def mixed(record, m=m):
      cb = host(record, seen)
      return vmap(lambda x, y: jax.pure_callback(cb, sds(x.shape), x, y, vmap_method=m),
                  in_axes=(0, None))

    def axis1_kwarg(record, m=m):
      cb = host(record, seen)
      return vmap(lambda x, y: jax.pure_callback(cb, sds(x.shape), x, z=y, vmap_method=m),
                  in_axes=(1, 0))

    def nested(record, m=m):
      cb = host(record, seen)
      inner = vmap(lambda x, y: jax.pure_callback(cb, sds(()), x, y, vmap_method=m),
                   in_axes=(0, None))
      return vmap(inner, in_axes=(None, 0))

    def several_results(record, m=m):
      def cb(x):
        record(["split", seen(x)])
        x = np.asarray(x)
        return {"twice": x * 2, "ints": (x > 2).astype(np.int32), "sum": x.sum(-1)}
      shapes = {"twice": sds((3,)), "ints": sds((3,), np.int32), "sum": sds(())}
      return vmap(lambda x: jax.pure_callback(cb, shapes, x, vmap_method=m))

    def jit_inside(record, m=m):
      cb = host(record, seen)
      return vmap(jit(lambda x, y: jax.pure_callback(cb, sds(x.shape), x, y,
                                                     vmap_method=m) * 2),
                  in_axes=(0, None))

    def unbatched_only(record, m=m):
      cb = host(record, seen)
      # the callback's operands do not vary over the batch: one call, as without vmap
      return vmap(lambda x, y: jax.pure_callback(cb, sds(y.shape), y, y,
                                                 vmap_method=m) + x, in_axes=(0, None))

    out[f"pure_{m}_mixed"] = (mixed, (_arange(3, 2), np.float32([10, 20])))
    out[f"pure_{m}_axis1_kwarg"] = (axis1_kwarg, (_arange(2, 3), np.float32([1, 2, 3])))
    out[f"pure_{m}_nested"] = (nested, (_arange(3), np.float32([10, 20])))
    out[f"pure_{m}_several_results"] = (several_results, (_arange(2, 3),))
    out[f"pure_{m}_jit_inside"] = (jit_inside, (_arange(3, 2), np.float32([10, 20])))
    out[f"pure_{m}_unbatched_only"] = (unbatched_only, (_arange(3), np.float32([1, 2])))

  def default_method(record):
    cb = host(record, seen)
    return vmap(lambda x: jax.pure_callback(cb, sds(()), x, x))

  def bad_method(record):
    cb = host(record, seen)
    return lambda x: jax.pure_callback(cb, sds(x.shape), x, x, vmap_method="vectorized")

  def expand_dims_per_example_result(record):
    def cb(x):   # ignores the batch axis that expand_dims gives it
      record(["first", seen(x)])
      return np.asarray(x)[0]
    return vmap(lambda x: jax.pure_callback(cb, sds(x.shape), x, vmap_method="expand_dims"))

  def vectorized_is_a_callback_kwarg(record):
    def cb(x, **kwargs):   # JAX 0.10 has no vectorized=: it is passed on to the callback
      record(["kwargs", seen(x), {k: describe(jax, v) for k, v in kwargs.items()}])
      return np.asarray(x)
    return lambda x: jax.pure_callback(cb, sds(x.shape), x, vectorized=True)

  def x64_result_type(record):
    return lambda x: jax.pure_callback(lambda v: v, sds(x.shape, np.float64), x)

  def wrong_dtype(record):
    return lambda x: jax.pure_callback(lambda v: np.asarray(v).astype(np.int32),
                                       sds(x.shape), x)

  def float64_result_is_canonicalized(record):
    return lambda x: jax.pure_callback(lambda v: np.asarray(v, np.float64) / 3,
                                       sds(x.shape), x)

  def wrong_count(record):
    return lambda x: jax.pure_callback(lambda v: (v, v), sds(x.shape), x)

  def grad_of_pure_callback(record):
    return jax.grad(lambda x: jax.pure_callback(np.sin, sds(()), x))

  def jvp_of_pure_callback(record):
    return lambda x: jax.jvp(lambda v: jax.pure_callback(np.sin, sds(()), v), (x,), (x,))

  def vmap_grad_custom_jvp(record):
    @jax.custom_jvp
    def sin(x):
      def cb(v):
        record(["sin", seen(v)])
        return np.sin(np.asarray(v))
      return jax.pure_callback(cb, sds(x.shape), x, vmap_method="sequential")

    @sin.defjvp
    def sin_jvp(primals, tangents):
      (x,), (t,) = primals, tangents
      return sin(x), jnp.cos(x) * t
    return vmap(jax.grad(lambda x: sin(x) * 2))

  x3 = _arange(3)
  out.update({
      "pure_default_method_vmap": (default_method, (x3,)),
      "pure_unknown_vmap_method": (bad_method, (x3,)),
      "pure_expand_dims_per_example_result": (expand_dims_per_example_result, (_arange(4, 2),)),
      "pure_vectorized_is_a_callback_kwarg": (vectorized_is_a_callback_kwarg, (x3,)),
      "pure_x64_result_type": (x64_result_type, (x3,)),
      "pure_wrong_dtype": (wrong_dtype, (x3,)),
      "pure_float64_result_is_canonicalized": (float64_result_is_canonicalized, (x3,)),
      "pure_wrong_count": (wrong_count, (x3,)),
      "pure_grad": (grad_of_pure_callback, (np.float32(0.5),)),
      "pure_jvp": (jvp_of_pure_callback, (np.float32(0.5),)),
      "pure_vmap_grad_custom_jvp": (vmap_grad_custom_jvp, (x3,)),
  })
  return out


def _debug_cases(jax, jnp, jit):
  vmap = jax.vmap
  dprint, dcallback = jax.debug.print, jax.debug.callback

  def printing(fn, **vmap_kwargs):
    return lambda record: vmap(fn, **vmap_kwargs)

  def positional_and_keyword(x, y):
    dprint("x={} y={y} sum={total:.1f}", x, y=y, total=x.sum() + y)
    return x

  def static_and_spec(x):
    dprint("{0}: {1} {tag} {1:.2f} {1!r}", "elem", x, tag="<t>")

  def nested(x):
    dprint("n {}", x)

  def ordered_nested(x):
    dprint("o {} {}", x, x * 10, ordered=True)

  def no_placeholders(x):
    dprint("hello")
    dprint("values:", x, x + 1, skip_format_check=True)

  def two_call_form(x):
    dprint(ordered=True)("two-call {x}", x=x)

  def in_axes_none(x, y):
    dprint("{} with {}", x, y)

  def unbatched_only(x, y):
    dprint("only y={}", y)
    return x + y

  def jit_inside(x, y):
    dprint("jit {} {}", x, y, ordered=True)
    return x * y

  def under_grad(x):
    dprint("primal {}", x)
    return jnp.sin(x) * 2

  def callbacks(record):
    def cb(a, tag, *, b):
      record(["debug", describe(jax, a), tag, describe(jax, b)])
    return vmap(lambda x, y: dcallback(cb, x, "tag", b=y), in_axes=(1, None))

  def callback_nested(record):
    def cb(a, b):
      record(["pair", describe(jax, a), describe(jax, b)])
    inner = vmap(lambda x, y: dcallback(cb, x, y, ordered=True), in_axes=(0, None))
    return vmap(inner, in_axes=(None, 0))

  def callback_two_call_form(record):
    def cb(a):
      record(["two-call", describe(jax, a)])
    return vmap(lambda x: dcallback(ordered=True)(cb, x))

  def format_unused_positional(record):
    return lambda x: dprint("{}", x, 7)

  def format_unused_keyword(record):
    return lambda x: dprint("{x}", x=x, y=x)

  xy = (_arange(2, 3), np.float32([1, 2]))
  return {
      "print_positional_and_keyword": (printing(positional_and_keyword),
                                       (_arange(3, 2), _arange(3))),
      "print_static_and_spec": (printing(static_and_spec), (np.float32([0.25, 1.5, -2]),)),
      "print_nested": (printing(vmap(nested)), (_arange(2, 3, dtype=np.int32),)),
      "print_ordered_nested": (printing(vmap(ordered_nested), in_axes=1),
                               (_arange(2, 3, dtype=np.int32),)),
      "print_no_placeholders": (printing(no_placeholders), (np.int32([4, 5]),)),
      "print_two_call_form": (printing(two_call_form), (np.int32([7, 8, 9]),)),
      "print_in_axes_none": (printing(in_axes_none, in_axes=(0, None)),
                             (np.int32([1, 2, 3]), np.float32([0.5, 1.5]))),
      "print_unbatched_only": (printing(unbatched_only, in_axes=(0, None)),
                               (_arange(3), np.float32(2))),
      "print_jit_inside": (lambda record: vmap(jit(jit_inside), in_axes=(1, None)), xy),
      "print_under_grad": (printing(jax.grad(under_grad)), (np.float32([0.5, 1, 2]),)),
      "callback_kwarg_and_static": (callbacks, xy),
      "callback_nested": (callback_nested, (np.int32([1, 2, 3]), np.int32([10, 20]))),
      "callback_two_call_form": (callback_two_call_form, (np.int32([3, 4]),)),
      "print_unused_positional": (format_unused_positional, (np.int32(1),)),
      "print_unused_keyword": (format_unused_keyword, (np.int32(1),)),
  }


def _io_cases(jax, io_callback):
  vmap = jax.vmap

  def logged(record):
    def cb(x, y):
      record(["io", describe(jax, x), describe(jax, y)])
      return np.asarray(x) * np.asarray(y)
    return cb

  def unordered(record):
    cb = logged(record)
    return vmap(lambda x, y: io_callback(cb, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y),
                in_axes=(1, None))

  def ordered(record):
    cb = logged(record)
    return vmap(lambda x, y: io_callback(cb, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y,
                                         ordered=True), in_axes=(1, None))

  def results_unused(record):
    cb = logged(record)
    return lambda x: (io_callback(cb, jax.ShapeDtypeStruct(x.shape, x.dtype), x, x), x)[1]

  def grad_of_io_callback(record):
    return jax.grad(lambda x: io_callback(lambda v: v, jax.ShapeDtypeStruct((), x.dtype), x))

  return {
      "io_unordered": (unordered, (_arange(2, 3), np.float32(2))),
      "io_ordered": (ordered, (_arange(2, 3), np.float32(2))),
      "io_results_unused": (results_unused, (_arange(2),)),
      "io_grad": (grad_of_io_callback, (np.float32(1),)),
  }


def cases(jax, jnp, io_callback, jit):
  return {**_pure_cases(jax, jnp, jit), **_debug_cases(jax, jnp, jit),
          **_io_cases(jax, io_callback)}
