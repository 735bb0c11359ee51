"""Which constants a traced function stages as literals and which as constvars.

As JAX 0.10.2 does: an Array made before the trace began (closed over), even a scalar, is
a constvar; Python and NumPy scalars, and scalars made while tracing, are literals. The
expected jaxprs were recorded with ``str(jax.make_jaxpr(f)(jnp.ones(2)))`` on JAX 0.10.2.
"""
import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

_A = jnp.float32(2.0)


def _jaxpr(f):
  return str(jax.make_jaxpr(f)(jnp.ones(2)))


def test_a_closed_over_scalar_array_is_a_constvar():
  assert _jaxpr(lambda x: x * _A) == (
      "{ lambda a:f32[]; b:f32[2]. let c:f32[2] = mul b a in (c,) }")
  assert _jaxpr(lambda x: x * jnp.asarray(_A)) == (
      "{ lambda a:f32[]; b:f32[2]. let c:f32[2] = mul b a in (c,) }")
  assert _jaxpr(lambda x: x * (_A + 1)) == """\
{ lambda a:f32[]; b:f32[2]. let
    c:f32[] = add a 1.0:f32[]
    d:f32[2] = mul b c
  in (d,) }"""


def test_python_numpy_and_traced_scalars_are_literals():
  for c in (2.0, np.float32(2.0), np.array(2.0, np.float32)):
    assert _jaxpr(lambda x: x * c) == (
        "{ lambda ; a:f32[2]. let b:f32[2] = mul a 2.0:f32[] in (b,) }")
  assert _jaxpr(lambda x: x * jnp.float32(2.0)) == (
      "{ lambda ; a:f32[2]. let b:f32[2] = mul a 2.0:f32[] in (b,) }")
  assert _jaxpr(lambda x: x * (jnp.float32(2.0) + 1)) == """\
{ lambda ; a:f32[2]. let
    b:f32[] = add 2.0:f32[] 1.0:f32[]
    c:f32[2] = mul a b
  in (c,) }"""


def test_a_loop_body_closes_over_scalars_as_constvars():
  # a scalar made while tracing the outer function is a literal operand of the loop and
  # a constvar of its body; a closed-over Array is a constvar of both
  def made_inside(x):
    c = jnp.float32(2.0)
    return lax.while_loop(lambda v: v[0] < 3, lambda v: v * c, x)
  assert _jaxpr(made_inside) == """\
{ lambda ; a:f32[2]. let
    b:f32[2] = while[
      body_jaxpr={ lambda ; c:f32[] d:f32[2]. let e:f32[2] = mul d c in (e,) }
      body_nconsts=1
      cond_jaxpr={ lambda ; f:f32[2]. let
          g:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] f
          h:f32[] = squeeze[dimensions=(0,)] g
          i:bool[] = lt h 3.0:f32[]
        in (i,) }
      cond_nconsts=0
    ] 2.0:f32[] a
  in (b,) }"""
  assert _jaxpr(lambda x: lax.while_loop(lambda v: v[0] < 3, lambda v: v * _A, x)) == """\
{ lambda a:f32[]; b:f32[2]. let
    c:f32[2] = while[
      body_jaxpr={ lambda ; d:f32[] e:f32[2]. let f:f32[2] = mul e d in (f,) }
      body_nconsts=1
      cond_jaxpr={ lambda ; g:f32[2]. let
          h:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] g
          i:f32[] = squeeze[dimensions=(0,)] h
          j:bool[] = lt i 3.0:f32[]
        in (j,) }
      cond_nconsts=0
    ] a b
  in (c,) }"""


def test_closure_conversion_sees_the_same_consts_eagerly_and_traced():
  # equinox's filter_closure_convert (optimistix, diffrax's implicit solvers) makes the
  # consts of a function once eagerly and again inside a loop body: both must agree. A
  # closed-over weak scalar is converted in the jaxpr, not folded (JAX 0.10.2's jaxpr)
  t = jnp.asarray(0.5)
  f = lambda y: y * t + jnp.float32(1.0)
  expected = """\
{ lambda a:f32[]; b:f32[2]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[2] = mul b c
    e:f32[2] = add d 1.0:f32[]
  in (e,) }"""
  assert _jaxpr(f) == expected
  seen = []

  def body(v):
    seen.append(str(jax.make_jaxpr(f)(v)))
    return v
  jax.jit(lambda v: lax.while_loop(lambda v: False, body, v))(jnp.ones(2))
  assert seen == [expected]


def test_a_residual_computed_eagerly_is_a_constvar_of_the_linear_function():
  # JAX 0.10.2: the residual t * 2.0 of an eager linearize is a concrete array, so tracing
  # the linear function closes over it (constvars ['float32[]'], consts [2.4000000953674316])
  t = jnp.asarray(1.2)
  _, lin = jax.linearize(lambda y: y * (t * 2.0), jnp.ones(2))
  closed = jax.make_jaxpr(lin)(jnp.ones(2))
  assert [str(v.aval) for v in closed.jaxpr.constvars] == ["float32[]"]
  assert [float(c) for c in closed.consts] == [np.float32(2.4)]
