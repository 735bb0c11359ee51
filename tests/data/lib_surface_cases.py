"""Cases of jax.scipy.{fft, sparse.linalg, optimize, stats.gaussian_kde} and of the library
surface (multihost_utils, ShapeDtypeStruct, custom_derivatives), run the same way on JAX
0.10.2 (make_lib_surface_reference.py records them in lib_surface_reference.json) and on
jaxlite (tests/test_lib_surface.py compares).

``run(jax)`` takes the ``jax`` module (jaxlite as itself in the tests) and returns a dict
of JSON values: lists of floats for arrays, [class name, message] for errors.
"""
import importlib

import numpy as np


def _inputs():
  rng = np.random.default_rng(7)
  x = rng.standard_normal((3, 5)).astype(np.float32)
  n = 6
  B = rng.standard_normal((n, n)).astype(np.float32)
  spd = (B @ B.T + n * np.eye(n)).astype(np.float32)
  gen = (B + n * np.eye(n)).astype(np.float32)
  b = rng.standard_normal(n).astype(np.float32)
  data1 = rng.standard_normal(40).astype(np.float32)
  data2 = rng.standard_normal((2, 30)).astype(np.float32)
  weights = rng.uniform(0.5, 1.5, 30).astype(np.float32)
  return x, spd, gen, b, data1, data2, weights


def _list(x):
  return np.asarray(x, dtype=np.float64).tolist()


def error_of(thunk):
  try:
    thunk()
  except Exception as e:  # recorded: class and message
    return [type(e).__name__, str(e)]
  return None


