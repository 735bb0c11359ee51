"""jaxlite.scipy.ndimage.map_coordinates, jaxlite.scipy.integrate.trapezoid,
jaxlite.scipy.interpolate.RegularGridInterpolator and jaxlite.scipy.cluster.vq.vq against
SciPy, with values recorded from JAX 0.10.2 where JAX differs from SciPy."""
import inspect

import numpy as np
import pytest
import scipy.cluster.vq as scv
import scipy.integrate as si
import scipy.interpolate as sip
import scipy.ndimage as snd

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy as jsp
from jaxlite._src import tiers
from jaxlite._src.test_util import check_grads
from jaxlite.scipy.cluster.vq import vq
from jaxlite.scipy.integrate import trapezoid
from jaxlite.scipy.interpolate import RegularGridInterpolator
from jaxlite.scipy.ndimage import map_coordinates

RNG = np.random.RandomState(0)


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request, x64):
  x64(request.param == np.float64)
  return request.param


def _tol(dtype):
  return dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


def test_modules_and_signatures_match_jax():
  # parameter names and defaults, from inspect.signature under JAX 0.10.2
  def params(f):
    return [(p.name, None if p.default is inspect.Parameter.empty else p.default)
            for p in inspect.signature(f).parameters.values()]
  assert params(map_coordinates) == [("input", None), ("coordinates", None), ("order", None),
                                     ("mode", "constant"), ("cval", 0.0)]
  assert params(trapezoid) == [("y", None), ("x", None), ("dx", 1.0), ("axis", -1)]
  assert params(vq) == [("obs", None), ("code_book", None), ("check_finite", True)]
  init = params(RegularGridInterpolator)
  assert init[:4] == [("points", None), ("values", None), ("method", "linear"),
                      ("bounds_error", False)]
  assert init[4][0] == "fill_value" and np.isnan(init[4][1])
  assert params(RegularGridInterpolator.__call__) == [("self", None), ("xi", None),
                                                      ("method", None)]
  assert jsp.cluster.vq.vq is vq and jsp.ndimage.map_coordinates is map_coordinates
  assert jsp.integrate.trapezoid is trapezoid and jsp.signal.welch is not None
  assert {"cluster", "integrate", "interpolate", "ndimage", "signal"} <= set(dir(jsp))


# ----------------------------------------------------------------------------- map_coordinates

COORDS = np.array([-3.3, -1.5, -0.5, 0.2, 4.5, 5.5, 7.2, 11.0])
# recorded from JAX 0.10.2: map_coordinates(jnp.arange(5.), [COORDS], order, mode)
JAX_MODES = {
    (0, "constant"): [0, 0, 0, 0, 0, 0, 0, 0],
    (0, "nearest"): [0, 0, 0, 0, 4, 4, 4, 4],
    (0, "wrap"): [2, 3, 4, 0, 0, 1, 2, 1],
    (0, "mirror"): [3, 2, 1, 0, 3, 2, 1, 3],
    (0, "reflect"): [2, 1, 0, 0, 4, 3, 2, 1],
    (1, "constant"): [0, 0, 0, 0.2, 2, 0, 0, 0],
    (1, "nearest"): [0, 0, 0, 0.2, 4, 4, 4, 4],
    (1, "wrap"): [1.7, 3.5, 2, 0.2, 2, 0.5, 2.2, 1],
    (1, "mirror"): [3.3, 1.5, 0.5, 0.2, 3.5, 2.5, 0.8, 3],
    (1, "reflect"): [2.3, 0.5, 0, 0.2, 4, 3.5, 1.8, 1],
}


@pytest.mark.parametrize("order,mode", sorted(JAX_MODES))
def test_map_coordinates_modes_as_jax(order, mode):
  out = map_coordinates(jnp.arange(5.0), [COORDS], order=order, mode=mode)
  assert out.dtype == np.float32
  np.testing.assert_allclose(out, JAX_MODES[order, mode], atol=1e-5)


# JAX's 'constant' and 'wrap' are SciPy's 'grid-constant' and 'grid-wrap' (jax-ml/jax#11097)
SCIPY_MODE = {"constant": "grid-constant", "wrap": "grid-wrap", "nearest": "nearest",
              "mirror": "mirror", "reflect": "reflect"}


@pytest.mark.parametrize("mode", sorted(SCIPY_MODE))
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_matches_scipy(order, mode, dtype):
  img = RNG.randn(5, 7).astype(dtype)
  # avoid exact half-integers, where rounding conventions differ
  coords = [RNG.uniform(-7, 12, (3, 4)).astype(dtype) + 0.01,
            RNG.uniform(-9, 16, (3, 4)).astype(dtype) + 0.01]
  got = map_coordinates(img, coords, order=order, mode=mode, cval=1.5)
  want = snd.map_coordinates(img, np.stack(coords), order=order, mode=SCIPY_MODE[mode],
                             cval=1.5)
  assert got.dtype == dtype and got.shape == (3, 4)
  np.testing.assert_allclose(got, want, **_tol(dtype))


