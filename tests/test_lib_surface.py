"""The JAX surface that model libraries (numpyro, jaxopt, distrax/TFP, flax) need beyond
optax and chex: jax.scipy.{fft, sparse.linalg, optimize, stats.gaussian_kde}, the small
modules (custom_derivatives, monitoring, interpreters.xla, multihost_utils, ...), the JAX
version under the alias, ``python -m jaxlite -c`` and the alias in child interpreters.

Numbers are compared with SciPy and with JAX 0.10.2's, recorded in
tests/data/lib_surface_reference.json by tests/data/make_lib_surface_reference.py from the
cases in tests/data/lib_surface_cases.py.
"""
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import site
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import scipy.fft
import scipy.sparse.linalg
import scipy.stats

import jaxlite as jax
import jaxlite.numpy as jnp
import jaxlite.experimental.multihost_utils as multihost_utils
import jaxlite.scipy.fft as jfft
import jaxlite.scipy.optimize as jopt
import jaxlite.scipy.sparse.linalg as jsl
import jaxlite.scipy.stats as jstats

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data"))
import lib_surface_cases  # noqa: E402

REF = json.loads((ROOT / "tests" / "data" / "lib_surface_reference.json").read_text())


@pytest.fixture(scope="module")
def ours():
  return lib_surface_cases.run(jax)


def _same(got, want):
  """Recorded JSON against ours: strings, booleans and None exactly, numbers to float32
  rounding, lists of arrays of different shapes item by item."""
  if isinstance(want, dict):
    assert set(got) == set(want)
    for k in want:
      _same(got[k], want[k])
  elif isinstance(want, (str, bool, type(None))) or (
      isinstance(want, list) and any(isinstance(w, (str, bool)) for w in want)):
    assert got == want
  else:
    try:
      want_array = np.asarray(want, float)
    except ValueError:   # ragged: one array per item
      assert isinstance(got, list) and len(got) == len(want)
      for g, w in zip(got, want):
        _same(g, w)
      return
    np.testing.assert_allclose(np.asarray(got, float), want_array, rtol=2e-4, atol=2e-5)


def test_reference_is_jax_0_10_2():
  assert REF["jax_version"] == "0.10.2"


@pytest.mark.parametrize("case", sorted(REF["cases"]))
def test_matches_jax(ours, case):
  _same(ours[case], REF["cases"][case])


# -- jax.scipy.fft ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5,), (4,), (3, 6), (2, 3, 5)])
@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
def test_dct_matches_scipy(shape, norm):
  x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
  x64 = x.astype(np.float64)
  for n in [None, 3, 8]:
    np.testing.assert_allclose(jfft.dct(x, n=n, norm=norm), scipy.fft.dct(x64, n=n, norm=norm),
                               atol=2e-5 * np.abs(x).sum())
    np.testing.assert_allclose(jfft.idct(x, n=n, norm=norm),
                               scipy.fft.idct(x64, n=n, norm=norm), atol=1e-5 * x.size)
  np.testing.assert_allclose(jfft.dctn(x, norm=norm), scipy.fft.dctn(x64, norm=norm),
                             atol=1e-4 * x.size)
  np.testing.assert_allclose(jfft.idctn(jfft.dctn(x, norm=norm), norm=norm), x, atol=1e-5)


def test_dct_transforms():
  x = jnp.arange(6.0)
  assert jax.jit(jfft.dct)(x).shape == (6,)
  np.testing.assert_allclose(jax.vmap(jfft.idct)(jnp.ones((2, 4)))[1], jfft.idct(jnp.ones(4)))
  # the orthonormal DCT is orthogonal: its gradient of one output is that row
  row = jax.grad(lambda v: jfft.dct(v, norm="ortho")[2])(x)
  np.testing.assert_allclose(row, scipy.fft.dct(np.eye(6), norm="ortho", axis=0)[2],
                             atol=1e-6)


# -- jax.scipy.sparse.linalg ---------------------------------------------------------------

def _systems():
  rng = np.random.default_rng(1)
  n = 10
  B = rng.standard_normal((n, n))
  spd = (B @ B.T + n * np.eye(n)).astype(np.float32)
  gen = (B + n * np.eye(n)).astype(np.float32)
  return spd, gen, rng.standard_normal(n).astype(np.float32)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_solvers_match_scipy(name):
  spd, gen, b = _systems()
  A = spd if name == "cg" else gen
  ours, info = getattr(jsl, name)(lambda v: jnp.dot(A, v), b, tol=1e-6)
  theirs, their_info = getattr(scipy.sparse.linalg, name)(A.astype(np.float64), b, rtol=1e-6,
                                                          atol=0.0)
  assert their_info == 0 and (info is None if name != "gmres" else int(info) == 0)
  np.testing.assert_allclose(ours, theirs, atol=1e-5)
  np.testing.assert_allclose(A @ np.asarray(ours), b, atol=1e-4)


