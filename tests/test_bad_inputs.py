"""A catalogue of bad inputs: each one raises JAX's exception class with a message that
says what happened (checked by a regex on the key phrase), or, where JAX does not raise,
gives JAX's answer (dropped out-of-bounds updates, IEEE NaN / inf, empty reductions).

The expected classes and key phrases were taken from JAX 0.10.2. A case where jaxlite
differs from JAX is marked ``xfail(strict=True)`` with the reproduction in its reason, so
the gap stays visible and the suite fails once it is fixed (then drop the mark).
"""
import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite import errors
from jaxlite._src import backends
from jaxlite._src import tiers

needs_xla = pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin installed")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bug(reason):
  """A known difference from JAX: the case must fail until the library is fixed."""
  return pytest.mark.xfail(strict=True, reason=reason)


# -- helpers the cases call: Python control flow and side effects inside transformations

def _if(x):
  if x > 0:
    return x
  return -x


def _while(x):
  while x < 10:
    x = x + 1
  return x


_LEAKED = []


def _leak_global():
  @jax.jit
  def f(x):
    global _LEAKED
    _LEAKED = x
    return x
  f(1.0)
  return _LEAKED + 1


def _leak_closure():
  store = []

  def f(x):
    store.append(x)
    return x
  jax.jit(f)(1.0)
  return jnp.sin(store[0])


def _leak_class_attribute():
  class Model:
    cache = None

  def f(x):
    Model.cache = x * 2
    return x
  jax.jit(f)(1.0)
  return Model.cache * 3


def _leak_from(transform, arg):
  store = []

  def f(x):
    store.append(x)
    return x * 2
  transform(f)(arg)
  return store[0] + 1


def _leak_into_later_jit():
  store = []

  def f(x):
    store.append(x)
    return x
  jax.jit(f)(1.0)
  return jax.jit(lambda y: y + store[0])(2.0)


def _custom_vjp_bad_bwd():
  @jax.custom_vjp
  def f(x):
    return x * 2
  f.defvjp(lambda x: (x * 2, None), lambda res, g: (g, g))
  return jax.grad(f)(1.0)


def _custom_jvp_bad_tangent():
  @jax.custom_jvp
  def f(x):
    return x * 2
  f.defjvp(lambda p, t: (p[0] * 2, jnp.stack([t[0], t[0]])))
  return jax.jvp(f, (1.0,), (1.0,))


def _compiled(shape):
  return jax.jit(lambda x: x + 1).lower(jnp.ones(shape)).compile()


_AXIS_ERROR = ("jaxlite raises ValueError; JAX raises IndexError here. NumPy's AxisError "
               "(a ValueError and an IndexError) would satisfy both: ")
_BROADCAST_RANK = ("jaxlite raises TypeError; JAX raises ValueError('Incompatible shapes for "
                   "broadcasting: shapes=[...]') when the ranks differ (same-rank mismatches "
                   "are TypeError in both): ")