def test_map_coordinates_integer_list_and_cval_inputs():
  # recorded from JAX 0.10.2: integer inputs round half away from zero
  coords = [jnp.array([0.5, 1.5, 2.5, -0.5, 3.7])]
  for order in (0, 1):
    out = map_coordinates(jnp.arange(5), coords, order=order)
    assert out.dtype == np.int32 and out.tolist() == [1, 2, 3, 0, 4]
  assert map_coordinates(jnp.arange(5.0), [jnp.array([1, 2])], order=1).tolist() == [1, 2]
  assert map_coordinates([1.0, 2.0, 3.0], [[0.5]], order=1).tolist() == [1.5]
  assert map_coordinates(jnp.arange(5.0), [jnp.array([-1.0, 2.0])], order=1,
                         cval=7.0).tolist() == [7, 2]
  img = jnp.arange(12.0).reshape(3, 4)
  out = map_coordinates(img, [jnp.array([0.5, 1.5]), jnp.array([1.5, 2.5])], order=1)
  np.testing.assert_allclose(out, [3.5, 8.5])   # JAX 0.10.2's docstring example


@pytest.mark.parametrize("call,cls,message", [
    (lambda: map_coordinates(jnp.ones(5), [jnp.ones(2)], order=2), NotImplementedError,
     "jax.scipy.ndimage.map_coordinates currently requires order<=1"),
    (lambda: map_coordinates(jnp.ones(5), [jnp.ones(2)], order=1, mode="grid-wrap"),
     NotImplementedError,
     "jax.scipy.ndimage.map_coordinates does not yet support mode grid-wrap. Currently "
     "supported modes are"),
    (lambda: map_coordinates(jnp.ones(5), [jnp.ones(2)] * 2, order=1), ValueError,
     r"coordinates must be a sequence of length input.ndim, but 2 != 1"),
])
def test_map_coordinates_errors(call, cls, message):
  with pytest.raises(cls, match=message):
    call()


def test_map_coordinates_transforms(x64):
  x64(True)
  img = RNG.randn(4, 5)
  f = lambda c, v: map_coordinates(v, [c, 2 * c - 1], order=1, mode="reflect")
  c = np.array([0.3, 1.7, 2.2, 4.6])
  check_grads(f, (c, img), order=1)
  batched = jaxlite.vmap(f, in_axes=(0, None))(np.stack([c, c + 0.4]), img)
  np.testing.assert_allclose(batched, [f(c, img), f(c + 0.4, img)], rtol=1e-12)
  runs = [jaxlite.jit(f, backend="numpy")]
  if tiers.xla_available():
    runs.append(jaxlite.jit(f, backend="xla"))
  for run in runs:
    np.testing.assert_allclose(run(c, img), f(c, img), rtol=1e-12)


# ----------------------------------------------------------------------------- trapezoid

def test_trapezoid_matches_scipy(dtype):
  y = RNG.randn(3, 6).astype(dtype)
  x = np.sort(RNG.rand(6)).astype(dtype)
  for kw in ({}, {"dx": 0.5}, {"axis": 0}, {"x": x}, {"x": np.tile(x, (3, 1))}):
    got = trapezoid(y, **kw)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, si.trapezoid(y, **kw), **_tol(dtype))
  # an N-d x is differenced along its own axis and broadcast against y's
  y3, x2 = RNG.randn(2, 3, 10).astype(dtype), RNG.randn(3, 10).astype(dtype)
  np.testing.assert_allclose(trapezoid(y3, x2, axis=-2), si.trapezoid(y3, x2, axis=-2),
                             **_tol(dtype))
  np.testing.assert_allclose(jnp.trapezoid(y3, x2, axis=-2), si.trapezoid(y3, x2, axis=-2),
                             **_tol(dtype))
  assert trapezoid(jnp.array([1, 2, 4])).tolist() == 4.5
  with pytest.raises(TypeError, match="trapezoid requires ndarray or scalar arguments"):
    trapezoid([1, 2, 4])
  grad = jaxlite.grad(lambda y: trapezoid(y, dx=2.0))(jnp.ones(4))
  np.testing.assert_allclose(grad, [1, 2, 2, 1])


# ------------------------------------------------------------------ RegularGridInterpolator

def _grid(dtype, trailing=()):
  points = (np.array([0.0, 0.5, 1.5, 3.0], dtype), np.array([-1.0, 0.0, 2.0], dtype))
  values = RNG.randn(4, 3, *trailing).astype(dtype)
  xi = np.stack([RNG.uniform(-0.5, 3.5, 7), RNG.uniform(-1.5, 2.5, 7)], -1).astype(dtype)
  return points, values, xi


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, None, -2.0])
def test_regular_grid_interpolator_matches_scipy(method, fill_value, dtype):
  points, values, xi = _grid(dtype, trailing=(2,))
  got = RegularGridInterpolator(points, values, method=method, fill_value=fill_value)(xi)
  want = sip.RegularGridInterpolator(points, values, method=method, bounds_error=False,
                                     fill_value=fill_value)(xi)
  assert got.dtype == dtype and got.shape == (7, 2)
  np.testing.assert_allclose(got, want, **_tol(dtype))
  interp = RegularGridInterpolator(points, values[..., 0], method="nearest")
  np.testing.assert_allclose(interp((xi[:, 0], xi[:, 1]), method=method),
                             sip.RegularGridInterpolator(points, values[..., 0],
                                                         bounds_error=False)(xi, method=method),
                             **_tol(dtype))