def test_solvers_under_jit_and_vmap():
  spd, gen, b = _systems()
  bs = np.stack([b, 2 * b, -b])
  for name, A in [("cg", spd), ("bicgstab", gen), ("gmres", gen)]:
    solve = getattr(jsl, name)
    xs = jax.jit(jax.vmap(lambda v: solve(A, v)[0]))(bs)
    np.testing.assert_allclose(xs, np.linalg.solve(A, bs.T).T, atol=1e-4)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres"])
def test_solvers_differentiate_implicitly(name):
  """Derivatives come from one more solve (custom_linear_solve), with respect to b and to
  what the matvec closes over: x = A^-1 b, so d(sum x)/db = A^-T 1 and
  d(sum x)/dA = -(A^-T 1) x^T."""
  spd, gen, b = _systems()
  A = spd if name == "cg" else gen
  solve = getattr(jsl, name)
  x = np.linalg.solve(A.astype(np.float64), b)
  w = np.linalg.solve(A.T.astype(np.float64), np.ones(len(b)))
  total = lambda v: solve(A, v)[0].sum()
  np.testing.assert_allclose(jax.grad(total)(b), w, atol=2e-5)
  np.testing.assert_allclose(jax.jit(jax.grad(total))(b), w, atol=2e-5)
  np.testing.assert_allclose(jax.vmap(jax.grad(total))(np.stack([b, -b])), [w, w], atol=2e-5)
  dA = jax.grad(lambda M: solve(lambda v: M @ v, b)[0].sum())(jnp.asarray(A))
  np.testing.assert_allclose(dA, -np.outer(w, x), atol=2e-5)
  _, t = jax.jvp(lambda v: solve(A, v)[0], (b,), (np.ones_like(b),))
  np.testing.assert_allclose(t, np.linalg.solve(A.astype(np.float64), np.ones(len(b))),
                             atol=2e-5)


def test_linear_call_transposes_with_the_given_function():
  cd = jax.custom_derivatives
  f = lambda x: cd.linear_call(lambda res, v: res * v, lambda res, ct: 10.0 * ct, 3.0, x)
  assert float(f(2.0)) == 6.0
  assert float(jax.jvp(f, (2.0,), (1.0,))[1]) == 3.0
  assert float(jax.grad(f)(2.0)) == 10.0   # the transpose given, not the callee's
  assert jax.vmap(jax.grad(f))(jnp.ones(3)).tolist() == [10.0, 10.0, 10.0]
  np.testing.assert_allclose(jax.linear_transpose(f, 1.0)(1.0), (10.0,))
  g = lambda x: cd.linear_call(lambda res, v: res * v, None, 3.0, x)
  with pytest.raises(TypeError, match="needs a transpose function"):
    jax.grad(g)(2.0)


def test_gmres_info_is_an_int_array():
  _, gen, b = _systems()
  _, info = jsl.gmres(gen, b)
  assert info.dtype == np.int32 and int(info) == 0


# -- jax.scipy.optimize ---------------------------------------------------------------------

def test_bfgs_finds_minimum_and_jits():
  def rosen(v):
    return jnp.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1 - v[:-1]) ** 2)
  r = jopt.minimize(rosen, jnp.zeros(4), method="BFGS")
  assert isinstance(r, jopt.OptimizeResults) and bool(r.success) and int(r.status) == 0
  np.testing.assert_allclose(r.x, np.ones(4), atol=1e-3)
  x = jax.jit(lambda x0: jopt.minimize(rosen, x0, method="BFGS").x)(jnp.array([0.5, 0.5]))
  np.testing.assert_allclose(x, np.ones(2), atol=1e-3)
  nits = jax.vmap(lambda x0: jopt.minimize(lambda v: jnp.sum((v - x0) ** 2), jnp.zeros(2),
                                           method="BFGS").nit)(jnp.eye(2))
  assert nits.tolist() == [2, 2]   # as JAX 0.10.2


def test_bfgs_in_float64_takes_jaxs_steps():
  """Every decision of the line search is JAX's: in float64 the iterates agree to 1e-10."""
  with jax.enable_x64():
    def rosen(v):
      return jnp.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1 - v[:-1]) ** 2)
    r = jopt.minimize(rosen, jnp.zeros(4, jnp.float64), method="BFGS")
    assert (int(r.nit), int(r.nfev), int(r.status)) == (33, 48, 0)   # JAX 0.10.2's
    r = jopt.minimize(rosen, jnp.zeros(4, jnp.float64), method="BFGS",
                      options={"maxiter": 5})
    np.testing.assert_allclose(r.x, [0.2397067055, 0.0434989399, 0.0067464738, 0.0065393706],
                               atol=1e-9)
    assert int(r.nfev) == 17


# -- jax.scipy.stats.gaussian_kde -----------------------------------------------------------