# id, callable, JAX's exception class, regex on the message (re.search with re.S)
CASES = [
    # -- mismatched shapes
    pytest.param("add_different_ranks", lambda: jnp.ones((2, 3)) + jnp.ones((4,)),
                 ValueError, r"Incompatible shapes for broadcasting.*\(2, 3\).*\(4,\)"),
    ("add_same_rank", lambda: jnp.add(jnp.ones((2, 3)), jnp.ones((2, 4))),
     TypeError, r"add got incompatible shapes for broadcasting: \(2, 3\), \(2, 4\)"),
    ("multiply_same_rank", lambda: jnp.multiply(jnp.ones((2, 3)), jnp.ones((2, 4))),
     TypeError, r"incompatible shapes for broadcasting: \(2, 3\), \(2, 4\)"),
    pytest.param("where_shapes",
                 lambda: jnp.where(jnp.ones((2,), bool), jnp.ones((3,)), jnp.ones(2)),
                 ValueError, r"Incompatible shapes for broadcasting"),
    pytest.param("broadcast_shapes", lambda: jnp.broadcast_shapes((2, 3), (4,)),
                 ValueError, r"Incompatible shapes for broadcasting"),
    ("lax_add_ranks", lambda: lax.add(jnp.ones((2, 3)), jnp.ones((3,))),
     TypeError, r"add: arrays must have the same number of dimensions"),
    ("lax_add_dtypes", lambda: lax.add(jnp.ones(3, jnp.float32), jnp.ones(3, jnp.int32)),
     TypeError, r"requires arguments to have the same dtypes, got float32, int32.*jnp.add"),
    ("dot_vector", lambda: jnp.dot(jnp.ones((2, 3)), jnp.ones((4,))),
     TypeError, r"dot_general requires contracting dimensions to have the same shape"),
    ("dot_matrix", lambda: jnp.dot(jnp.ones((2, 3)), jnp.ones((4, 5))),
     TypeError, r"dot_general requires contracting dimensions to have the same shape"),
    pytest.param("matmul_shapes", lambda: jnp.matmul(jnp.ones((2, 3)), jnp.ones((4, 5))),
                 TypeError, r"contracting dimensions|mismatch in its core dimension"),
    pytest.param("matmul_operator", lambda: jnp.ones((2, 3)) @ jnp.ones((2, 3)),
                 TypeError, r"contracting dimensions|mismatch in its core dimension"),
    pytest.param("matmul_batch_shapes",
                 lambda: jnp.matmul(jnp.ones((2, 3, 4)), jnp.ones((5, 4, 3))),
                 ValueError, r"Incompatible.*matmul|broadcasting"),
    ("matmul_scalar", lambda: jnp.matmul(jnp.float32(2.0), jnp.ones((2, 2))),
     ValueError, r"matmul.*(ndim|enough dimensions)"),
    pytest.param("eval_shape_matmul",
                 lambda: jax.eval_shape(lambda x: x @ x,
                                        jax.ShapeDtypeStruct((2, 3), jnp.float32)),
                 TypeError, r"contracting dimensions|core dimension"),
    ("einsum_shapes", lambda: jnp.einsum("ij,jk->ik", jnp.ones((2, 3)), jnp.ones((4, 5))),
     ValueError, r"'j'.*(does not match|differs)"),
    ("einsum_output_label", lambda: jnp.einsum("ij,jk->iq", jnp.ones((2, 3)), jnp.ones((3, 5))),
     ValueError, r"(?i)output.*'q'.*(did not|does not) appear"),
    ("concatenate_shapes",
     lambda: jnp.concatenate([jnp.ones((2, 3)), jnp.ones((2, 4))], axis=0),
     TypeError, r"Cannot concatenate arrays with shapes that differ in dimensions other than"),
    pytest.param("concatenate_ranks",
                 lambda: jnp.concatenate([jnp.ones((2, 3)), jnp.ones((3,))]),
                 TypeError, r"(different numbers|same number) of dimensions"),
    ("concatenate_empty_list", lambda: jnp.concatenate([]),
     ValueError, r"Need at least one array to concatenate"),
    ("concatenate_scalars", lambda: jnp.concatenate([jnp.float32(1), jnp.float32(2)]),
     ValueError, r"Zero-dimensional arrays cannot be concatenated"),
    ("stack_shapes", lambda: jnp.stack([jnp.ones(2), jnp.ones(3)]),
     ValueError, r"All input arrays must have the same shape"),
    ("reshape_size", lambda: jnp.ones(6).reshape(4, 2),
     TypeError, r"cannot reshape array of shape \(6,\) \(size 6\) into shape \(4, 2\)"),
    pytest.param("reshape_two_unknowns", lambda: jnp.ones(6).reshape(-1, -1),
                 TypeError, r"can only specify one unknown"),
    ("reshape_indivisible", lambda: jnp.ones(7).reshape(-1, 2),
     TypeError, r"cannot reshape array of shape \(7,\)"),
    ("lax_reshape_size", lambda: lax.reshape(jnp.ones(6), (4,)),
     # JAX fails later, in its MLIR verifier; jaxlite's earlier TypeError is the better one
     TypeError, r"reshape total size must be unchanged"),
    pytest.param("broadcast_to_incompatible", lambda: jnp.broadcast_to(jnp.ones(3), (2, 4)),
                 ValueError, r"Incompatible (types|shapes) for broadcasting"),
    pytest.param("full_fill_shape", lambda: jnp.full((2,), jnp.ones(3)),
                 ValueError, r"Incompatible (types|shapes) for broadcasting"),
    ("broadcast_to_lower_rank", lambda: jnp.broadcast_to(jnp.ones((2, 3)), (3,)),
     ValueError, r"(fewer dimensions|Incompatible shapes for broadcasting)"),
    ("split_unequal", lambda: jnp.split(jnp.ones(5), 2),
     ValueError, r"array split does not result in an equal division"),
    ("lax_slice_out_of_range", lambda: lax.slice(jnp.ones(3), (0,), (5,)),
     TypeError, r"slice.*operand shape \(3,\)"),
    ("dynamic_slice_sizes", lambda: lax.dynamic_slice(jnp.ones(3), (0,), (5,)),
     TypeError, r"slice_sizes.*operand shape \(3,\)"),
    ("dynamic_update_slice_rank",
     lambda: lax.dynamic_update_slice(jnp.ones(3), jnp.ones((1, 1)), (0,)),
     TypeError, r"dynamic_update_slice update"),
    ("inv_not_square", lambda: jnp.linalg.inv(jnp.ones((2, 3))),
     ValueError, r"Argument to inv\(?\)? must have shape \[\.\.\., n, n\], got \(2, 3\)"),
    ("solve_shapes", lambda: jnp.linalg.solve(jnp.eye(3), jnp.ones(4)),
     ValueError, r"(core dimension|mismatch)"),
    # -- axes out of range
    ("sum_axis", lambda: jnp.sum(jnp.ones((2, 3)), axis=2),
     ValueError, r"axis 2 is out of bounds for array of dimension 2"),
    ("sum_negative_axis", lambda: jnp.sum(jnp.ones((2, 3)), axis=-3),
     ValueError, r"axis -3 is out of bounds for array of dimension 2"),
    ("sum_repeated_axis", lambda: jnp.sum(jnp.ones((2, 3)), axis=(0, 0)),
     ValueError, r"(duplicate value in 'axis'|repeated axis)"),
    pytest.param("mean_axis", lambda: jnp.mean(jnp.ones((2, 3)), axis=5), IndexError, r"."),
    pytest.param("argmax_axis", lambda: jnp.argmax(jnp.ones((2, 3)), axis=2), IndexError, r"."),
    pytest.param("argmin_axis", lambda: jnp.argmin(jnp.ones((2, 3)), axis=-3), IndexError,
                 r"."),
    pytest.param("swapaxes_axis", lambda: jnp.swapaxes(jnp.ones((2, 3)), 0, 3), IndexError,
                 r"."),
    ("cumsum_axis", lambda: jnp.cumsum(jnp.ones((2, 3)), axis=2),
     ValueError, r"axis 2 is out of bounds for array of dimension 2"),
    ("expand_dims_axis", lambda: jnp.expand_dims(jnp.ones((2, 3)), 4),
     ValueError, r"axis 4 is out of bounds for array of dimension 3"),
    ("squeeze_size_not_one", lambda: jnp.squeeze(jnp.ones((2, 3)), axis=0),
     ValueError, r"cannot select an axis to squeeze out which has size not equal to one"),
    ("squeeze_axis", lambda: jnp.squeeze(jnp.ones((1, 3)), axis=2),
     ValueError, r"axis 2 is out of bounds for array of dimension 2"),
    ("moveaxis_axis", lambda: jnp.moveaxis(jnp.ones((2, 3)), 0, 2),
     ValueError, r"axis 2 is out of bounds for array of dimension 2"),
    ("take_axis", lambda: jnp.take(jnp.ones((2, 3)), jnp.array([0]), axis=2),
     ValueError, r"axis 2 is out of bounds for array of dimension 2"),
    pytest.param("transpose_not_a_permutation",
                 lambda: jnp.transpose(jnp.ones((2, 3)), (0, 0)),
                 TypeError, r"permutation|don't match"),
    ("transpose_axis", lambda: jnp.transpose(jnp.ones((2, 3)), (1, 0, 2)),
     ValueError, r"axis 2 is out of bounds for array of dimension 2"),
    ("concatenate_axis", lambda: jnp.concatenate([jnp.ones(2), jnp.ones(2)], axis=1),
     ValueError, r"axis 1 is out of bounds for array of dimension 1"),
    ("sort_axis", lambda: jnp.sort(jnp.ones((2, 3)), axis=2),
     ValueError, r"axis 2 is out of bounds for array of dimension 2"),
    ("softmax_axis", lambda: jax.nn.softmax(jnp.ones((2, 3)), axis=3),
     ValueError, r"axis 3 is out of bounds for array of dimension 2"),
    ("vmap_out_axes", lambda: jax.vmap(lambda a: a, out_axes=3)(jnp.ones(3)),
     ValueError, r"axis 3 is out of bounds for array of dimension 1"),
    # -- unsupported dtypes and values
    ("object_array", lambda: jnp.array(np.array([object(), object()])),
     TypeError, r"(not a valid JAX (array )?type|Error interpreting argument)"),
    ("object_dtype", lambda: jnp.zeros(3, dtype=object),
     TypeError, r"JAX only supports number, bool, and string dtypes, got dtype <class "
                r"'object'> in zeros"),
    ("string_list", lambda: jnp.array(["a", "b"]),
     TypeError, r"with dtype <U1 is not a valid JAX array type"),
    ("string_scalar", lambda: jnp.asarray("hello"),
     TypeError, r"Value 'hello' with dtype <U5 is not a valid JAX array type"),
    ("string_numpy_array", lambda: jnp.sin(np.array(["a", "b"])),
     TypeError, r"(not a valid JAX array type|Error interpreting argument)"),
    ("string_operand", lambda: jnp.add(jnp.ones(2), "x"),
     TypeError, r"(<class 'str'>)"),
    ("mixed_list", lambda: jnp.array([1, "a"]), TypeError, r"is not a valid JAX array type"),
    pytest.param("none_array", lambda: jnp.array(None),
                 ValueError, r"None is not a valid value for jnp.array"),
    ("astype_string", lambda: jnp.ones(3).astype("U"),
     TypeError, r"JAX only supports number, bool, and string dtypes, got dtype U in astype"),
    ("dtype_not_understood", lambda: jnp.ones(3, dtype="floaty"),
     TypeError, r"data type 'floaty' not understood"),
    ("bitwise_on_floats", lambda: jnp.bitwise_and(jnp.ones(2), jnp.ones(2)),
     TypeError, r"and does not accept dtype float32"),
    ("lax_bitwise_on_floats", lambda: lax.bitwise_and(jnp.ones(2), jnp.ones(2)),
     TypeError, r"and does not accept dtype float32"),
    ("jit_string_argument", lambda: jax.jit(lambda x: x)("abc"),
     TypeError, r"Error interpreting argument to .* as an abstract array.*static_argnums"),
    ("jit_object_argument", lambda: jax.jit(lambda x: x)(object()),
     TypeError, r"Error interpreting argument to .* as an abstract array"),
    ("grad_string_argument", lambda: jax.grad(lambda x: x)("a"),
     TypeError, r"'a'.* is not a valid JAX type"),
    ("float_in_shape", lambda: jnp.ones((2, 2.5)),
     TypeError, r"(?i)shapes? must be .*(sequences|sequence) of .*(concrete|static)"),
    pytest.param("negative_dimension", lambda: jnp.ones((2, -1)),
                 TypeError, r"(nonnegative|negative dimensions)"),
    ("array_hash", lambda: hash(jnp.ones(3)), TypeError, r"unhashable type"),
    # -- Python control flow on traced values
    ("jit_if", lambda: jax.jit(_if)(1.0), errors.TracerBoolConversionError,
     r"Attempted boolean conversion of traced array with shape bool\[\]"),
    ("jit_while", lambda: jax.jit(_while)(1.0), errors.TracerBoolConversionError,
     r"Attempted boolean conversion.*\n.*argument x"),
    ("jit_bool", lambda: jax.jit(lambda x: bool(x))(1.0), errors.TracerBoolConversionError,
     r"Attempted boolean conversion of traced array"),
    ("jit_and", lambda: jax.jit(lambda x: (x > 0) and x)(1.0),
     errors.TracerBoolConversionError, r"Attempted boolean conversion"),
    ("vmap_if", lambda: jax.vmap(_if)(jnp.ones(3)), errors.TracerBoolConversionError,
     r"Attempted boolean conversion of traced array"),
    ("jit_int", lambda: jax.jit(lambda x: int(x))(1.0), errors.ConcretizationTypeError,
     r"concrete value is expected.*\n.*`int` function.*x.astype\(int\)"),
    ("jit_float", lambda: jax.jit(lambda x: float(x))(1.0), errors.ConcretizationTypeError,
     r"concrete value is expected.*\n.*`float` function"),
    ("jit_item", lambda: jax.jit(lambda x: x.item())(1.0), errors.ConcretizationTypeError,
     r"Abstract tracer value encountered where concrete value is expected"),
    pytest.param("jit_tolist", lambda: jax.jit(lambda x: x.tolist())(jnp.ones(3)),
                 errors.ConcretizationTypeError, r"tolist"),
    ("jit_list_index", lambda: jax.jit(lambda i: [1, 2, 3][i])(1),
     errors.TracerIntegerConversionError, r"The __index__\(\) method was called on traced array"),
    ("jit_range", lambda: jax.jit(lambda n: sum(range(n)))(3),
     errors.TracerIntegerConversionError, r"__index__\(\).*\n.*argument n"),
    ("jit_len_of_scalar", lambda: jax.jit(lambda x: len(x))(1.0),
     TypeError, r"len\(\) of unsized object"),
    ("jit_np_asarray", lambda: jax.jit(lambda x: np.asarray(x))(1.0),
     errors.TracerArrayConversionError, r"__array__\(\) was called on traced array"),
    ("jit_numpy_function", lambda: jax.jit(lambda x: np.sin(x))(jnp.ones(2)),
     errors.TracerArrayConversionError, r"__array__\(\) was called on traced array"),
    ("jit_hash", lambda: jax.jit(lambda x: hash(x))(jnp.ones(3)),
     TypeError, r"unhashable type"),
    ("jit_shape_from_tracer", lambda: jax.jit(lambda n: jnp.zeros(n))(3),
     TypeError, r"(?i)shapes? must be .*(concrete|static)"),
    pytest.param("jit_reshape_to_tracer", lambda: jax.jit(lambda x, n: x.reshape(n))(jnp.ones(4), 4),
                 TypeError, r"(?i)shapes? must be .*(concrete|static)",
                 marks=bug("uninformative message 'iteration over a 0-d array': "
                           "jax.jit(lambda x, n: x.reshape(n))(jnp.ones(4), 4)")),
    ("jit_arange_tracer", lambda: jax.jit(lambda n: jnp.arange(n))(3),
     errors.ConcretizationTypeError, r"concrete value is expected.*\n.*jnp.arange"),
    ("jit_one_hot_classes", lambda: jax.jit(lambda n: jax.nn.one_hot(jnp.arange(3), n))(3),
     errors.ConcretizationTypeError, r"concrete value is expected"),
    ("jit_boolean_mask", lambda: jax.jit(lambda x: x[x > 0])(jnp.ones(3)),
     errors.NonConcreteBooleanIndexError, r"Array boolean indices must be concrete; got bool\[3\]"),
    ("jit_nonzero", lambda: jax.jit(jnp.nonzero)(jnp.ones(3)),
     errors.ConcretizationTypeError, r"size argument of jnp.nonzero must be statically"),
    # -- tracers leaked and used after their trace
    ("leak_global", _leak_global, errors.UnexpectedTracerError,
     r"Encountered an unexpected tracer.*\n.*saving intermediate values to global state"),
    ("leak_closure", _leak_closure, errors.UnexpectedTracerError,
     r"Encountered an unexpected tracer"),
    ("leak_class_attribute", _leak_class_attribute, errors.UnexpectedTracerError,
     r"Encountered an unexpected tracer"),
    ("leak_from_grad", lambda: _leak_from(jax.grad, 1.0), errors.UnexpectedTracerError,
     r"Encountered an unexpected tracer"),
    ("leak_from_vmap", lambda: _leak_from(jax.vmap, jnp.ones(3)), errors.UnexpectedTracerError,
     r"wrapped in a BatchTracer"),
    ("leak_into_another_jit", _leak_into_later_jit, errors.UnexpectedTracerError,
     r"Encountered an unexpected tracer"),
    # -- jit arguments
    ("static_list", lambda: jax.jit(lambda x, n: x, static_argnums=1)(1.0, [1, 2]),
     ValueError, r"Non-hashable static arguments are not supported.*<class 'list'>"),
    ("static_dict", lambda: jax.jit(lambda x, n: x, static_argnames="n")(1.0, n={"a": 1}),
     ValueError, r"Non-hashable static arguments are not supported.*<class 'dict'>"),
    ("static_array", lambda: jax.jit(lambda x, n: x, static_argnums=1)(1.0, jnp.ones(2)),
     ValueError, r"Non-hashable static arguments are not supported"),
    pytest.param("static_argnums_out_of_range",
                 lambda: jax.jit(lambda x: x, static_argnums=3)(1.0),
                 ValueError, r"static_argnums=\(3,\), but only accepts 1 positional"),
    ("jit_not_callable", lambda: jax.jit(3), TypeError, r"callable.*3"),
    ("jit_returns_string", lambda: jax.jit(lambda x: "s")(1.0),
     TypeError, r"returned a value of type <class 'str'>, which is not a valid JAX type"),
    pytest.param("jit_unknown_backend", lambda: jax.jit(lambda x: x, backend="tpu9")(1.0),
                 RuntimeError, r"Unknown backend",
                 marks=bug("jaxlite raises ValueError at jit(), JAX RuntimeError at the "
                           "call: jax.jit(lambda x: x, backend='tpu9')")),
    ("compiled_other_shape", lambda: _compiled(3)(jnp.ones(4)),
     TypeError, r"Argument types differ from the types for which this computation was "
                r"compiled.*\n.*float32\[3\].*float32\[4\]"),
    ("compiled_other_dtype", lambda: _compiled(3)(jnp.ones(3, jnp.int32)),
     TypeError, r"Argument types differ.*\n.*called with int32\[3\]"),
    ("compiled_other_pytree", lambda: _compiled(3)((jnp.ones(3),)),
     TypeError, r"Function compiled with input pytree does not match the input pytree"),
    # -- grad
    ("grad_vector_output", lambda: jax.grad(lambda x: x * 2)(jnp.ones(3)),
     TypeError, r"Gradient only defined for scalar-output functions. Output had shape: \(3,\)"),
    ("grad_tuple_output", lambda: jax.grad(lambda x: (x, x))(1.0),
     TypeError, r"Gradient only defined for scalar-output functions"),
    ("value_and_grad_vector", lambda: jax.value_and_grad(lambda x: x)(jnp.ones(2)),
     TypeError, r"Gradient only defined for scalar-output functions"),
    ("grad_int_input", lambda: jax.grad(lambda x: x * 2)(3),
     TypeError, r"grad requires real- or complex-valued inputs.*got int32.*allow_int"),
    ("grad_int_array_input", lambda: jax.grad(lambda x: jnp.sum(x * 2))(jnp.arange(3)),
     TypeError, r"grad requires real- or complex-valued inputs.*allow_int"),
    ("jacrev_int_input", lambda: jax.jacrev(lambda x: x)(jnp.arange(3)),
     TypeError, r"jacrev requires real- or complex-valued inputs.*allow_int"),
    pytest.param("grad_complex_output", lambda: jax.grad(lambda x: x * 1j)(1.0),
                 TypeError, r"grad requires real-valued outputs.*complex64.*holomorphic"),
    ("grad_int_output", lambda: jax.grad(lambda x: jnp.int32(3) * 1)(1.0),
     TypeError, r"grad requires real-valued outputs.*got int32"),
    ("grad_has_aux_single_value", lambda: jax.grad(lambda x: x * 2, has_aux=True)(1.0),
     TypeError, r"(two-element tuple|requires the function to return a pair)"),
    ("grad_has_aux_triple", lambda: jax.grad(lambda x: (x, x, x), has_aux=True)(1.0),
     TypeError, r"(two-element tuple|return a pair).*tuple"),
    ("grad_argnums_out_of_range", lambda: jax.grad(lambda x: x, argnums=2)(1.0),
     TypeError, r"argnums=2 requires at least 3 positional arguments"),
    pytest.param("jvp_tangent_dtype", lambda: jax.jvp(lambda x: x, (1.0,), (1,)),
                 TypeError, r"primal and tangent"),
    ("jvp_tangent_shape", lambda: jax.jvp(lambda x: x, (jnp.ones(3),), (jnp.ones(2),)),
     ValueError, r"jvp called with different primal and tangent shapes"),
    ("vjp_cotangent_shape", lambda: jax.vjp(lambda x: x, jnp.ones(3))[1](jnp.ones(2)),
     ValueError, r"(?i)cotangent|expected float32\[3\]"),
    ("custom_vjp_bwd_structure", _custom_vjp_bad_bwd, TypeError,
     r"Custom VJP bwd rule must produce an output with the same container"),
    ("custom_jvp_tangent_shape", _custom_jvp_bad_tangent, TypeError,
     r"Custom JVP rule .*must produce primal and tangent outputs with"),
    # -- vmap
    ("vmap_size_mismatch", lambda: jax.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4)),
     ValueError, r"vmap got inconsistent sizes for array axes to be mapped:\n.*size 3.*\n.*size 4"),
    ("vmap_in_axes_out_of_range", lambda: jax.vmap(lambda a: a, in_axes=2)(jnp.ones((2, 3))),
     ValueError, r"map its argument along axis 2, which implies that its rank should be at "
                 r"least 3, but is only 2"),
    ("vmap_in_axes_length", lambda: jax.vmap(lambda a: a, in_axes=(0, 0))(jnp.ones(3)),
     ValueError, r"len\(in_axes\)=2, len\(args\)=1"),
    ("vmap_in_axes_float", lambda: jax.vmap(lambda a: a, in_axes=0.5)(jnp.ones(3)),
     TypeError, r"vmap in_axes must be an int, None, or a tuple.*got 0.5"),
    ("vmap_all_none", lambda: jax.vmap(lambda a: a, in_axes=None)(jnp.ones(3)),
     ValueError, r"at least one non-None value in in_axes or axis_size"),
    ("vmap_scalar_argument", lambda: jax.vmap(lambda a: a)(1.0),
     ValueError, r"rank should be at least 1, but is only 0"),
    ("vmap_no_arguments", lambda: jax.vmap(lambda: 1.0)(),
     ValueError, r"at least one argument containing an array or axis_size"),
    # -- cond / switch
    ("cond_branch_dtypes", lambda: lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.0),
     TypeError, r"cond branches must have equal output types.*\n(.*\n)*.*dtypes do not match"),
    ("cond_branch_structures", lambda: lax.cond(True, lambda x: (x, x), lambda x: x, 1.0),
     TypeError, r"cond branch outputs must have the same pytree structure"),
    ("cond_branch_shapes", lambda: lax.cond(True, lambda x: x, lambda x: jnp.stack([x, x]), 1.0),
     TypeError, r"cond branches must have equal output types(.*\n)*.*shapes do not match"),
    ("cond_vector_predicate",
     lambda: lax.cond(jnp.array([True, False]), lambda: 1.0, lambda: 2.0),
     TypeError, r"Pred must be a scalar, got .* of shape \(2,\)"),
    ("cond_not_callable", lambda: lax.cond(True, 1.0, 2.0),
     TypeError, r"true_fun and false_fun arguments should be callable"),
    ("switch_branch_dtypes", lambda: lax.switch(0, [lambda: 1.0, lambda: jnp.int32(1)]),
     TypeError, r"switch branches must have equal output types"),
    # -- scan / while carries
    pytest.param("scan_carry_dtype",
                 lambda: lax.scan(lambda c, x: (c.astype(jnp.int32), x), 1.0, jnp.ones(3)),
                 TypeError, r"carry input and carry output must have equal types(.*\n)*.*dtypes"),
    ("scan_carry_shape", lambda: lax.scan(lambda c, x: (jnp.stack([c, c]), x), 1.0, jnp.ones(3)),
     TypeError, r"scan body function carry input and carry output must have equal types"
                r"(.*\n)*.*shapes do not match"),
    ("scan_carry_structure", lambda: lax.scan(lambda c, x: ((c, c), x), 1.0, jnp.ones(3)),
     TypeError, r"carry output must have the same pytree structure"),
    ("scan_xs_lengths", lambda: lax.scan(lambda c, x: (c, x), 0.0, (jnp.ones(3), jnp.ones(4))),
     ValueError, r"scan got values with different leading axis sizes: 3, 4"),
    ("scan_length_argument", lambda: lax.scan(lambda c, x: (c, x), 0.0, jnp.ones(3), length=5),
     ValueError, r"scan got `length` argument of 5 which disagrees"),
    ("while_carry_shape",
     lambda: lax.while_loop(lambda c: jnp.all(c < 3), lambda c: jnp.stack([c, c]), 0.0),
     TypeError, r"carry input and carry output must have equal types(.*\n)*.*shapes do not"),
    ("while_vector_predicate",
     lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1, jnp.zeros(2)),
     TypeError, r"cond_fun must return a boolean scalar"),
    pytest.param("fori_float_bounds", lambda: lax.fori_loop(0.0, 3, lambda i, c: c, 0),
                 TypeError, r"lower and upper arguments to fori_loop must have equal types"),
    # -- indexing
    ("at_float_index", lambda: jnp.zeros(3).at[1.5].set(1.0),
     TypeError, r"Indexer must have integer or boolean type, got indexer with type float"),
    ("at_float_array_index", lambda: jnp.zeros(3).at[jnp.array([0.0, 1.0])].add(1.0),
     TypeError, r"Indexer must have integer or boolean type, got indexer with type float32"),
    ("getitem_float_index", lambda: jnp.zeros(3)[1.0],
     TypeError, r"Indexer must have integer or boolean type"),
    ("getitem_float_array_index", lambda: jnp.zeros(3)[jnp.array([1.0])],
     TypeError, r"Indexer must have integer or boolean type"),
    ("getitem_too_many_indices", lambda: jnp.zeros(3)[0, 0],
     IndexError, r"Too many indices: array is 1-dimensional, but 2 were indexed"),
    ("at_too_many_indices", lambda: jnp.zeros(3).at[0, 0].set(1.0),
     IndexError, r"Too many indices"),
    ("getitem_string", lambda: jnp.zeros(3)["a"],
     TypeError, r"JAX does not support string indexing; got idx='a'"),
    pytest.param("tile_float_reps", lambda: jnp.tile(jnp.ones(3), 1.5),
                 TypeError, r"(?i)must be .*integer"),
    ("pad_negative", lambda: jnp.pad(jnp.ones(3), -1),
     ValueError, r"index can't contain negative values"),
    # -- empty reductions without an identity
    ("max_of_empty", lambda: jnp.max(jnp.zeros((0,))),
     ValueError, r"zero-size array to reduction operation max which has no identity"),
    ("min_of_empty_axis", lambda: jnp.min(jnp.zeros((0, 3)), axis=0),
     ValueError, r"zero-size array to reduction operation min which has no identity"),
    ("max_method_of_empty", lambda: jnp.zeros((0,)).max(),
     ValueError, r"reduction operation max which has no identity"),
    ("argmax_of_empty", lambda: jnp.argmax(jnp.zeros((0,))),
     ValueError, r"attempt to get argmax of an empty sequence"),
    ("argmin_of_empty", lambda: jnp.argmin(jnp.zeros((2, 0)), axis=1),
     ValueError, r"attempt to get argmin of an empty sequence"),
    # -- pytrees and PRNG keys
    ("tree_map_structures", lambda: jax.tree_util.tree_map(lambda a, b: a + b, (1, 2), (1, 2, 3)),
     ValueError, r"pytree structure error: different lengths of tuple"),
    ("random_bad_key", lambda: jax.random.normal(jnp.ones(3), (2,)),
     TypeError, r"invalid PRNG key data: expected key_data.shape to end with \(2,\)"),
]