def test_regular_grid_interpolator_example_and_errors():
  # recorded from JAX 0.10.2 (RegularGridInterpolator's docstring example)
  points = (jnp.array([1, 2, 3]), jnp.array([4, 5, 6]))
  values = jnp.array([[10, 20, 30], [40, 50, 60], [70, 80, 90]])
  out = RegularGridInterpolator(points, values)(jnp.array([[1.5, 4.5], [2.2, 5.8]]))
  assert out.dtype == np.float32
  np.testing.assert_allclose(out, [30.0, 64.0], rtol=1e-6)
  with pytest.raises(ValueError, match="method 'cubic' is not defined"):
    RegularGridInterpolator(points, values, method="cubic")
  with pytest.raises(NotImplementedError, match="`bounds_error` takes no effect under JIT"):
    RegularGridInterpolator(points, values, bounds_error=True)
  with pytest.raises(ValueError, match="there are 3 point arrays, but values has 2 dimensions"):
    RegularGridInterpolator(points + points[:1], values)
  with pytest.raises(ValueError, match="fill_value must be either 'None' or of a type"):
    RegularGridInterpolator(points, values, fill_value=1j)
  with pytest.raises(ValueError, match="the requested sample points xi have dimension 3"):
    RegularGridInterpolator(points, values)(jnp.ones((2, 3)))
  with pytest.raises(ValueError, match="method 'x' is not defined"):
    RegularGridInterpolator(points, values)(jnp.ones((2, 2)), method="x")


def test_regular_grid_interpolator_is_a_pytree(x64):
  x64(True)
  points, values, xi = _grid(np.float64)
  interp = RegularGridInterpolator(points, values)
  leaves = jaxlite.tree_util.tree_leaves(interp)
  assert len(leaves) == 4   # two grid axes, the values, the fill value
  np.testing.assert_allclose(jaxlite.jit(lambda i, x: i(x), backend="numpy")(interp, xi),
                             interp(xi), rtol=1e-12)
  stacked = np.stack([values, 2 * values])
  batched = jaxlite.vmap(lambda v: RegularGridInterpolator(points, v)(xi))(stacked)
  np.testing.assert_allclose(batched, [interp(xi), 2 * interp(xi)], rtol=1e-12)
  inside = xi[(xi[:, 0] > 0) & (xi[:, 0] < 3) & (xi[:, 1] > -1) & (xi[:, 1] < 2)]
  check_grads(lambda v, x: RegularGridInterpolator(points, v)(x), (values, inside), order=1)


# ----------------------------------------------------------------------------- vq

def test_vq_matches_scipy(dtype):
  obs = RNG.randn(9, 3).astype(dtype)
  book = RNG.randn(4, 3).astype(dtype)
  code, dist = vq(obs, book)
  want_code, want_dist = scv.vq(obs, book)
  assert code.dtype == jnp.argmin(jnp.ones(2)).dtype and dist.dtype == dtype
  np.testing.assert_array_equal(code, want_code)
  np.testing.assert_allclose(dist, want_dist, **_tol(dtype))
  code, dist = vq(obs[:, 0], book[:, 0])
  np.testing.assert_array_equal(code, scv.vq(obs[:, 0], book[:, 0])[0])


def test_vq_values_errors_and_transforms():
  # recorded from JAX 0.10.2
  code, dist = vq(jnp.array([[1, 2], [5, 5]]), jnp.array([[0, 0], [4, 4]]))
  assert code.tolist() == [0, 1] and dist.dtype == np.float32
  np.testing.assert_allclose(dist, [2.236068, 1.4142135], rtol=1e-6)
  assert vq(jnp.array([2.0]), jnp.array([1.0, 3.0]))[0].tolist() == [0]   # first of equals
  with pytest.raises(ValueError, match="Observation and code_book should have the same rank"):
    vq(jnp.ones((2, 2)), jnp.ones(2))
  with pytest.raises(ValueError, match="ndim different than 1 or 2 are not supported"):
    vq(jnp.ones((2, 2, 2)), jnp.ones((2, 2, 2)))
  with pytest.raises(TypeError, match="scipy.cluster.vq.vq requires ndarray"):
    vq([1.0, 2.0], [0.0])
  book = jnp.array([[1.0, 1.0], [2.0, 2.0]])
  obs = jnp.array([[[0.3, 1.2], [2.5, 1.1]], [[3.0, 3.0], [1.0, 0.9]]])
  batched = jaxlite.vmap(lambda o: vq(o, book))(obs)
  for b, o in zip(zip(*batched), obs):
    for got, want in zip(b, vq(o, book)):
      np.testing.assert_allclose(got, want)
  grad = jaxlite.grad(lambda o: vq(o, book)[1].sum())(jnp.array([[0.0, 1.0]]))
  np.testing.assert_allclose(grad, [[-1.0, 0.0]])