def test_gaussian_kde_matches_scipy():
  rng = np.random.default_rng(2)
  data = rng.standard_normal((2, 50))
  w = rng.uniform(0.5, 2.0, 50)
  pts = rng.standard_normal((2, 7))
  for bw in [None, "silverman", 0.3]:
    ours = jstats.gaussian_kde(data.astype(np.float32), bw_method=bw, weights=w)
    theirs = scipy.stats.gaussian_kde(data, bw_method=bw, weights=w)
    np.testing.assert_allclose(ours(pts.astype(np.float32)), theirs(pts), rtol=1e-4)
    np.testing.assert_allclose(ours.logpdf(pts.astype(np.float32)), theirs.logpdf(pts),
                               rtol=1e-4)
  one = jstats.gaussian_kde(data[0].astype(np.float32))
  np.testing.assert_allclose(one.integrate_box_1d(-0.5, 1.0),
                             scipy.stats.gaussian_kde(data[0]).integrate_box_1d(-0.5, 1.0),
                             rtol=1e-5)
  grads = jax.grad(lambda p: one.logpdf(p).sum())(jnp.zeros(3))
  assert grads.shape == (3,) and np.isfinite(np.asarray(grads)).all()


# -- the small modules ----------------------------------------------------------------------

def test_core_deprecated_names_warn_as_in_jax():
  jax.core.__getattr__.cache_clear()   # each name warns on its first read in the process
  with pytest.warns(DeprecationWarning, match="jax.core.valid_jaxtype is deprecated"):
    valid = jax.core.valid_jaxtype
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert jax.core.valid_jaxtype is valid   # and only then, as JAX's functools.cache does
  assert [valid(v) for v in [1, 1.5, np.ones(2), jnp.ones(2), np.float32(1)]] == [True] * 5
  assert [valid(v) for v in ["a", np.array(["a"]), None, [1], object()]] == [False] * 5
  with pytest.warns(DeprecationWarning, match="pytype_aval_mappings is deprecated"):
    table = jax.core.pytype_aval_mappings
  assert table[np.ndarray](np.ones((2, 3))) == jax.core.ShapedArray((2, 3), np.float32)
  with pytest.raises(AttributeError):
    jax.core.no_such_name


def test_interpreters_xla():
  from jaxlite.interpreters import xla
  handlers = xla.canonicalize_dtype_handlers
  assert handlers[np.ndarray](np.ones(2)).dtype == np.float32
  assert handlers[float](1.0).dtype == np.float32
  # Any other type gets the generic handler, as in JAX 0.10.2 (recorded: float32 [1., 1.]).
  other = handlers[type("Other", (), {})](np.ones(2))
  assert other.dtype == np.float32 and other.tolist() == [1.0, 1.0]
  assert float(xla.apply_primitive(jax.lax.add_p, 1.0, 2.0)) == 3.0
  assert jax.interpreters.xla is xla


def test_custom_jvp_symbolic_zeros():
  SymbolicZero = jax.custom_derivatives.SymbolicZero
  seen = []

  @jax.custom_jvp
  def f(x, y):
    return x * y

  def f_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    seen.append((type(dx) is SymbolicZero, type(dy) is SymbolicZero))
    terms = [t for t in [None if type(dx) is SymbolicZero else dx * y,
                         None if type(dy) is SymbolicZero else x * dy] if t is not None]
    return f(x, y), sum(terms) if terms else SymbolicZero(jax.typeof(x))
  f.defjvp(f_jvp, symbolic_zeros=True)
  assert float(jax.grad(f)(2.0, 3.0)) == 3.0 and float(jax.grad(f, 1)(2.0, 3.0)) == 2.0
  assert float(jax.jvp(f, (2.0, 3.0), (1.0, 1.0))[1]) == 5.0
  assert seen == [(False, True), (True, False), (False, False)]
  np.testing.assert_array_equal(jax.vmap(jax.grad(f))(jnp.arange(3.0), jnp.ones(3)), 1.0)


def test_custom_vjp_symbolic_zeros_and_primal_records():
  cd = jax.custom_derivatives
  perturbed = []

  @jax.custom_vjp
  def g(x, y):
    return jnp.sin(x) * y

  def g_fwd(x, y):
    assert type(x) is cd.CustomVJPPrimal
    perturbed.append((x.perturbed, y.perturbed))
    x, y = cd.custom_vjp_primal_tree_values((x, y))
    return g(x, y), (x, y)

  def g_bwd(res, ct):
    x, y = res
    return jnp.cos(x) * y * ct, cd.SymbolicZero(jax.typeof(y))
  g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)
  np.testing.assert_allclose(jax.grad(g)(1.0, 2.0), 2 * np.cos(1.0), rtol=1e-6)
  gx, gy = jax.grad(g, (0, 1))(1.0, 2.0)
  assert float(gy) == 0.0
  assert perturbed == [(True, False), (True, True)]
  with pytest.raises(TypeError, match="unexpected leaf type"):
    cd.custom_vjp_primal_tree_values((1.0,))