def _values(case):
  return case if type(case) is tuple else case.values  # a pytest.param is a NamedTuple


@pytest.mark.parametrize("name,fn,exc,pattern", CASES,
                         ids=[_values(c)[0] for c in CASES])
def test_bad_input_raises_jax_error_class_with_informative_message(name, fn, exc, pattern):
  with pytest.raises(exc) as info:
    fn()
  assert type(info.value) is not AssertionError
  message = str(info.value)
  assert len(message) >= 20, f"{name}: message too short to help: {message!r}"
  assert re.search(pattern, message, re.S), f"{name}: {message!r} does not match {pattern!r}"


def test_catalogue_is_large_and_covers_every_family():
  assert len(CASES) >= 60
  classes = {_values(c)[2] for c in CASES}
  assert {TypeError, ValueError, IndexError, errors.TracerBoolConversionError,
          errors.UnexpectedTracerError, errors.ConcretizationTypeError} <= classes


# -- inputs JAX accepts: no error, JAX's answer

def _tiers(f):
  """``f`` eagerly, under jit on tier 0, and (when a plugin is installed) on XLA."""
  runs = [("eager", f), ("numpy", jax.jit(f, backend="numpy"))]
  if tiers.xla_available():
    runs.append(("xla", jax.jit(f, backend="xla")))
  return runs