def run(jax):
  jnp = importlib.import_module(jax.__name__ + ".numpy")
  fft = importlib.import_module(jax.__name__ + ".scipy.fft")
  sparse = importlib.import_module(jax.__name__ + ".scipy.sparse.linalg")
  optimize = importlib.import_module(jax.__name__ + ".scipy.optimize")
  stats = importlib.import_module(jax.__name__ + ".scipy.stats")
  mh = importlib.import_module(jax.__name__ + ".experimental.multihost_utils")
  x, spd, gen, b, data1, data2, weights = _inputs()
  out = {}

  # -- fft
  for norm in [None, "ortho"]:
    out[f"dct_{norm}"] = _list(fft.dct(x, norm=norm))
    out[f"dct_n3_axis0_{norm}"] = _list(fft.dct(x, n=2, axis=0, norm=norm))
    out[f"dct_n7_{norm}"] = _list(fft.dct(x, n=7, norm=norm))
    out[f"idct_{norm}"] = _list(fft.idct(x, norm=norm))
    out[f"idct_n4_{norm}"] = _list(fft.idct(x, n=4, norm=norm))
    out[f"dctn_{norm}"] = _list(fft.dctn(x, norm=norm))
    out[f"idctn_{norm}"] = _list(fft.idctn(x, norm=norm))
  out["dctn_s"] = _list(fft.dctn(x, s=[2, 4]))
  out["idctn_s_axes"] = _list(fft.idctn(x, s=[4], axes=[0]))
  out["dct_int_dtype"] = str(fft.dct(jnp.arange(4)).dtype)
  out["dct_complex"] = [_list(jnp.real(fft.dct(x + 2j * x))), _list(jnp.imag(fft.dct(x + 2j * x)))]
  out["dct_type3"] = error_of(lambda: fft.dct(x, type=3))
  out["dct_norm_forward"] = error_of(lambda: fft.dct(x, norm="forward"))
  out["dctn_s_too_long"] = error_of(lambda: fft.dctn(x, s=[1, 2, 3]))
  out["dct_grad"] = _list(jax.grad(lambda v: fft.dct(v, norm="ortho")[1])(jnp.asarray(x[0])))

  # -- sparse.linalg
  for name, A in [("cg", spd), ("bicgstab", gen), ("gmres", gen)]:
    solve = getattr(sparse, name)
    xs, info = solve(A, b)
    out[f"{name}_x"] = _list(xs)
    out[f"{name}_info"] = None if info is None else int(info)
    xs, _ = solve(lambda v: jnp.dot(A, v), b, tol=1e-3, maxiter=3)
    out[f"{name}_maxiter3"] = _list(xs)
    xs, _ = solve(A, b, M=jnp.diag(1.0 / jnp.diag(A)))
    out[f"{name}_precond"] = _list(xs)
    tree_b = {"u": b[:2], "v": b[2:]}

    def mv(t, A=A):
      w = jnp.dot(A, jnp.concatenate([t["u"], t["v"]]))
      return {"u": w[:2], "v": w[2:]}
    xt, _ = solve(mv, tree_b)
    out[f"{name}_tree"] = [_list(xt["u"]), _list(xt["v"])]
  out["gmres_incremental"] = _list(sparse.gmres(gen, b, solve_method="incremental",
                                                restart=3)[0])
  out["gmres_bad_method"] = error_of(lambda: sparse.gmres(gen, b, solve_method="fast"))
  out["cg_not_square"] = error_of(lambda: sparse.cg(np.ones((2, 3), np.float32), b[:2]))
  out["cg_x0_mismatch"] = error_of(lambda: sparse.cg(spd, b, x0=b[:3]))
  out["cg_jvp"] = _list(jax.jvp(lambda v: sparse.cg(spd, v)[0], (b,), (jnp.ones(6),))[1])

  # -- optimize, in float64: BFGS's float32 iterates (its inverse Hessian above all) move
  # with the last bits of the BLAS kernel's dot products
  def rosen(v):
    return jnp.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1 - v[:-1]) ** 2)
  with jax.enable_x64(True):
    r = optimize.minimize(lambda v, c: jnp.sum((v - c) ** 2) + jnp.sum(v ** 4),
                          jnp.zeros(3), args=(jnp.arange(3.0),), method="BFGS")
    out["bfgs_fields"] = list(r._fields)
    out["bfgs_quartic"] = {k: _list(v) for k, v in r._asdict().items()}
    r = optimize.minimize(rosen, jnp.array([-1.2, 1.0, 0.8]), method="bfgs",
                          options={"maxiter": 5})
    out["bfgs_rosen_5"] = {k: _list(v) for k, v in r._asdict().items() if k != "hess_inv"}
  out["bfgs_bad_method"] = error_of(lambda: optimize.minimize(rosen, jnp.zeros(2),
                                                              method="Nelder-Mead"))
  out["bfgs_bad_args"] = error_of(lambda: optimize.minimize(rosen, jnp.zeros(2), args=[1],
                                                            method="BFGS"))

  # -- gaussian_kde
  kde1 = stats.gaussian_kde(data1)
  kde2 = stats.gaussian_kde(data2, bw_method="silverman", weights=weights)
  kde3 = stats.gaussian_kde(data2, bw_method=0.4)
  pts1 = np.linspace(-2, 2, 5).astype(np.float32)
  pts2 = np.stack([pts1[:3], pts1[1:4]])
  out["kde1_pdf"] = _list(kde1.pdf(pts1))
  out["kde1_logpdf"] = _list(kde1.logpdf(pts1))
  out["kde2_evaluate"] = _list(kde2.evaluate(pts2))
  out["kde2_logpdf"] = _list(kde2.logpdf(pts2))
  out["kde3_call"] = _list(kde3(pts2))
  out["kde2_fields"] = [_list(kde2.neff), _list(kde2.covariance), _list(kde2.inv_cov)]
  out["kde1_box"] = _list(kde1.integrate_box_1d(-1.0, 0.5))
  out["kde2_gaussian"] = _list(kde2.integrate_gaussian(jnp.zeros(2), jnp.eye(2)))
  out["kde2_kde3"] = _list(kde2.integrate_kde(kde3))
  out["kde_leaves"] = len(jax.tree_util.tree_leaves(kde2))
  out["kde_resample_shape"] = list(kde2.resample(jax.random.PRNGKey(0), (4,)).shape)
  out["kde_box_2d"] = error_of(lambda: kde2.integrate_box_1d(0.0, 1.0))
  out["kde_set_bandwidth"] = error_of(lambda: kde1.set_bandwidth("scott"))
  out["kde_bad_bw"] = error_of(lambda: stats.gaussian_kde(data1, bw_method="wide"))
  out["kde_jit"] = _list(jax.jit(lambda k, p: k.logpdf(p))(kde1, pts1))

  # -- multihost_utils (one process)
  def described(tree, kind=True):
    # kind: "numpy" for a NumPy array, "jax" for a JAX array (whichever implementation)
    def one(a):
      what = ["numpy" if type(a) is np.ndarray else "jax"] if kind else []
      return what + [str(np.asarray(a).dtype), list(np.shape(a))]
    return jax.tree_util.tree_map(one, tree)
  out["allgather"] = described(mh.process_allgather({"a": jnp.arange(3.0), "b": 1.0, "c": 2}))
  out["allgather_tiled"] = described(mh.process_allgather({"a": jnp.arange(3.0), "b": 1.0},
                                                          tiled=True))
  out["broadcast"] = described(mh.broadcast_one_to_all({"a": jnp.arange(3), "b": 1.0}))
  out["sync"] = mh.sync_global_devices("x")
  out["preemption"] = mh.reached_preemption_sync_point(3)

  # -- the rest of the surface
  s = jax.ShapeDtypeStruct((2, 3), jnp.float32)
  out["sds_sharding"] = [s.sharding is None, repr(s)]
  out["abstract_mesh"] = repr(jax.sharding.get_abstract_mesh())
  cd = jax.custom_derivatives
  out["zero_from_primal"] = described(cd.zero_from_primal({"a": 1.0, "b": jnp.arange(2)}),
                                     kind=False)
  out["symbolic_zero"] = [repr(cd.SymbolicZero(jax.typeof(jnp.ones(2)))),
                          list(cd.SymbolicZero(jax.typeof(jnp.ones(2))).shape)]
  out["scalar_type_eq"] = [jnp.float32 == np.float32, np.float32 == jnp.float32,
                           hash(jnp.int32) == hash(np.int32), jnp.float32 != np.float64]
  return out