def test_custom_functions_run_python_outside_transformations():
  """jaxopt's Bisection branches on concrete values inside a custom_vjp function."""
  calls = []

  @jax.custom_vjp
  def h(x):
    calls.append(type(x))
    return x * 2 if x > 0 else -x   # Python control flow on the value
  h.defvjp(lambda x: (h(x), None), lambda _, g: (2 * g,))
  assert float(h(jnp.float32(3.0))) == 6.0 and float(h(-1.0)) == 1.0
  assert calls[1] is float   # the Python function ran on the value itself
  with pytest.raises(jax.errors.TracerBoolConversionError):
    jax.jit(h)(1.0)


def test_custom_gradient():
  @jax.custom_gradient
  def f(x, y):
    return x * y, lambda g: (g * y, 10 * g * x)
  gx, gy = jax.grad(f, (0, 1))(2.0, 3.0)
  assert (float(gx), float(gy)) == (3.0, 20.0)
  assert float(jax.jit(jax.grad(f))(2.0, 3.0)) == 3.0


def test_ensure_compile_time_eval_folds_constants_and_traces_tracers():
  def f(x):
    with jax.ensure_compile_time_eval():
      c = jnp.sin(2.0) * 3
      assert not isinstance(c, jax.core.Tracer)
      y = x * c
      big = bool(c > 0)   # concrete: Python may branch on it
    return y + big
  for fn in [jax.jit(f), jax.grad(f), f]:
    assert np.isfinite(float(fn(1.0)))
  np.testing.assert_allclose(jax.grad(f)(1.0), 3 * np.sin(2.0), rtol=1e-6)
  np.testing.assert_allclose(jax.vmap(f)(jnp.ones(2)), 3 * np.sin(2.0) + 1, rtol=1e-6)


def test_monitoring_listeners():
  mon = jax.monitoring
  seen = []
  listeners = [lambda e, **k: seen.append(("event", e, k)),
               lambda e, d, **k: seen.append(("duration", e, d, k)),
               lambda e, s, t, **k: seen.append(("span", e, s, t)),
               lambda e, v, **k: seen.append(("scalar", e, v))]
  registers = [mon.register_event_listener, mon.register_event_duration_secs_listener,
               mon.register_event_time_span_listener, mon.register_scalar_listener]
  for register, listener in zip(registers, listeners):
    register(listener)
  try:
    mon.record_event("/a", x=1)
    mon.record_event_duration_secs("/b", 0.5, y="z")
    mon.record_event_time_span("/c", 1.0, 2.0)
    mon.record_scalar("/d", 7)
    assert seen == [("event", "/a", {"x": 1}), ("duration", "/b", 0.5, {"y": "z"}),
                    ("span", "/c", 1.0, 2.0), ("scalar", "/d", 7)]
  finally:
    mon.unregister_event_listener(listeners[0])
    mon.unregister_event_duration_listener(listeners[1])
    mon.unregister_event_time_span_listener(listeners[2])
    mon.unregister_scalar_listener(listeners[3])
  with pytest.raises(AssertionError):
    mon.unregister_event_listener(listeners[0])


def test_jit_records_jax_compile_durations():
  # JAX 0.10.2 records, for jax.jit(lambda x: x * 2)(1.0): jaxpr_trace_duration with
  # fun_name '<lambda>', then backend_compile_duration with fun_name 'jit(<lambda>)'.
  seen = []
  listener = lambda event, duration, **kwargs: seen.append((event, kwargs, duration >= 0))
  jax.monitoring.register_event_duration_secs_listener(listener)
  try:
    jax.jit(lambda x: x * 2)(1.0)
  finally:
    jax.monitoring.unregister_event_duration_listener(listener)
  assert ("/jax/core/compile/jaxpr_trace_duration", {"fun_name": "<lambda>"}, True) in seen
  assert ("/jax/core/compile/backend_compile_duration", {"fun_name": "jit(<lambda>)"}, True) in seen


def test_tracers_take_weak_references():
  # As JAX's do under jit, vmap, grad and jvp (TFP's bijector cache holds them weakly).
  import weakref
  kinds = []
  def f(x):
    kinds.append(weakref.ref(x)() is x)
    return x
  jax.jit(f)(1.0), jax.vmap(f)(jnp.ones(2)), jax.grad(f)(1.0), jax.jvp(f, (1.0,), (1.0,))
  assert kinds == [True] * 4


def test_config_x64_enabled_reads_the_flag():
  # jaxopt's test_util reads jax.config.x64_enabled (JAX 0.10.2: a read-only property).
  assert jax.config.x64_enabled is jax.config.jax_enable_x64 is False
  with jax.enable_x64(True):
    assert jax.config.x64_enabled is True
  with pytest.raises(AttributeError):
    jax.config.x64_enabled = True