@pytest.mark.parametrize("update,expected", [
    (lambda x: x.at[5].set(9), [0, 1, 2]),
    (lambda x: x.at[-4].set(9), [0, 1, 2]),
    (lambda x: x.at[jnp.array([0, 7])].set(9), [9, 1, 2]),
    (lambda x: x.at[jnp.array([1, -9])].add(5), [0, 6, 2]),
    (lambda x: x.at[3:].set(9), [0, 1, 2]),
    (lambda x: x.at[10].mul(2), [0, 1, 2]),
])
def test_out_of_bounds_at_updates_are_dropped_like_jax(update, expected):
  for tier, f in _tiers(update):
    np.testing.assert_array_equal(f(jnp.arange(3)), expected, err_msg=tier)


def test_out_of_bounds_gather_clamps_like_jax():
  for tier, f in _tiers(lambda x: (x[5], x.at[5].get(), x[jnp.array([-7, 9])])):
    a, b, c = f(jnp.arange(3))
    assert int(a) == 2 and int(b) == 2, tier
    np.testing.assert_array_equal(c, [0, 2], err_msg=tier)


_SPECIALS = np.array([0.0, -1.0, np.inf, -np.inf, np.nan, 2.0], np.float32)


@pytest.mark.parametrize("name,fn", [
    ("exp", jnp.exp), ("log", jnp.log), ("sqrt", jnp.sqrt), ("tanh", jnp.tanh),
    ("divide_by_zero", lambda x: x / 0.0), ("subtract_self", lambda x: x - x),
    ("times_zero", lambda x: x * 0.0), ("log1p", jnp.log1p), ("arctanh", jnp.arctanh),
    ("sort", jnp.sort), ("cumsum", jnp.cumsum), ("maximum", lambda x: jnp.maximum(x, 0.5)),
    ("where", lambda x: jnp.where(x > 0, x, -x)), ("softmax", jax.nn.softmax),
    ("sum", jnp.sum), ("mean", jnp.mean), ("nanmax", jnp.nanmax),
    ("argmax", jnp.argmax),
    pytest.param("max", jnp.max),
    pytest.param("min", jnp.min),
    pytest.param("floor_divide_by_zero", lambda x: x // 0.0),
    pytest.param("sqrt_as_power", lambda x: x ** 0.5),
])
def test_nan_and_inf_flow_through_as_ieee_values(name, fn):
  warnings.simplefilter("ignore", RuntimeWarning)   # reported by the test below
  with np.errstate(all="ignore"):
    expected = np.asarray(fn(_SPECIALS) if name in ("sort", "argmax") else
                          _numpy_reference(name, _SPECIALS))
  for tier, f in _tiers(fn):
    got = np.asarray(f(jnp.asarray(_SPECIALS)))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=0, equal_nan=True,
                               err_msg=f"{name} on {tier}")


