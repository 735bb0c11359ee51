"""Core: jaxpr tracing and printing, tracers and their errors, eval_jaxpr, eval_shape."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.core import core


def log2(x):
  return jnp.log(x) / jnp.log(2.0)


# Expected texts recorded from JAX 0.10.2's make_jaxpr.
LOG2_JAXPR = """{ lambda ; a:f32[]. let
    b:f32[] = log a
    c:f32[] = log 2.0:f32[]
    d:f32[] = div b c
  in (d,) }"""

TUTORIAL_F_JAXPR = """{ lambda ; a:f32[4]. let
    b:f32[4] = tanh a
    c:f32[4] = sin a
    d:f32[4] = mul b c
    e:f32[4] = mul a a
    f:f32[4] = log1p e
    g:f32[4] = add d f
  in (g,) }"""

CONSTVAR_JAXPR = """{ lambda a:f32[3]; b:f32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[3] = add c a
  in (d,) }"""

DOT_JAXPR = """{ lambda ; a:f32[2,3]. let
    b:f32[3,2] = transpose[permutation=(1, 0)] a
    c:f32[2,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
    d:i32[2,2] = convert_element_type[new_dtype=int32 weak_type=False] c
    e:i32[4] = reshape[dimensions=None new_sizes=(4,) sharding=None] d
  in (e,) }"""

LITERALS_JAXPR = """{ lambda ; a:f32[3]. let
    b:f32[3] = mul a 0.009999999776482582:f32[]
    c:f32[3] = mul a 1.0000000116860974e-07:f32[]
    d:f32[3] = add a nan:f32[]
    e:f32[3] = add a inf:f32[]
    f:f32[3] = mul a -2.0:f32[]
    g:f32[3] = mul a 100000.0:f32[]
  in (b, c, d, e, f, g) }"""

REDUCTIONS_JAXPR = """{ lambda ; a:f32[2,3]. let
    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a
    c:f32[2] = reduce_max[axes=(1,)] a
    d:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a
    e:i32[] = argmax[axes=(0,) index_dtype=int32] d
    f:f32[4,3] = concatenate[dimension=0] a a
    g:f32[2,3] = broadcast_in_dim 0.0:f32[]
    h:i32[4] = iota[dimension=0 dtype=int32 shape=(4,) sharding=None] 
    i:f32[2,3] = integer_pow[y=3] a
    j:f32[2,3] = max a 0.0:f32[]
    k:f32[] = reduce_min[axes=(0, 1)] a
    l:f32[] = reduce_prod[axes=(0, 1)] a
  in (b, c, e, f, g, h, i, j, k, l) }"""


def test_make_jaxpr_of_tutorial_log2_matches_jax_text():
  assert str(jax.make_jaxpr(log2)(3.0)) == LOG2_JAXPR


def test_make_jaxpr_of_tutorial_f_matches_jax_text():
  f = lambda x: jnp.tanh(x) * jnp.sin(x) + jnp.log1p(x * x)
  assert str(jax.make_jaxpr(f)(jnp.arange(4, dtype=jnp.float32))) == TUTORIAL_F_JAXPR


def test_closed_over_array_becomes_constvar():
  c = np.ones(3, np.float32)
  assert str(jax.make_jaxpr(lambda x: x + c * 2)(1.0)) == CONSTVAR_JAXPR


def test_long_params_print_on_several_lines_like_jax():
  f = lambda x: jnp.dot(x, x.T).astype(jnp.int32).reshape(-1)
  assert str(jax.make_jaxpr(f)(jnp.ones((2, 3)))) == DOT_JAXPR


def test_float_literals_print_as_float32_values():
  f = lambda x: (x * 0.01, x * 1e-7, x + jnp.nan, x + jnp.inf, x * (-2.0), x * 1e5)
  assert str(jax.make_jaxpr(f)(jnp.ones(3))) == LITERALS_JAXPR


def test_reduction_and_shape_params_print_like_jax():
  f = lambda x: (jnp.sum(x), jnp.max(x, axis=1), jnp.argmax(x), jnp.concatenate([x, x]),
                 jnp.zeros_like(x), lax.iota(jnp.int32, 4), x ** 3, jnp.maximum(x, 0.),
                 jnp.min(x), jnp.prod(x))
  assert str(jax.make_jaxpr(f)(jnp.ones((2, 3)))) == REDUCTIONS_JAXPR


def test_variable_names_continue_past_z():
  def f(x):
    for _ in range(30):
      x = jnp.sin(x)
    return x
  text = str(jax.make_jaxpr(f)(1.0))
  assert "    ba:f32[] = sin z\n" in text and text.endswith("in (be,) }")


def test_one_equation_jaxpr_prints_on_one_line():
  assert str(jax.make_jaxpr(lambda x: x * jnp.array(3))(1.0)) == (
      "{ lambda ; a:f32[]. let b:f32[] = mul a 3.0:f32[] in (b,) }")
  assert str(jax.make_jaxpr(lambda x: x)(1.0)) == "{ lambda ; a:f32[]. let  in (a,) }"
  assert str(jax.make_jaxpr(lambda x: 1.0)(1.0)) == (
      "{ lambda ; a:f32[]. let  in (1.0:f32[],) }")


def test_pytree_inputs_and_outputs_flatten_in_order():
  closed = jax.make_jaxpr(lambda x, y: [x["a"] * y, {"b": y}])({"a": 1.0}, y=2.0)
  assert str(closed) == ("{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b in (c, b) }")


def test_python_side_effect_runs_during_tracing_only():
  seen = []

  def f(x):
    seen.append(x)
    return x * 2
  closed = jax.make_jaxpr(f)(3.0)
  assert len(seen) == 1 and "append" not in str(closed)
  assert len(closed.eqns) == 1


def test_static_argnums_and_return_shape():
  closed, shape = jax.make_jaxpr(lambda x, n: x * n, static_argnums=1,
                                 return_shape=True)(1.0, 3)
  assert str(closed) == "{ lambda ; a:f32[]. let b:f32[] = mul a 3.0:f32[] in (b,) }"
  assert repr(shape) == "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"


def test_eval_jaxpr_reproduces_the_function():
  f = lambda x, y: jnp.sum(jnp.tanh(x) * y, axis=0) + jnp.max(y)
  x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
  y = np.arange(6, dtype=np.float32).reshape(2, 3)
  closed = jax.make_jaxpr(f)(x, y)
  out, = core.eval_jaxpr(closed.jaxpr, closed.consts, jnp.asarray(x), jnp.asarray(y))
  np.testing.assert_allclose(out, np.sum(np.tanh(x) * y, axis=0) + y.max(), rtol=1e-6)
  np.testing.assert_allclose(closed(x, y)[0], out)


def test_eval_shape_returns_shape_dtype_structs():
  out = jax.eval_shape(lambda x: {"a": x.sum(), "b": x.astype(jnp.int8)}, jnp.ones((2, 3)))
  assert out == {"a": jax.ShapeDtypeStruct((), jnp.float32),
                 "b": jax.ShapeDtypeStruct((2, 3), jnp.int8)}
  spec = jax.ShapeDtypeStruct((4,), jnp.float32)
  assert jax.eval_shape(jnp.sin, spec).shape == (4,)


def test_shaped_array_prints_like_jax():
  a = core.ShapedArray((3,), np.float32, weak_type=True)
  assert (repr(a), str(a), a.str_short(), a.str_short(True)) == (
      "ShapedArray(float32[3], weak_type=True)", "~float32[3]", "float32[3]", "f32[3]")
  assert repr(core.ShapedArray((2, 3), np.int32)) == "ShapedArray(int32[2,3])"


def test_tracer_repr_names_shape_dtype_and_weak_type():
  shown = []
  jax.make_jaxpr(lambda x, y: shown.append((repr(x), str(y))))(1.0, jnp.ones(3))
  assert shown == [("JitTracer(~float32[])", "JitTracer(float32[3])")]


def test_jaxpr_objects_expose_their_parts():
  closed = jax.make_jaxpr(lambda x: x * 2)(1.0)
  assert closed.in_avals == [core.ShapedArray((), np.float32, True)]
  assert closed.out_avals == closed.in_avals and closed.consts == []
  eqn = closed.jaxpr.eqns[0]
  assert eqn.primitive is lax.mul_p and isinstance(eqn.invars[1], core.Literal)
  assert str(eqn) == "a:f32[] = mul b 2.0:f32[]"


# -- tracer errors


def test_if_on_traced_value_raises_bool_conversion_error_naming_the_argument():
  def relu_bad(x):
    if x > 0:
      return x
    return 0.0
  with pytest.raises(jax.errors.TracerBoolConversionError) as info:
    jax.make_jaxpr(relu_bad)(1.0)
  message = str(info.value)
  assert message.startswith("Attempted boolean conversion of traced array with shape bool[].")
  assert "relu_bad" in message and "the argument x" in message
  assert "jnp.where" in message and "lax.cond" in message
  assert isinstance(info.value, jax.errors.ConcretizationTypeError)
  assert isinstance(info.value, TypeError)


def test_int_float_of_tracer_raise_concretization_error():
  for convert in (int, float):
    with pytest.raises(jax.errors.ConcretizationTypeError, match="x.astype"):
      jax.make_jaxpr(lambda x: convert(x))(1.0)


def test_index_of_tracer_raises_integer_conversion_error():
  with pytest.raises(jax.errors.TracerIntegerConversionError, match="__index__"):
    jax.make_jaxpr(lambda i: [1, 2, 3][i])(1)


def test_numpy_on_tracer_raises_array_conversion_error():
  with pytest.raises(jax.errors.TracerArrayConversionError, match="jax.numpy equivalent"):
    jax.make_jaxpr(lambda x: np.sin(x))(1.0)


def test_error_names_only_the_arguments_the_value_depends_on():
  def f(x, y):
    return 1 if y > 0 else 2
  with pytest.raises(jax.errors.TracerBoolConversionError) as info:
    jax.make_jaxpr(f)(1.0, 2.0)
  assert "the argument y" in str(info.value) and "argument x" not in str(info.value)


def test_leaked_tracer_used_later_raises_unexpected_tracer_error():
  leaked = []

  def f(x):
    leaked.append(x)
    return x
  jax.make_jaxpr(f)(1.0)
  with pytest.raises(jax.errors.UnexpectedTracerError, match="escape the scope"):
    jnp.sin(leaked[0])
  with pytest.raises(jax.errors.UnexpectedTracerError):
    jax.make_jaxpr(lambda y: y + leaked[0])(1.0)


def test_returning_a_non_array_is_a_clear_error():
  with pytest.raises(TypeError, match="not a valid JAX type"):
    jax.make_jaxpr(lambda x: "a")(1.0)


def test_closing_over_an_outer_tracer_lifts_it_to_a_constvar():
  def outer(x):
    inner = jax.make_jaxpr(lambda y: y * x)(1.0)
    assert len(inner.jaxpr.constvars) == 1 and inner.consts[0] is x
    return x
  jax.make_jaxpr(outer)(2.0)


def test_lax_ops_reject_mixed_dtypes_and_ranks_with_jax_messages():
  with pytest.raises(TypeError, match=r"lax.add requires arguments to have the same dtypes, "
                     r"got float32, int32"):
    lax.add(jnp.ones(3), jnp.ones(3, jnp.int32))
  with pytest.raises(TypeError, match="sin does not accept dtype int32"):
    lax.sin(jnp.ones(3, jnp.int32))
  with pytest.raises(TypeError, match=r"add: arrays must have the same number of dimensions"):
    lax.add(jnp.ones(3), jnp.ones((2, 3)))
  with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: "
                     r"\(3,\), \(4,\)"):
    jnp.ones(3) + jnp.ones(4)
  with pytest.raises(ValueError, match="out-of-bounds"):
    lax.reduce_sum(jnp.ones(3), (1,))


def test_shaped_array_takes_back_its_own_sharding():
  """JAX's ``ShapedArray(shape, dtype, sharding=...)``: flax's scan passes an aval's own
  ``sharding`` back; its split over Explicit axes enters the type, Auto axes do not (as
  JAX 0.10.2 prints them: float32[2] and float32[2@x])."""
  from jaxlite import core as public_core
  aval = public_core.ShapedArray((2,), jnp.float32, sharding=None)
  assert public_core.ShapedArray((2,), jnp.float32, sharding=aval.sharding) == aval
  auto = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
  split = public_core.ShapedArray((2,), jnp.float32,
                                  sharding=jax.sharding.NamedSharding(auto.abstract_mesh, jax.P("x")))
  assert split == aval and str(split) == "float32[2]"
  explicit = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
  split = public_core.ShapedArray((2,), jnp.float32,
                                  sharding=jax.sharding.NamedSharding(explicit.abstract_mesh, jax.P("x")))
  assert split != aval and str(split) == "float32[2@x]" and split.spec == ("x",)
  assert split.sharding.spec == jax.P("x") and split.sharding.mesh == explicit.abstract_mesh


def test_primitives_without_a_sharding_rule_follow_jax():
  """Given a split operand, one of jaxlite's own operations without a sharding rule raises
  JAX's error (JAX 0.10.2's call_sharding_rule); a library's primitive, and a call or loop,
  is typed by its shape rule (its jaxprs), as JAX types it by its abstract eval. Every
  primitive of jaxlite's other modules has a rule."""
  from jaxlite._src.base.errors import ShardingTypeError
  from jaxlite._src.core import core
  explicit = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
  split = core.ShapedArray((2,), np.float32, spec=("x",), mesh=explicit.abstract_mesh)
  own = core.Primitive("no_rule_here")
  own._module = "jaxlite._src.lax.example"   # (as if lax defined it)
  library = core.Primitive("a_library_op")
  for prim in (own, library):
    prim.def_abstract_eval(lambda x: core.ShapedArray(x.shape, x.dtype))
  with pytest.raises(ShardingTypeError) as info:
    core.abstract_eval(own, [split], {})
  assert str(info.value) == (
      "sharding rule for no_rule_here is not implemented. Please file an issue at "
      "https://github.com/jax-ml/jax/issues. You can work around this error by dropping "
      "that operation into full auto sharding mode via: "
      "`jax.sharding.auto_axes(fun, out_shardings=...)`")
  assert str(core.abstract_eval(library, [split], {})[0]) == "float32[2]"
  import jaxlite.scipy.special, jaxlite.numpy.linalg  # noqa: F401,E401 (their primitives)
  typed_by_jaxprs = {"call", "control_flow", "custom_derivatives", "custom_batching"}
  missing = sorted(p.name for p in core.abstract_eval_rules   # (own: made above)
                   if p._module.startswith("jaxlite.") and p not in core.sharding_rules
                   and p is not own and p._module.rsplit(".", 1)[-1] not in typed_by_jaxprs)
  assert missing == []