def test_config_flags_and_leak_context(monkeypatch):
  from jaxlite._src.base import config as config_module
  monkeypatch.setattr(config_module, "_absl_parsed", [False])
  monkeypatch.setattr(sys, "argv", ["prog", "--jax_debug_infs", "--jax_no_such=1", "--other",
                                    "--jax_default_prng_impl=rbg", "--", "--jax_debug_nans"])
  old = (jax.config.jax_debug_infs, jax.config.jax_default_prng_impl)
  try:
    jax.config.parse_flags_with_absl()
    assert jax.config.jax_debug_infs is True and jax.config.jax_default_prng_impl == "rbg"
    assert jax.config.jax_debug_nans is False
  finally:
    jax.config.update("jax_debug_infs", old[0])
    jax.config.update("jax_default_prng_impl", old[1])
  with jax.check_tracer_leaks():
    assert jax.config.jax_check_tracer_leaks is True
  assert jax.config.jax_check_tracer_leaks is False


# JAX 0.10.2's message for store.append(x) inside jit under check_tracer_leaks, up to the
# referrer lines (which hold object ids).
JAX_LEAK_JIT = ("Leaked trace DynamicJaxprTrace. Leaked tracer(s):\n\nJitTracer(~float32[])\n"
                "The error occurred while tracing the function <lambda> at ")


def test_check_tracer_leaks_names_tracers_that_outlive_jit_and_vmap():
  store = []
  with pytest.raises(Exception) as info:
    with jax.check_tracer_leaks():
      jax.jit(lambda x: store.append(x) or x * 2)(1.0)
  assert str(info.value).startswith(JAX_LEAK_JIT) and " for jit.\n" in str(info.value)
  assert "is referred to by <list" in str(info.value)
  store.clear()
  with pytest.raises(Exception, match=r"^Leaked trace BatchTrace. Leaked tracer\(s\):\n\n"
                                      r"VmapTracer\(aval=float32\[\], batched=float32\[2\]\)"):
    with jax.check_tracer_leaks():
      jax.vmap(lambda x: store.append(x) or x)(jnp.ones(2))
  store.clear()
  with jax.check_tracer_leaks():   # no tracer kept: no error, and none outside the flag
    assert jax.jit(lambda x: x * 2)(3.0) == 6.0
  assert jax.jit(lambda x: store.append(x) or x)(1.0) == 1.0


def test_shape_dtype_struct_keeps_sharding():
  mesh = jax.make_mesh((1,), ("x",))
  sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
  s = jax.ShapeDtypeStruct((2, 3), jnp.float32, sharding=sharding)
  assert s.sharding is sharding and s != jax.ShapeDtypeStruct((2, 3), jnp.float32)
  assert repr(s).startswith("ShapeDtypeStruct(shape=(2, 3), dtype=float32, sharding=Named")


def test_host_local_to_global_array_places_on_mesh():
  mh = multihost_utils
  mesh = jax.make_mesh((1,), ("x",))
  out = mh.host_local_array_to_global_array(np.arange(4.0), mesh, jax.sharding.PartitionSpec("x"))
  assert isinstance(out, jax.Array) and out.sharding.spec == jax.sharding.PartitionSpec("x")
  back = mh.global_array_to_host_local_array(out, mesh, jax.sharding.PartitionSpec("x"))
  np.testing.assert_array_equal(back, np.arange(4.0))
  with pytest.raises(ValueError, match="not a valid input to the pspecs"):
    mh.host_local_array_to_global_array(np.ones(2), mesh, None)


def test_create_device_mesh_lays_out_the_devices_as_jax_does_on_a_cpu():
  """JAX 0.10.2 on one CPU device: ``array([CpuDevice(id=0)], dtype=object)``, shape
  (1, 1) for (1, 1), and ValueError when the product is not the device count."""
  from jaxlite.experimental import mesh_utils
  out = mesh_utils.create_device_mesh((1,))
  assert out.dtype == object and out.shape == (1,) and out[0] == jax.devices()[0]
  assert mesh_utils.create_device_mesh([1, 1]).shape == (1, 1)
  assert jax.sharding.Mesh(mesh_utils.create_device_mesh((1,)), ("x",)).shape == {"x": 1}
  with pytest.raises(ValueError, match=r"Number of devices 1 must equal the product of mesh_shape \(2,\)"):
    mesh_utils.create_device_mesh((2,))
  with pytest.raises(ValueError, match="Number of devices 0 must equal"):
    mesh_utils.create_device_mesh((1,), devices=[])