def _numpy_reference(name, x):
  e = np.exp(x - np.nanmax(x))
  return {
      "exp": lambda: np.exp(x), "log": lambda: np.log(x), "sqrt": lambda: np.sqrt(x),
      "tanh": lambda: np.tanh(x), "divide_by_zero": lambda: x / np.float32(0),
      "subtract_self": lambda: x - x, "times_zero": lambda: x * np.float32(0),
      "log1p": lambda: np.log1p(x), "arctanh": lambda: np.arctanh(x),
      "cumsum": lambda: np.cumsum(x), "maximum": lambda: np.maximum(x, np.float32(0.5)),
      "where": lambda: np.where(x > 0, x, -x), "softmax": lambda: e / e.sum(),
      "sum": lambda: x.sum(), "mean": lambda: x.mean(), "nanmax": lambda: np.nanmax(x),
      "max": lambda: x.max(), "min": lambda: x.min(),
      # IEEE floor(x / 0): +-inf for nonzero finite x, nan for 0 and nan
      "floor_divide_by_zero": lambda: np.floor(x / np.float32(0)),
      # C99 pow(-inf, 0.5) is +inf (NumPy's power gives nan there)
      "sqrt_as_power": lambda: np.where(x == -np.inf, np.inf, np.power(x, np.float32(0.5))),
  }[name]()


