"""Inputs forwarded to outputs unchanged, as JAX 0.10.2 forwards them: a loop carry the
body passes through, a scan ``y`` that is its ``x``, and (eagerly) the outputs of
``checkpoint``, ``custom_jvp`` and ``stop_gradient`` that are their inputs. Every expected
value and printed jaxpr here was recorded from JAX 0.10.2."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def _kinds(tree):
  """(type name, value) per leaf: which leaves came back as Python values."""
  return jax.tree.map(lambda x: (type(x).__name__, float(x)), tree)


def _scan2(x, y):
  def body(c, _):
    a, b = c
    return (a, b * 2.0), None
  return lax.scan(body, (x, y), None, length=3)[0]


def _while2(x, y):
  return lax.while_loop(lambda c: c[1] < 10., lambda c: (c[0], c[1] * 2.0), (x, y))


def _fori2(x, y):
  return lax.fori_loop(0, 3, lambda i, c: (c[0], c[1] * 2.0), (x, y))


# ----------------------------------------------------------------------------- loops

@pytest.mark.parametrize("loop, second", [(_scan2, 24.0), (_while2, 12.0), (_fori2, 24.0)])
def test_loop_returns_a_passed_through_carry_as_given(loop, second):
  # JAX 0.10.2: (2.0, Array(24., weak)) for scan and fori_loop, (2.0, Array(12.)) for
  # while_loop: the float comes back a float
  a, b = loop(2.0, 3.0)
  assert type(a) is float and a == 2.0
  assert isinstance(b, jax.Array) and float(b) == second and b.weak_type
  x = jnp.arange(3.0)
  assert loop(x, 3.0)[0] is x


@pytest.mark.parametrize("loop, second", [(_scan2, 8.0), (_while2, 4.0), (_fori2, 8.0)])
def test_jvp_of_loop_forwards_primal_and_tangent(loop, second):
  # JAX 0.10.2: ((2.0, 24.), (1.0, 8.)) for scan; the primal and tangent of the carry
  # passed through are the floats given
  primals, tangents = jax.jvp(loop, (2.0, 3.0), (1.0, 1.0))
  assert _kinds(tangents)[0] == ("float", 1.0) and _kinds(primals)[0] == ("float", 2.0)
  assert float(tangents[1]) == second
  # a tangent given as 0.0 is a value, forwarded as it is (JAX 0.10.2: 0.0)
  assert _kinds(jax.jvp(loop, (2.0, 3.0), (0.0, 1.0))[1])[0] == ("float", 0.0)


# Recorded from JAX 0.10.2: the carry passed through became a const of the loop, and so
# did its tangent; both leave the loop as the jaxpr's inputs.
JVP_SCAN_JAXPR = """{ lambda ; a:f32[] b:f32[] c:f32[] d:f32[]. let
    e:f32[] f:f32[] = scan[
      jaxpr={ lambda ; g:f32[] h:f32[] i:f32[] j:f32[]. let
          k:f32[] = mul i 2.0:f32[]
          l:f32[] = mul j 2.0:f32[]
        in (k, l) }
      length=3
      num_carry=2
      num_consts=2
      reverse=False
      unroll=1
    ] a c b d
  in (a, e, c, f) }"""

JVP_WHILE_JAXPR = """{ lambda ; a:f32[] b:f32[] c:f32[] d:f32[]. let
    e:f32[] f:f32[] = while[
      body_jaxpr={ lambda ; g:f32[] h:f32[] i:f32[] j:f32[]. let
          k:f32[] = mul i 2.0:f32[]
          l:f32[] = mul j 2.0:f32[]
        in (k, l) }
      body_nconsts=2
      cond_jaxpr={ lambda ; m:f32[] n:f32[]. let
          o:bool[] = lt m 10.0:f32[]
        in (o,) }
      cond_nconsts=0
    ] a c b d
  in (a, e, c, f) }"""


@pytest.mark.parametrize("loop, expected", [(_scan2, JVP_SCAN_JAXPR),
                                            (_while2, JVP_WHILE_JAXPR)])
def test_jvp_of_loop_prints_as_jax(loop, expected):
  jvp = lambda x, y, tx, ty: jax.jvp(loop, (x, y), (tx, ty))
  assert str(jax.make_jaxpr(jvp)(2.0, 3.0, 1.0, 1.0)) == expected


# Recorded from JAX 0.10.2: the y that is its x is xs itself, the carry passed through
# (a constant 1.0) is a const of the scan.
SCAN_FORWARDS_JAXPR = """{ lambda ; a:f32[3]. let
    b:f32[] c:f32[3] = scan[
      jaxpr={ lambda ; d:f32[] e:f32[] f:f32[]. let
          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e
          h:f32[] = add g f
        in (h, d) }
      length=3
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] 1.0:f32[] 0.0:f32[] a
  in (1.0:f32[], b, a, c) }"""

FORI_JAXPR = """{ lambda ; a:f32[] b:f32[]. let
    _:i32[] c:f32[] = scan[
      jaxpr={ lambda ; d:f32[] e:i32[] f:f32[]. let
          g:i32[] = add e 1:i32[]
          h:f32[] = mul f d
        in (g, h) }
      length=3
      num_carry=2
      num_consts=1
      reverse=False
      unroll=1
    ] a 0:i32[] b
  in (a, c) }"""


def test_scan_forwards_carries_and_xs_as_jax():
  f = lambda xs: lax.scan(lambda c, x: ((c[0], c[1] + x), (x, c[0])), (1.0, 0.), xs)
  assert str(jax.make_jaxpr(f)(jnp.arange(3.))) == SCAN_FORWARDS_JAXPR
  xs = jnp.arange(3.0)
  (one, total), (same, ones) = f(xs)
  assert same is xs and type(one) is float and float(total) == 3.0
  np.testing.assert_array_equal(ones, [1.0, 1.0, 1.0])
  g = lambda x, y: lax.fori_loop(0, 3, lambda i, c: (c[0], c[1] * c[0]), (x, y))
  assert str(jax.make_jaxpr(g)(1.0, 2.0)) == FORI_JAXPR


def test_while_keeps_a_carry_its_condition_reads():
  # JAX 0.10.2: (Array(5., weak), Array(0, weak)): the condition reads the carry passed
  # through, so it stays a carry and comes back an Array
  a, b = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0], c[1] + 1), (5.0, 0))
  assert isinstance(a, jax.Array) and float(a) == 5.0 and a.weak_type
  assert isinstance(b, jax.Array) and int(b) == 0


def test_loop_forwarding_leaves_numpy_and_int_values_as_given():
  # JAX 0.10.2: the carry is the float64 NumPy array given, the ys an f32 Array
  n = np.ones(2)
  carry, ys = lax.scan(lambda c, x: (c, x), n, np.arange(3.))
  assert carry is n
  assert isinstance(ys, jax.Array) and ys.dtype == np.float32
  assert lax.scan(lambda c, x: (c, None), 3, None, length=2)[0] == 3


def test_while_under_vmap_keeps_the_forwarded_carry_unbatched():
  # JAX 0.10.2: (Array([0., 1.]), Array([2., 3.], weak), Array([0., 3.]))
  def w(x, n):
    return lax.while_loop(lambda c: c[1] < n,
                          lambda c: (c[0], c[1] + 1., c[2] + c[0]), (x, 0., 0.))
  a, b, c = jax.vmap(w)(jnp.arange(2.), jnp.arange(2.) + 2)
  np.testing.assert_array_equal(a, [0., 1.])
  np.testing.assert_array_equal(b, [2., 3.])
  np.testing.assert_array_equal(c, [0., 3.])
  x, y = jax.vmap(_scan2, in_axes=(None, 0))(2.0, jnp.arange(2.))
  np.testing.assert_array_equal(x, [2., 2.])
  np.testing.assert_array_equal(y, [0., 8.])


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("loop, second, tangent",
                         [(_scan2, 24.0, 8.0), (_while2, 12.0, 4.0), (_fori2, 24.0, 8.0)])
def test_loop_forwarding_under_jit(backend, loop, second, tangent):
  # JAX 0.10.2 (jit): Arrays (2., 24.) and tangents (1., 8.) for scan
  f = jax.jit(lambda x, y: jax.jvp(loop, (x, y), (1.0, 1.0)), backend=backend)
  (a, b), (ta, tb) = f(2.0, 3.0)
  assert [float(v) for v in (a, b, ta, tb)] == [2.0, second, 1.0, tangent]
  assert isinstance(a, jax.Array) and a.weak_type


def test_derivatives_through_a_forwarded_carry():
  # JAX 0.10.2: linearize's tangents (1.0, 4.), vjp's cotangents (1.0, 4.), grad (1., 4.)
  primals, lin = jax.linearize(_scan2, 2.0, 3.0)
  assert float(primals[0]) == 2.0 and float(primals[1]) == 24.0
  assert [float(t) for t in lin(1.0, 0.5)] == [1.0, 4.0]
  _, vjp = jax.vjp(_scan2, 2.0, 3.0)
  assert [float(c) for c in vjp((1.0, 1.0))] == [1.0, 8.0]
  g = jax.grad(lambda x, y: sum(_scan2(x, y)), argnums=(0, 1))(2.0, 3.0)
  assert [float(v) for v in g] == [1.0, 8.0]


# ----------------------------------------------------------------------------- stop_gradient

def test_stop_gradient_returns_its_operand_as_given():
  # JAX 0.10.2: TypedFloat(2.0) / TypedInt(2) (float and int subclasses carrying their
  # dtype), TypedNdArray in the canonical dtype for NumPy values, the Array itself for an
  # Array
  assert _kinds(lax.stop_gradient(2.0)) == ("TypedFloat", 2.0)
  assert lax.stop_gradient([1.0, 2]) == [1.0, 2]
  assert [repr(v) for v in lax.stop_gradient([1.0, 2])] == [
      "TypedFloat(1.0, dtype=float32)", "TypedInt(2, dtype=int32)"]
  n = lax.stop_gradient(np.ones(2))
  assert type(n).__name__ == "TypedNdArray" and n.dtype == np.float32
  assert isinstance(n, np.ndarray) and not isinstance(n, jax.Array)
  assert lax.stop_gradient(np.arange(3)).dtype == np.int32
  a = jnp.arange(3.0)
  assert lax.stop_gradient(a) is a
  with pytest.raises(TypeError, match="not a valid JAX"):
    lax.stop_gradient("a")
  with pytest.raises(TypeError, match="Dtype object is not a valid JAX array type"):
    lax.stop_gradient(np.array([object()]))


def test_forwarding_still_refuses_a_leaked_tracer():
  # JAX 0.10.2 raises UnexpectedTracerError for a tracer bound outside its trace
  leaked = []
  jax.jit(lambda x: leaked.append(x) or x)(1.0)
  with pytest.raises(jax.errors.UnexpectedTracerError):
    lax.stop_gradient(leaked[0])
  with pytest.raises(jax.errors.UnexpectedTracerError):
    jax.checkpoint(lambda x: x)(leaked[0])


# Recorded from JAX 0.10.2: integers and booleans are staged through stop_gradient too.
STOP_INT_JAXPR = "{ lambda ; a:i32[]. let b:i32[] = stop_gradient a in (b,) }"


def test_stop_gradient_under_transformations():
  # JAX 0.10.2: jvp gives (TypedFloat(2.0), Array(0., weak)); the primal times 2 is the
  # Python float 4.0 (the stopped value left the trace); grad of x * x**2 with the first
  # factor stopped is 8.0, its hessian 4.0
  p, t = jax.jvp(lax.stop_gradient, (2.0,), (1.0,))
  assert type(p).__name__ == "TypedFloat" and p == 2.0
  assert isinstance(t, jax.Array) and float(t) == 0.0 and t.weak_type
  p, _ = jax.jvp(lambda x: lax.stop_gradient(x) * 2, (2.0,), (1.0,))
  assert type(p) is float and p == 4.0
  f = lambda x: lax.stop_gradient(x) * x ** 2
  assert float(jax.grad(f)(2.0)) == 8.0 and float(jax.hessian(f)(2.0)) == 4.0
  assert float(jax.jacfwd(f)(2.0)) == 8.0
  assert str(jax.make_jaxpr(lax.stop_gradient)(1)) == STOP_INT_JAXPR
  key = jax.random.key(0)
  assert lax.stop_gradient(key) is key
  np.testing.assert_array_equal(jax.vmap(lax.stop_gradient)(np.arange(2.)), [0., 1.])
  for backend in ("numpy", "xla"):
    out = jax.jit(lax.stop_gradient, backend=backend)(2.0)
    assert isinstance(out, jax.Array) and float(out) == 2.0 and out.weak_type


# ----------------------------------------------------------------------------- checkpoint

def _remat2(x, y):
  return jax.checkpoint(lambda a, b: (a, b * 2.0))(x, y)


def test_checkpoint_returns_an_input_output_as_given():
  # JAX 0.10.2: (TypedFloat(2.0), Array(6., weak)); the Array passed in is returned
  a, b = _remat2(2.0, 3.0)
  assert type(a).__name__ == "TypedFloat" and a == 2.0 and float(b) == 6.0 and b.weak_type
  x = jnp.arange(3.0)
  assert jax.checkpoint(lambda x: x)(x) is x
  n = jax.checkpoint(lambda x: x)(np.ones(2))
  assert type(n).__name__ == "TypedNdArray" and n.dtype == np.float32
  # a computed output of a float64 NumPy input is in the canonical dtype too
  out = jax.checkpoint(lambda x: (x, x * 2))(np.float64(2.0))
  assert out[0].dtype == np.float32 and out[1].dtype == np.float32
  assert jax.checkpoint(lambda a, b: (a, b))(3, 2.0) == (3, 2.0)


# Recorded from JAX 0.10.2: the JVP of a checkpoint keeps its `differentiated` param.
JVP_REMAT_JAXPR = """{ lambda ; a:f32[] b:f32[] c:f32[] d:f32[]. let
    e:f32[] f:f32[] g:f32[] h:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; i:f32[] j:f32[] k:f32[] l:f32[]. let
          m:f32[] = mul j 2.0:f32[]
          n:f32[] = mul l 2.0:f32[]
        in (i, m, k, n) }
      policy=None
      prevent_cse=True
    ] a b c d
  in (e, f, g, h) }"""

JVP_REMAT_INT_JAXPR = """{ lambda ; a:f32[]. let
    b:i32[] c:f32[] d:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; e:i32[] f:f32[] g:f32[]. let
          h:f32[] = mul f 2.0:f32[]
          i:f32[] = mul g 2.0:f32[]
        in (e, h, i) }
      policy=None
      prevent_cse=True
    ] 3:i32[] a 1.0:f32[]
  in (b, c, (b'',):float0[], d) }"""


def test_jvp_of_checkpoint_forwards_and_prints_as_jax():
  # JAX 0.10.2: ((TypedFloat(2.0), Array(6.)), (TypedFloat(1.0), Array(2.))), and with the
  # tangent 0.0 given for x, TypedFloat(0.0)
  (a, b), (ta, tb) = jax.jvp(_remat2, (2.0, 3.0), (1.0, 1.0))
  assert (type(a).__name__, type(ta).__name__, a, ta) == ("TypedFloat", "TypedFloat", 2.0, 1.0)
  assert float(b) == 6.0 and float(tb) == 2.0
  assert jax.jvp(_remat2, (2.0, 3.0), (0.0, 1.0))[1][0] == 0.0
  jvp = lambda x, y, tx, ty: jax.jvp(_remat2, (x, y), (tx, ty))
  assert str(jax.make_jaxpr(jvp)(2.0, 3.0, 1.0, 1.0)) == JVP_REMAT_JAXPR
  jvp_int = lambda y: jax.jvp(lambda y: _remat2(3, y), (y,), (1.0,))
  assert str(jax.make_jaxpr(jvp_int)(3.0)) == JVP_REMAT_INT_JAXPR
  lin = jax.make_jaxpr(lambda x, y: jax.linearize(_remat2, x, y)[1](1.0, 1.0))(2.0, 3.0)
  assert str(lin) == LINEARIZE_REMAT_JAXPR


# Recorded from JAX 0.10.2: linearize computes the known outputs inline and stages one
# differentiated call of what the tangents need (here the tangents alone).
LINEARIZE_REMAT_JAXPR = """{ lambda ; a:f32[] b:f32[]. let
    _:f32[] = mul b 2.0:f32[]
    c:f32[] d:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; e:f32[] f:f32[]. let
          g:f32[] = mul f 2.0:f32[]
        in (e, g) }
      policy=None
      prevent_cse=True
    ] 1.0:f32[] 1.0:f32[]
  in (c, d) }"""


# Recorded from JAX 0.10.2: the backward pass is a remat call of its own, which
# recomputes sin and cos from the input.
GRAD_REMAT_JAXPR = """{ lambda ; a:f32[]. let
    b:f32[] = sin a
    _:f32[] = mul b a
    c:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = cos d
          h:f32[] = mul f e
          i:f32[] = mul e d
          j:f32[] = mul i g
          k:f32[] = add_any h j
        in (k,) }
      policy=None
      prevent_cse=True
    ] a 1.0:f32[]
  in (c,) }"""


def test_grad_through_checkpoint_recomputes_from_the_inputs():
  f = jax.checkpoint(lambda x: jnp.sin(x) * x)
  assert str(jax.make_jaxpr(jax.grad(f))(2.0)) == GRAD_REMAT_JAXPR
  # d/dx sum(sin(x) * x) = cos(x) * x + sin(x), analytic
  x = jnp.array([0.5, 1.0, 2.0])
  np.testing.assert_allclose(jax.grad(lambda x: f(x).sum())(x),
                             np.cos(x) * x + np.sin(x), rtol=1e-6)
  for backend in ("numpy", "xla"):
    g = jax.jit(jax.grad(lambda x: f(x).sum()), backend=backend)(x)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-6)
  # second derivative 2 cos(x) - x sin(x); a checkpoint inside a checkpoint: the
  # derivative of x**2 sin(x) is 2x sin(x) + x**2 cos(x)
  np.testing.assert_allclose(jax.grad(jax.grad(f))(2.0), 2 * np.cos(2.) - 2 * np.sin(2.),
                             rtol=1e-6)
  nested = jax.checkpoint(lambda x: f(x) * x)
  np.testing.assert_allclose(jax.grad(nested)(2.0), 4 * np.sin(2.) + 4 * np.cos(2.),
                             rtol=1e-6)
  np.testing.assert_allclose(jax.vmap(jax.grad(f))(x), np.cos(x) * x + np.sin(x),
                             rtol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_checkpoint_forwarding_under_jit_and_vmap(backend):
  # JAX 0.10.2: Arrays under jit; vmap with x unbatched gives ([2., 2.], [0., 2.])
  (a, b), (ta, tb) = jax.jit(lambda x, y: jax.jvp(_remat2, (x, y), (1.0, 1.0)),
                             backend=backend)(2.0, 3.0)
  assert [float(v) for v in (a, b, ta, tb)] == [2.0, 6.0, 1.0, 2.0]
  a, b = jax.vmap(_remat2, in_axes=(None, 0))(2.0, jnp.arange(2.))
  np.testing.assert_array_equal(a, [2.0, 2.0])
  np.testing.assert_array_equal(b, [0.0, 2.0])
  g = jax.grad(lambda x, y: sum(_remat2(x, y)), argnums=(0, 1))(2.0, 3.0)
  assert [float(v) for v in g] == [1.0, 2.0]


# ----------------------------------------------------------------------------- linearize, vjp

def test_linearize_and_vjp_forward_inputs_as_given():
  # JAX 0.10.2: linearize gives 2.0 (the float), vjp TypedFloat(2.0); through a scan's
  # carry passed through too
  assert _kinds(jax.linearize(lambda x: x, 2.0)[0]) == ("float", 2.0)
  assert _kinds(jax.vjp(lambda x: x, 2.0)[0]) == ("TypedFloat", 2.0)
  primals, lin = jax.linearize(_scan2, 2.0, 3.0)
  assert _kinds(primals) == (("float", 2.0), ("Array", 24.0))
  assert [float(t) for t in lin(1.0, 1.0)] == [1.0, 8.0]
  primals, vjp = jax.vjp(_remat2, 2.0, 3.0)
  assert _kinds(primals) == (("TypedFloat", 2.0), ("Array", 6.0))
  assert [float(c) for c in vjp((1.0, 1.0))] == [1.0, 2.0]
  # JAX 0.10.2: linearize gives the NumPy value as given, vjp in the canonical dtype
  n = np.float64(2.0)
  assert jax.linearize(lambda x: x, n)[0] is n
  assert jax.vjp(lambda x: x, n)[0].dtype == np.float32
  # a custom_vjp's fwd still sees an array, not the float (equinox's filter_custom_vjp
  # partitions its outputs by that)
  seen = []
  f = jax.custom_vjp(lambda x: x)
  f.defvjp(lambda x: (seen.append(x) or x, None), lambda r, g: (g,))
  assert jax.vjp(f, 2.0)[0] == 2.0
  assert isinstance(seen[0], jax.Array)
  with pytest.raises(TypeError):
    jax.linearize(lambda x: x, "a")


# ----------------------------------------------------------------------------- derived jaxprs

def test_eager_loops_and_branches_reuse_their_compiled_bodies(monkeypatch):
  # the jaxprs derived from a traced body (forwarding, closure conversion, weak-type
  # promotion, cond's shared consts) are made once per traced body: run eagerly again, a
  # loop or branch finds tier 0's compiled body instead of compiling a new copy each call
  from jaxlite._src.backends.numpy import codegen
  compiles = []
  original = codegen.compile_jaxpr
  monkeypatch.setattr(codegen, "compile_jaxpr",
                      lambda *a, **k: compiles.append(1) or original(*a, **k))
  x, w = jnp.ones(3), jnp.arange(3.0)
  branch_a, branch_b = (lambda a, b: (a, b * w)), (lambda a, b: (a + 1, b * 3))
  body = lambda c, _: ((c[0], c[1] * w), None)
  promoted = lambda c, xi: (c + xi, None)
  loop_body, loop_cond = (lambda c: (c[0] * w, c[1] + 1)), (lambda c: c[1] < 3)
  calls = [lambda: lax.cond(True, branch_a, branch_b, x, x),
           lambda: lax.scan(body, (x, x), None, length=3),
           lambda: lax.scan(promoted, 0.0, jnp.ones(3)),
           lambda: lax.while_loop(loop_cond, loop_body, (x, 0))]
  for call in calls:
    first = call()
    compiles.clear()
    for _ in range(3):
      again = call()
    assert not compiles
    jax.tree.map(np.testing.assert_array_equal, again, first)


def test_jnp_array_of_a_jvp_input_is_an_array():
  # JAX 0.10.2: jnp.array and jnp.asarray of a traced Python float give Arrays
  # (Array(2., weak), Array(1., weak)); equinox's checkpointed while_loop reads .shape
  # of jnp.array's result under jvp
  for convert in (jnp.array, jnp.asarray):
    p, t = jax.jvp(convert, (2.0,), (1.0,))
    assert isinstance(p, jax.Array) and float(p) == 2.0 and p.weak_type
    assert isinstance(t, jax.Array) and float(t) == 1.0
  p, _ = jax.jvp(lambda x: jnp.array(x, copy=False), (2.0,), (1.0,))
  assert isinstance(p, jax.Array)


# Recorded from JAX 0.10.2 (the carry passed through, length 2): differentiated, each scan
# drops the const it no longer reads, so the transposed scan carries no cotangent for it.
LINEARIZE_SCAN_JAXPR = """{ lambda ; a:f32[] b:f32[]. let
    _:f32[] = scan[
      jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }
      length=2
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] b
    e:f32[] = scan[
      jaxpr={ lambda ; f:f32[]. let g:f32[] = mul f 2.0:f32[] in (g,) }
      length=2
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] 1.0:f32[]
  in (1.0:f32[], e) }"""

GRAD_SCAN_JAXPR = """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = scan[
      jaxpr={ lambda ; d:f32[]. let e:f32[] = mul d 2.0:f32[] in (e,) }
      length=2
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] b
    f:f32[] = add 0.0:f32[] a
    _:f32[] = add f c
    g:f32[] = scan[
      jaxpr={ lambda ; h:f32[]. let i:f32[] = mul h 2.0:f32[] in (i,) }
      length=2
      num_carry=1
      num_consts=0
      reverse=True
      unroll=1
    ] 1.0:f32[]
  in (1.0:f32[], g) }"""


def test_differentiated_scan_drops_unread_consts_as_jax():
  def f(x, y):
    return lax.scan(lambda c, _: ((c[0], c[1] * 2.), None), (x, y), None, length=2)[0]
  lin = lambda x, y: jax.linearize(f, x, y)[1](1.0, 1.0)
  assert str(jax.make_jaxpr(lin)(2.0, 3.0)) == LINEARIZE_SCAN_JAXPR
  grad = jax.grad(lambda x, y: sum(f(x, y)), argnums=(0, 1))
  assert str(jax.make_jaxpr(grad)(2.0, 3.0)) == GRAD_SCAN_JAXPR
  # JAX 0.10.2: vjp's cotangent for the carry passed through is the float given
  _, vjp = jax.vjp(f, 2.0, 3.0)
  ct_x, ct_y = vjp((1.0, 1.0))
  assert type(ct_x) is float and ct_x == 1.0 and float(ct_y) == 4.0
  for backend in ("numpy", "xla"):
    assert [float(g) for g in jax.jit(grad, backend=backend)(2.0, 3.0)] == [1.0, 4.0]


# Recorded from JAX 0.10.2: the residual that is the loop's const x goes to the linear
# scan as a const, not stacked once per iteration; only the carry is stacked.
LINEARIZE_FORI_JAXPR = """{ lambda ; a:f32[] b:f32[]. let
    _:i32[] _:f32[] c:f32[3] = scan[
      jaxpr={ lambda ; d:f32[] e:i32[] f:f32[]. let
          g:i32[] = add e 1:i32[]
          h:f32[] = mul f d
        in (g, h, f) }
      length=3
      num_carry=2
      num_consts=1
      reverse=False
      unroll=1
    ] a 0:i32[] b
    i:f32[] = scan[
      jaxpr={ lambda ; j:f32[] k:f32[] l:f32[] m:f32[]. let
          n:f32[] = mul l j
          o:f32[] = mul m k
          p:f32[] = add_any n o
        in (p,) }
      length=3
      num_carry=1
      num_consts=2
      reverse=False
      unroll=1
    ] a 1.0:f32[] 1.0:f32[] c
  in (1.0:f32[], i) }"""


def test_scan_residuals_forwarded_from_consts_and_xs_are_not_stacked():
  def h(x, y):
    return lax.fori_loop(0, 3, lambda i, c: (c[0], c[1] * c[0]), (x, y))
  lin = lambda x, y: jax.linearize(h, x, y)[1](1.0, 1.0)
  assert str(jax.make_jaxpr(lin)(2.0, 3.0)) == LINEARIZE_FORI_JAXPR
  # d(x**3 y) = 3 x**2 y dx + x**3 dy = 36 + 8 at (2, 3); reverse mode the same
  assert [float(t) for t in jax.linearize(h, 2.0, 3.0)[1](1.0, 1.0)] == [1.0, 44.0]
  assert [float(g) for g in jax.grad(lambda x, y: h(x, y)[1], argnums=(0, 1))(2.0, 3.0)] \
      == [36.0, 8.0]
  # a residual that is an x: sum(sin(xs) * c) differentiated in c and xs
  def k(c, xs):
    return lax.scan(lambda c, x: (c * jnp.sin(x), None), c, xs)[0]
  xs = jnp.array([0.5, 1.0])
  gc, gx = jax.grad(k, argnums=(0, 1))(2.0, xs)
  np.testing.assert_allclose(gc, np.sin(0.5) * np.sin(1.0), rtol=1e-6)
  np.testing.assert_allclose(gx, [2 * np.cos(0.5) * np.sin(1.0), 2 * np.sin(0.5) * np.cos(1.0)],
                             rtol=1e-6)