def test_live_devices_needs_distributed_and_yields_every_device():
  mh = multihost_utils
  with pytest.raises(RuntimeError, match="^Distributed JAX not initialized.$"):   # JAX's
    with mh.live_devices(jax.devices()):
      pass
  jax.distributed.initialize()
  try:
    with pytest.raises(ValueError, match="No devices provided"):
      with mh.live_devices([]):
        pass
    with mh.live_devices(jax.devices()[::-1]) as devices:
      assert devices == sorted(jax.devices(), key=lambda d: d.id)
    with pytest.raises(KeyError):   # the block's own exception, unchanged
      with mh.live_devices(jax.devices()):
        raise KeyError("x")
  finally:
    jax.distributed.shutdown()
  error = mh.ProcessFailureError({"d"})
  assert str(error) == "Devices failed: {'d'}" and error.failed_devices == {"d"}


def test_bcoo_from_scipy_and_matmul():
  import scipy.sparse
  from jaxlite.experimental.sparse import BCOO
  dense = np.array([[0, 2.0, 0], [1.0, 0, 3.0]], np.float32)
  m = BCOO.from_scipy_sparse(scipy.sparse.csr_matrix(dense))
  np.testing.assert_array_equal(m.todense(), dense)
  v = np.array([1.0, 2.0, 3.0], np.float32)
  np.testing.assert_array_equal(m @ v, dense @ v)
  np.testing.assert_array_equal(m.T.todense(), dense.T)
  np.testing.assert_array_equal(jax.jit(lambda a, x: a @ x)(m, v), dense @ v)
  np.testing.assert_array_equal(BCOO.fromdense(dense).todense(), dense)


def test_bcoo_matmul_broadcasts_batch_axes_as_jnp_matmul():
  # numpyro's CAR log_prob: a sparse (n, n) matrix times a (batch, n, 1) stack of vectors.
  # np.matmul of the dense matrix is the oracle (JAX 0.10.2's BCOO gives the same shapes).
  from jaxlite.experimental.sparse import BCOO
  dense = np.array([[0, 1.0, 0], [1.0, 0, 2.0], [0, 3.0, 0]], np.float32)
  m = BCOO.fromdense(dense)
  x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
  for other in (x, x[:1, None], x[..., :1], x[0, :, 0]):
    np.testing.assert_array_equal(m @ other, dense @ other)
    left = np.swapaxes(other, -1, -2) if other.ndim > 1 else other
    np.testing.assert_array_equal(jnp.asarray(left) @ m, left @ dense)
  # JAX 0.10.2's errors for mismatched or scalar operands
  with pytest.raises(TypeError, match=r"contracting dimensions .* got \(3,\) and \(4,\)"):
    m @ jnp.ones((2, 4, 1))
  with pytest.raises(TypeError, match=r"contracting dimensions .* got \(4,\) and \(3,\)"):
    jnp.ones((2, 4)) @ m
  with pytest.raises(ValueError, match="operand 1 must have ndim at least 1"):
    m @ jnp.float32(2)


# -- the alias: version, -c, child interpreters -----------------------------------------------

def run_python(args, cwd, env=None, timeout=300):
  env = dict(os.environ if env is None else env, PYTHONPATH=str(ROOT))
  return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                        text=True, timeout=timeout)


def test_submodules_jax_imports_are_attributes_after_import_jax(tmp_path):
  # In JAX 0.10.2, `import jax` alone makes jax.scipy, jax.experimental, jax.api_util usable.
  # And `import jax.extend` imports jax.extend.core.primitives (distrax reads jit_p there).
  code = ("import sys, jax\nprint(float(jax.scipy.special.gammaln(3.0)), "
          "jax.experimental.__name__, jax.api_util.__name__, hasattr(jax, 'nope'))\n"
          "import jax.extend as jex\nprint(jex.core.primitives.jit_p)")
  out = run_python(["-m", "jaxlite", "-c", code], tmp_path)
  assert out.returncode == 0, out.stderr
  assert out.stdout.split() == ["0.6931471824645996", "jaxlite.experimental", "jaxlite.api_util",
                                "False", "jit"]


def test_version_under_the_alias_and_dash_c(tmp_path):
  code = ("import sys, jax, jaxlite; import jax.version, jax.lib\n"
          "print(jax.__version__, jax.__version_info__, jax.version.__version__,"
          " jax.lib.__version__,"
          " jaxlite.__version__ == jaxlite._src.base.version.__version__, sys.argv, __name__,"
          " jax.numpy is jaxlite.numpy, jax.jit is jaxlite.jit)")
  out = run_python(["-m", "jaxlite", "-c", code, "a", "-b"], tmp_path)
  assert out.returncode == 0, out.stderr
  # jax.lib.__version__ is jaxlib's version in JAX (0.10.2 beside jax 0.10.2)
  assert out.stdout.split() == ["0.10.2", "(0,", "10,", "2)", "0.10.2", "0.10.2", "True",
                                "['-c',", "'a',", "'-b']", "__main__", "True", "True"]
  assert run_python(["-m", "jaxlite", "-c", "raise SystemExit(4)"], tmp_path).returncode == 4
  assert run_python(["-m", "jaxlite", "-c"], tmp_path).returncode == 2