_WARNS = ("warns although JAX is silent, because the library's warning filter covers its "
          "own impls module only: ")


@pytest.mark.parametrize("expr", [
    "jnp.log(0.0)", "jnp.array([0.0]) / 0.0", "jnp.sqrt(-1.0)", "jnp.exp(1e4)",
    pytest.param("jax.jit(jnp.log, backend='numpy')(0.0)"),
    pytest.param("jax.jit(lambda x: x / 0.0, backend='numpy')(jnp.zeros(2))"),
    pytest.param("jnp.sum(jnp.array([jnp.inf, -jnp.inf]))"),
])
def test_ieee_special_values_print_no_warnings(expr):
  # a fresh interpreter with Python's default warning filters: what a user's script sees
  result = _run_python(f"""
    import jaxlite as jax, jaxlite.numpy as jnp
    print({expr})
  """)
  assert result.returncode == 0, result.stderr[-2000:]
  assert "Warning" not in result.stderr, result.stderr


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_empty_reductions_with_an_identity_follow_jax():
  x = jnp.zeros((0, 3))
  for tier, f in _tiers(lambda x: (jnp.sum(x), jnp.prod(x), jnp.sum(x, axis=0),
                                   jnp.any(x), jnp.all(x), jnp.mean(x))):
    s, p, s0, a, al, m = f(x)
    assert float(s) == 0.0 and float(p) == 1.0, tier
    np.testing.assert_array_equal(s0, [0.0, 0.0, 0.0])
    assert not bool(a) and bool(al) and np.isnan(m), tier