def test_jax_module_reads_through_to_jaxlite(tmp_path):
  code = textwrap.dedent("""
      import jax, jaxlite
      jax.jit = "patched"          # a program's assignment changes jax, not jaxlite
      print(jax.jit, jaxlite.jit.__name__, jax.__name__, "numpy" in dir(jax))
      del jax.jit
      print(jax.jit is jaxlite.jit, jax._src.xla_bridge.__name__, jaxlite._src.core.core.__name__)
      import jax._src.core
      print(jax._src.core.trace_state_clean(), jaxlite._src.core.core.__name__)
      """)
  out = run_python(["-m", "jaxlite", "-c", code], tmp_path)
  assert out.returncode == 0, out.stderr
  assert out.stdout.splitlines() == [
      "patched jit jax True", "True jaxlite._src.xla_bridge jaxlite._src.core.core",
      "True jaxlite._src.core.core"]


def _hook_installed():
  """The startup file is in this interpreter's site-packages (a fresh install of this
  checkout puts it there; an environment installed before it was added lacks it)."""
  dirs = site.getsitepackages() + [site.getusersitepackages()]
  return any(os.path.exists(os.path.join(d, "jaxlite-as-jax.pth")) for d in dirs)


needs_hook = pytest.mark.skipif(
    not _hook_installed() and not os.environ.get("CI"),
    reason="jaxlite-as-jax.pth is not installed in this environment: reinstall jaxlite "
           "(pip install -e .) to test the alias in child interpreters")

CHILDREN = textwrap.dedent("""
    import multiprocessing, os, subprocess, sys

    def child(q):
        import jax
        q.put(type(jax).__name__ + " " + jax.__version__)

    if __name__ == "__main__":
        import jax
        q = multiprocessing.get_context("spawn").Queue()
        p = multiprocessing.get_context("spawn").Process(target=child, args=(q,))
        p.start(); print("spawn", q.get()); p.join()
        code = "import jax; print(type(jax).__name__, jax.__version__)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        print("subprocess", out.stdout.strip() or out.stderr.strip().splitlines()[-1])
        env = dict(os.environ, JAXLITE_AS_JAX="0")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env)
        print("off", out.stdout.strip() or out.stderr.strip().splitlines()[-1])
    """)


def _real_jax_installed():
  """Whether ``import jax`` without the alias finds the real jax (the test extra's model
  libraries pull it in; jaxlite never imports it)."""
  try:
    importlib.metadata.distribution("jax")
  except importlib.metadata.PackageNotFoundError:
    return False
  return True


@needs_hook
def test_children_see_jaxlite_as_jax(tmp_path):
  (tmp_path / "parent.py").write_text(CHILDREN)
  env = {k: v for k, v in os.environ.items() if k != "JAXLITE_AS_JAX"}
  out = run_python(["-m", "jaxlite", "parent.py"], tmp_path, env=env)
  assert out.returncode == 0, out.stderr
  lines = out.stdout.splitlines()
  assert lines[:2] == ["spawn JaxModule 0.10.2", "subprocess JaxModule 0.10.2"], out.stdout
  # with the alias off a child gets whatever ``jax`` is installed: the real one, or none
  if _real_jax_installed():
    assert lines[2].startswith("off module "), out.stdout
  else:
    assert lines[2] == "off ModuleNotFoundError: No module named 'jax'"
  # install_as_jax() in-process passes it on too
  code = ("import subprocess, sys, jaxlite; jaxlite.install_as_jax()\n"
          "print(subprocess.run([sys.executable, '-c', 'import jax; print(jax.__version__)'],"
          " capture_output=True, text=True).stdout.strip())")
  out = run_python(["-c", code], tmp_path, env=env)
  assert out.stdout.strip() == "0.10.2", out.stderr
  # without it, a child of a plain program does not get jaxlite
  out = run_python(["-c", "import jax; print(type(jax).__name__)"], tmp_path, env=env)
  if _real_jax_installed():
    assert out.stdout.strip() == "module", out.stderr
  else:
    assert "No module named 'jax'" in out.stderr


@needs_hook
def test_pytest_xdist_workers_see_jaxlite(tmp_path):
  (tmp_path / "test_in_worker.py").write_text(textwrap.dedent("""
      import os, jax
      def test_one():
          assert os.environ.get("PYTEST_XDIST_WORKER") and type(jax).__name__ == "JaxModule"
      def test_two():
          import jax.numpy as jnp
          assert float(jnp.ones(3).sum()) == 3.0 and jax.__version__ == "0.10.2"
      """))
  env = {k: v for k, v in os.environ.items() if k != "JAXLITE_AS_JAX"}
  out = run_python(["-m", "jaxlite", "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider",
                    "test_in_worker.py"], tmp_path, env=env)
  assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
  assert "2 passed" in out.stdout


def test_child_refuses_when_real_jax_already_imported(tmp_path):
  """The startup hook refuses, as install_as_jax does, when jax is already imported."""
  code = textwrap.dedent("""
      import sys, types
      sys.modules["jax"] = types.ModuleType("jax")   # as if an earlier startup file imported it
      import _jaxlite_as_jax
      try:
          _jaxlite_as_jax.startup()
      except ImportError as e:
          print("refused:", e)
      """)
  out = run_python(["-c", code], tmp_path)
  assert "refused: The real jax is already imported (jax)" in out.stdout, out.stderr


def test_startup_hook_does_nothing_without_the_variable(tmp_path):
  code = ("import os, sys; os.environ.pop('JAXLITE_AS_JAX', None)\n"
          "line = open(sys.argv[1]).read()\n"
          "exec(line)\n"
          "print(any(type(f).__module__ == '_jaxlite_as_jax' for f in sys.meta_path),"
          " 'jaxlite' in sys.modules)\n"
          "os.environ['JAXLITE_AS_JAX'] = '1'; exec(line)\n"
          "print(any(type(f).__module__ == '_jaxlite_as_jax' for f in sys.meta_path),"
          " 'jaxlite' in sys.modules)\n"
          "import jax; print(type(jax).__name__)")
  env = {k: v for k, v in os.environ.items() if k != "JAXLITE_AS_JAX"}
  out = run_python(["-c", code, str(ROOT / "jaxlite-as-jax.pth")], tmp_path, env=env)
  assert out.stdout.split() == ["False", "False", "True", "False", "JaxModule"], out.stderr


def test_private_modules_flax_and_equinox_import(tmp_path):
  code = textwrap.dedent("""
      import sys
      import jax, jax.extend.source_info_util, numpy as np
      from jax._src import traceback_util, dispatch, dtypes, core
      traceback_util.register_exclusion("/nowhere/lib")
      print(traceback_util.include_frame(sys._getframe()), traceback_util._exclude_paths[-1])
      print(traceback_util.api_boundary(len)([1, 2]), dispatch.wait_for_tokens())
      print(issubclass(dtypes.TypePromotionError, ValueError), dtypes.DType is np.dtype)
      print(core.ShapedArray is jax.core.ShapedArray, core.trace_state_clean())
      class Meta(dtypes.extended): pass
      class MetaDType(dtypes.ExtendedDType):
        type = Meta
        _rules = object
      print(MetaDType().type is Meta, jax.extend.source_info_util.register_exclusion)
      """)
  out = run_python(["-m", "jaxlite", "-c", code], tmp_path)
  assert out.returncode == 0, out.stderr
  lines = out.stdout.splitlines()
  assert lines[:4] == ["True /nowhere/lib", "2 None", "True True", "True True"]
  assert lines[4].startswith("True <function register_exclusion")


def test_layout_format_as_jax_prints_it():
  from jaxlite.experimental.layout import Format, Layout, with_layout_constraint
  # JAX 0.10.2's reprs, recorded
  assert repr(Format()) == "Format(layout=None, sharding=None)"
  assert repr(Layout((0, 1))) == ("Layout(major_to_minor=(0, 1), tiling=None, "
                                  "sub_byte_element_size_in_bits=0)")
  assert Format() == Format(None, None) and hash(Format()) == hash(Format())
  x = jnp.ones((2, 3))
  assert with_layout_constraint(x, Layout((0, 1))) is x
  # another order lays it out so (JAX 0.10.2's format; tests/test_layout.py has more)
  y = with_layout_constraint(x, Layout((1, 0)))
  assert repr(y.format.layout) == ("Layout(major_to_minor=(1, 0), tiling=(), "
                                   "sub_byte_element_size_in_bits=0)")
  np.testing.assert_array_equal(np.asarray(y), np.ones((2, 3)))


def test_delta_orthogonal_initializer():
  init = jax.nn.initializers.delta_orthogonal()
  w = np.asarray(init(jax.random.PRNGKey(0), (3, 3, 2, 4)))
  centre = w[1, 1]
  np.testing.assert_allclose(centre @ centre.T, np.eye(2), atol=1e-5)
  assert np.count_nonzero(w) == np.count_nonzero(centre) and w.dtype == np.float32
  # JAX 0.10.2: the same key gives a kernel whose absolute values sum to 3.374744176864624
  np.testing.assert_allclose(np.abs(w).sum(), 3.374744176864624, rtol=1e-5)
  for shape, message in [((3, 4, 2), "fan_in"), ((3, 5), "3D, 4D or 5D"),
                         ((3, 3, 4, 2), "fan_in")]:
    with pytest.raises(ValueError, match=message):
      init(jax.random.PRNGKey(1), shape)
  assert init(jax.random.PRNGKey(1), (2, 2, 3, 3)).shape == (2, 2, 3, 3)