def test_zero_dimensional_arrays_behave_as_scalars():
  for tier, f in _tiers(lambda x: (x + 1, jnp.sum(x), x.reshape(1), x[None], jnp.max(x),
                                   jnp.expand_dims(x, 0), x.T, jnp.sort(x.reshape(1)))):
    outs = f(jnp.float32(3.0))
    assert outs[0].shape == () and float(outs[0]) == 4.0, tier
    assert outs[1].shape == () and outs[2].shape == (1,) and outs[3].shape == (1,)
    assert outs[5].shape == (1,) and outs[6].shape == ()
  assert float(jax.grad(lambda x: x * x)(jnp.float32(3.0))) == 6.0
  np.testing.assert_array_equal(jax.vmap(lambda x: x * 2)(jnp.arange(3.0)), [0, 2, 4])
  assert int(jnp.float32(2.5).astype(jnp.int32)) == 2 and jnp.float32(2.0).item() == 2.0


# -- resources and the compiler

def _run_python(code, timeout=240):
  env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
  return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                        text=True, timeout=timeout, env=env, cwd=ROOT)


def test_huge_array_request_is_a_clear_error_never_a_crash():
  # 2**33 float32 elements (32 GiB) under a 4 GiB address-space limit, in a subprocess so
  # that nothing can take this machine down.
  result = _run_python("""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    import jaxlite as jax, jaxlite.numpy as jnp
    from jaxlite._src import tiers
    n = 2**31 * 4
    cases = [("add", lambda: jnp.zeros(n, jnp.float32) + 1),
             ("exp", lambda: jnp.exp(jnp.ones(n))),
             ("arange", lambda: jnp.arange(n)),
             ("jit_numpy", lambda: jax.jit(lambda x: jnp.ones(n) * x, backend="numpy")(2.0))]
    if tiers.xla_available():
      cases.append(("jit_xla", lambda: jax.jit(lambda x: jnp.ones(n) * x, backend="xla")(2.0)))
    for name, f in cases:
      try:
        f()
        print(name, "NOERROR")
      except Exception as e:
        print(name, type(e).__name__, str(e).splitlines()[0])
    print("survived")
  """)
  assert result.returncode == 0, result.stderr[-2000:]
  lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
  assert "survived" in result.stdout
  for name in ("add", "exp", "arange", "jit_numpy"):
    assert re.match(r"(MemoryError|ValueError) .*(allocate|memory|too large)", lines[name]), \
        (name, lines[name])
  if "jit_xla" in lines:  # as JAX 0.10: JaxRuntimeError (a RuntimeError), RESOURCE_EXHAUSTED
    assert re.match(r"JaxRuntimeError RESOURCE_EXHAUSTED: Out of memory", lines["jit_xla"])


def test_missing_xla_plugin_names_the_package_to_install(monkeypatch):
  from jaxlite._src.backends import xla
  from jaxlite._src.backends import plugins
  monkeypatch.setattr(plugins, "cpu_plugin", lambda: None)
  monkeypatch.setattr(plugins, "cuda_plugin", lambda: None)
  monkeypatch.setattr(xla, "_client", None)
  monkeypatch.setattr(xla, "_client_error", None)
  monkeypatch.setattr(backends, "xla_state", {})
  assert not tiers.xla_available()
  with pytest.raises(RuntimeError, match=r"XLA tier is not available.*pip install xla-cpu-pjrt"):
    jax.jit(lambda x: x + 1, backend="xla")(1.0)
  with pytest.raises(RuntimeError, match=r"pip install xla-cpu-pjrt"):
    jax.jit(lambda x: x * 3, backend="xla").lower(1.0).compile()
  # tier 0 keeps serving: the auto policy and the numpy tier need no plugin
  assert float(jax.jit(lambda x: x + 1)(1.0)) == 2.0
  assert float(jax.jit(lambda x: x + 1, backend="numpy")(1.0)) == 2.0


@needs_xla
def test_malformed_stablehlo_raises_xla_runtime_error_and_never_aborts():
  result = _run_python("""
    from jaxlite._src.backends import xla
    bad = ["not mlir", "", "module {}",
           "module { func.func @main(%a: tensor<3xf32>) -> tensor<4xf32> {"
           " return %a : tensor<3xf32> } }"]
    for text in bad:
      try:
        xla.client().compile(text)
        print("NOERROR")
      except xla.XlaRuntimeError as e:
        print("XlaRuntimeError", str(e).splitlines()[0][:80])
  """)
  assert result.returncode == 0, result.stderr[-2000:]
  assert result.stdout.count("XlaRuntimeError") == 4, result.stdout
  with pytest.raises(RuntimeError, match="error"):  # XlaRuntimeError is a RuntimeError
    from jaxlite._src.backends import xla
    xla.client().compile("not mlir")


@needs_xla
@pytest.mark.parametrize("args,pattern", [
    ((np.ones(3, np.int32),), r"must be float32\[3\], got int32\[3\]"),
    ((np.ones(3, np.float64),), r"must be float32\[3\], got float64\[3\]"),
    ((np.ones(4, np.float32),), r"must be float32\[3\], got float32\[4\]"),
    ((np.ones((3, 1), np.float32),), r"got float32\[3, 1\]"),
    ((), r"takes 1 arguments, got 0"),
    ((np.ones(3, np.float32),) * 2, r"takes 1 arguments, got 2"),
])
def test_xla_executable_checks_arguments_before_execute(args, pattern):
  from jaxlite._src.backends import xla
  executable = xla.compile(jax.make_jaxpr(lambda x: x * 2)(jnp.ones(3)))
  with pytest.raises(TypeError, match=pattern):
    executable(*args)
  np.testing.assert_array_equal(executable(np.ones(3, np.float32))[0], [2, 2, 2])


@pytest.mark.parametrize("backend", ["numpy", pytest.param("xla", marks=needs_xla)])
def test_aot_compiled_rejects_another_signature(backend):
  compiled = jax.jit(lambda x, y: x @ y, backend=backend).lower(
      jnp.ones((2, 3)), jnp.ones((3,))).compile()
  np.testing.assert_allclose(compiled(jnp.ones((2, 3)), jnp.ones((3,))), [3.0, 3.0])
  with pytest.raises(TypeError, match=r"Argument 'y' compiled with float32\[3\] and called "
                                      r"with float32\[4\]"):
    compiled(jnp.ones((2, 3)), jnp.ones((4,)))
  with pytest.raises(TypeError, match=r"called with int32\[2,3\]"):
    compiled(jnp.ones((2, 3), jnp.int32), jnp.ones((3,)))
  with pytest.raises(TypeError, match=r"input pytree does not match"):
    compiled(jnp.ones((2, 3)))
