"""jax.scipy.spatial.transform: Rotation and Slerp against values recorded from JAX 0.10.2
and against scipy.spatial.transform (the oracle), eagerly, under jit on both tiers, and
under vmap and grad."""
import inspect

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as SR, Slerp as SSlerp

import jaxlite
import jaxlite.numpy as jnp
from jaxlite._src import tiers
from jaxlite.scipy.spatial.transform import Rotation as R, Slerp

Q = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
V = np.array([[1., 2., 3.], [0.5, -1., 0.2], [0, 0, 1], [3, 1, -2], [1e-4, 0, 0]], np.float32)
A = np.array([[10, 20, 30], [-45, 60, 170], [90, 0, -90]], np.float32)
GIMBAL = np.array([[0.3, np.pi / 2, 0.2], [0.1, 0.0, 0.4], [0.2, -np.pi / 2, 0.5]], np.float32)
M2 = np.array([[[-1, 0, 0], [0, -1, 0], [0, 0, 1]], [[1, 0, 0], [0, -1, 0], [0, 0, -1]],
               [[0, 1, 0], [1, 0, 0], [0, 0, -1]]], np.float32)
SEQS = ["xyz", "ZXZ", "zyx", "XYX", "yxz"]

# Recorded from JAX 0.10.2 (jax.scipy.spatial.transform, float32), rounded to 6 decimals;
# r = Rotation.from_quat(Q), the calls as in _compute below.
JAX = {
    'AS_QUAT_CANON_SF': [[0.155616, 0.186517, -0.195973, 0.950047], [0.545429, -0.308495, 0.208245, 0.750981], [0.026207, -0.446269, -0.802458, -0.395245], [0.266638, 0.846606, 0.079668, 0.453669], [0.810972, -0.42338, -0.24605, 0.320208]],
    'AS_MATRIX': [[[-0.88199, -0.36879, 0.293406], [0.22258, -0.874756, -0.430418], [0.415393, -0.314318, 0.853612]], [[-0.214676, -0.947698, -0.236182], [0.690729, -0.318282, 0.6493], [-0.690513, -0.023749, 0.72293]], [[-0.600315, 0.73694, 0.310712], [0.695508, 0.289251, 0.657725], [0.39483, 0.610945, -0.686189]], [[0.575674, -0.107037, 0.810643], [0.376826, -0.845114, -0.379189], [0.725673, 0.52376, -0.446176]], [[0.673853, -0.311014, -0.670219], [0.727705, 0.436433, 0.529124], [0.127941, -0.844273, 0.520418]]],
    'AS_ROTVEC': [[0.534181, -0.561264, 2.720916], [-0.731633, 0.493877, 1.781042], [-1.379075, -2.479784, -1.2214], [2.285427, 0.215065, 1.224689], [-0.904504, -0.525659, 0.684089]],
    'AS_ROTVEC_DEG': [[30.606298, -32.158066, 155.897018], [-41.919483, 28.297075, 102.046165], [-79.015175, -142.081146, -69.981064], [130.945328, 12.322308, 70.169487], [-51.824261, -30.118053, 39.1954]],
    'AS_MRP': [[0.1614, -0.169584, 0.822113], [-0.199618, 0.134749, 0.485937], [-0.434872, -0.781965, -0.385152], [0.668388, 0.062897, 0.358168], [-0.233786, -0.135866, 0.176815]],
    'MAGNITUDE': [2.829091, 1.987791, 3.089174, 2.601786, 1.249969],
    'EULER_xyz': [[-0.352814, -0.428375, 2.894392], [-0.032839, 0.762198, 1.872128], [2.414138, -0.405883, 2.282865], [2.276376, -0.812012, 0.579589], [-1.018398, -0.128292, 0.823802]],
    'EULER_ZXZ': [[0.598323, 0.547916, 2.218557], [-2.792722, 0.762762, -1.605176], [2.700265, 2.327033, 0.573743], [1.13327, 2.033284, 0.945616], [-2.239089, 1.023456, 2.991197]],
    'EULER_zyx': [[2.745552, 0.297788, 0.467027], [1.79356, -0.238435, -0.731792], [-2.25438, 0.315942, -2.377371], [0.183833, 0.94525, 2.437178], [0.432414, -0.734504, -0.793693]],
    'EULER_XYX': [[2.649693, 2.650865, -0.898749], [0.785555, 1.787156, -1.815038], [2.087117, 2.214691, 1.171788], [2.662643, 0.957368, -0.13128], [1.744832, 0.831386, -2.707118]],
    'EULER_yxz': [[-0.452894, -0.319738, 2.742612], [0.762467, -0.023751, 1.894808], [-2.619461, 0.657254, -1.196769], [-2.12206, 0.551259, 3.01561], [-0.241062, -1.005206, 0.61915]],
    'EULER_xyz_deg': [[-20.214779, -24.544052, 165.836456], [-1.88154, 43.670715, 107.265045], [138.319931, -23.255388, 130.798523], [130.426743, -46.524887, 33.208023], [-58.349911, -7.350609, 47.20039]],
    'GIMBAL_xyz': [[0.1, 1.570796, 0.0], [0.1, -0.0, 0.4], [0.7, -1.570796, 0.0]],
    'GIMBAL_XYZ': [[1.570796, 1.470796, -1.570796], [0.092153, 0.038887, 0.398207], [1.570796, -0.870796, 1.570796]],
    'FROM_EULER_zxy_deg': [[0.189308, 0.239298, 0.038135, 0.951549], [-0.289892, 0.813735, -0.489067, -0.12088], [-0.5, -0.5, 0.5, 0.5]],
    'FROM_EULER_XY': [[0.804606, -0.154318, 0.521675, -0.238013], [0.075147, 0.862853, -0.481344, -0.134709], [0.850904, 0.0, 0.0, 0.525322]],
    'FROM_EULER_z': [0.0, 0.0, 0.707107, 0.707107],
    'FROM_ROTVEC': [[0.255322, 0.510644, 0.765966, -0.295551], [0.236778, -0.473555, 0.094711, 0.843037], [0.0, 0.0, 0.479426, 0.877583], [0.765966, 0.255322, -0.510644, -0.295551], [5e-05, 0.0, 0.0, 1.0]],
    'FROM_ROTVEC_DEG': [[0.221895, 0.44379, 0.665684, 0.557385], [0.128979, -0.257959, 0.051592, 0.956117], [0.0, 0.0, 0.258819, 0.965926], [0.665684, 0.221895, -0.44379, 0.557385], [2.6e-05, 0.0, 0.0, 1.0]],
    'FROM_MRP': [[0.265487, 0.530973, 0.79646, -0.115044], [0.268793, -0.537586, 0.107517, 0.791954], [0.0, 0.0, 0.550459, 0.834862], [0.79646, 0.265487, -0.530973, -0.115044], [6e-05, 0.0, 0.0, 1.0]],
    'FROM_MATRIX': [[0.186517, -0.195973, 0.950047, 0.155616], [-0.308495, 0.208245, 0.750981, 0.545429], [0.446269, 0.802458, 0.395245, -0.026207], [0.846606, 0.079668, 0.453669, 0.266638], [-0.42338, -0.24605, 0.320208, 0.810972]],
    'FROM_MATRIX_SPECIAL': [[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.707107, 0.707107, 0.0, 0.0]],
    'APPLY': [[-0.739351, -2.818186, 2.347592], [0.793124, 0.793507, -0.176921], [0.310712, 0.657725, -0.686189], [-0.0013, 1.04374, 3.593132], [6.7e-05, 7.3e-05, 1.3e-05]],
    'APPLY_INV': [[0.809349, -3.061256, 1.993405], [-0.936169, -0.160316, -0.622805], [0.39483, 0.610945, -0.686189], [0.652502, -2.213745, 2.945093], [6.7e-05, -3.1e-05, -6.7e-05]],
    'APPLY_ONE': [[-2.818619, 2.002062, 1.43078], [0.793124, 0.793507, -0.176921], [-0.236182, 0.6493, 0.72293], [-1.119361, 0.455305, -3.541147], [-2.1e-05, 6.9e-05, -6.9e-05]],
    'COMPOSE': [[0.256382, -0.659173, 0.691428, -0.147264], [-0.414152, -0.874718, -0.246806, -0.049318], [-0.02339, -0.042059, -0.020716, -0.998626], [-0.344862, 0.67676, -0.648563, -0.049318], [-0.085632, 0.264736, 0.949155, -0.147264]],
    'INV': [[-0.186517, 0.195973, -0.950047, 0.155616], [0.308495, -0.208245, -0.750981, 0.545429], [0.446269, 0.802458, 0.395245, 0.026207], [0.846606, 0.079668, 0.453669, -0.266638], [0.42338, 0.24605, -0.320208, 0.810972]],
    'MEAN_MATRIX': [[-0.478333, -0.765783, 0.429852], [0.858989, -0.509764, 0.047723], [0.182578, 0.392066, 0.901637]],
    'MEAN_W_MATRIX': [[0.178969, -0.947493, -0.265005], [0.98147, 0.153194, 0.115099], [-0.068458, -0.280694, 0.957353]],
    'SLERP': [[1.570796, 0.0, 0.0], [0.85309, 0.38712, 0.177686], [-0.0, 0.785398, 0.0], [-0.056668, 0.392131, -0.283475], [0.0, -0.0, -0.523599]],
    'SLERP_SINGLE': [0.285907, 0.0, 0.237993, 0.928233],
    'GRAD': [0.958705, 0.352867, -0.25297],
}


def _compute(q, v, a, gimbal, m2):
  """Every recorded quantity, from arrays only (so it runs under jit as well)."""
  r = R.from_quat(q)
  out = {"AS_QUAT_CANON_SF": r.as_quat(canonical=True, scalar_first=True),
         "AS_MATRIX": r.as_matrix(), "AS_ROTVEC": r.as_rotvec(),
         "AS_ROTVEC_DEG": r.as_rotvec(degrees=True), "AS_MRP": r.as_mrp(),
         "MAGNITUDE": r.magnitude(), "EULER_xyz_deg": r.as_euler("xyz", degrees=True)}
  out.update({f"EULER_{s}": r.as_euler(s) for s in SEQS})
  g = R.from_euler("xyz", gimbal)
  out["GIMBAL_xyz"], out["GIMBAL_XYZ"] = g.as_euler("xyz"), g.as_euler("XYZ")
  out["FROM_EULER_zxy_deg"] = R.from_euler("zxy", a, degrees=True).as_quat()
  out["FROM_EULER_XY"] = R.from_euler("XY", a[:, :2]).as_quat()
  out["FROM_EULER_z"] = R.from_euler("z", 90, degrees=True).as_quat()
  out["FROM_ROTVEC"] = R.from_rotvec(v).as_quat()
  out["FROM_ROTVEC_DEG"] = R.from_rotvec(v * 30, degrees=True).as_quat()
  out["FROM_MRP"] = R.from_mrp(v * 0.3).as_quat()
  out["FROM_MATRIX"] = R.from_matrix(r.as_matrix()).as_quat()
  out["FROM_MATRIX_SPECIAL"] = R.from_matrix(m2).as_quat()
  out["APPLY"], out["APPLY_INV"] = r.apply(v), r.apply(v, inverse=True)
  out["APPLY_ONE"] = r[1].apply(v)
  out["COMPOSE"], out["INV"] = (r * r[::-1]).as_quat(), r.inv().as_quat()
  out["MEAN_MATRIX"] = r.mean().as_matrix()
  out["MEAN_W_MATRIX"] = r.mean(jnp.array([1., 2, 3, 4, 5])).as_matrix()
  rots = jnp.array([[90, 0, 0], [0, 45, 0], [0, 0, -30]])
  s = Slerp.init(jnp.array([0, 1, 2]), R.from_euler("zxy", rots, degrees=True))
  out["SLERP"] = s(jnp.array([0, 0.5, 1, 1.5, 2])).as_euler("zxy")
  out["SLERP_SINGLE"] = s(0.7).as_quat()
  return out


def _check(out):
  for name, value in out.items():
    assert value.dtype == np.float32, name
    np.testing.assert_allclose(value, np.array(JAX[name]), rtol=2e-5, atol=3e-6,
                               err_msg=name)


def test_matches_jax_eagerly():
  _check(_compute(Q, V, A, GIMBAL, M2))


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_matches_jax_under_jit(backend):
  if backend == "xla" and not tiers.xla_available():
    pytest.skip("XLA is not available here")
  _check(jaxlite.jit(_compute, backend=backend)(Q, V, A, GIMBAL, M2))


def test_against_scipy_float64(x64):
  x64(True)
  q = np.random.default_rng(1).normal(size=(6, 4))
  r, sr = R.from_quat(q), SR.from_quat(q)
  assert r.quat.dtype == np.float64
  tol = dict(rtol=1e-10, atol=1e-12)
  np.testing.assert_allclose(r.as_matrix(), sr.as_matrix(), **tol)
  np.testing.assert_allclose(r.as_rotvec(), sr.as_rotvec(), **tol)
  np.testing.assert_allclose(r.as_rotvec(degrees=True), sr.as_rotvec(degrees=True), **tol)
  np.testing.assert_allclose(r.as_mrp(), sr.as_mrp(), **tol)
  np.testing.assert_allclose(r.magnitude(), sr.magnitude(), **tol)
  np.testing.assert_allclose(r.as_quat(canonical=True, scalar_first=True),
                             sr.as_quat(canonical=True, scalar_first=True), **tol)
  for seq in SEQS + ["XZY", "yzy"]:
    np.testing.assert_allclose(r.as_euler(seq), sr.as_euler(seq), **tol, err_msg=seq)
  v = np.random.default_rng(2).normal(size=(6, 3))
  np.testing.assert_allclose(r.apply(v), sr.apply(v), **tol)
  np.testing.assert_allclose(r.apply(v, inverse=True), sr.apply(v, inverse=True), **tol)
  np.testing.assert_allclose((r * r[::-1]).as_matrix(), (sr * sr[::-1]).as_matrix(), **tol)
  np.testing.assert_allclose(r.inv().as_matrix(), sr.inv().as_matrix(), **tol)
  mean = SR.from_quat(q).mean(weights=np.arange(1., 7.)).as_matrix()
  np.testing.assert_allclose(r.mean(np.arange(1., 7.)).as_matrix(), mean, **tol)
  angles = np.random.default_rng(3).uniform(-3, 3, size=(6, 3))
  for seq in ["xyz", "ZYX", "zxz"]:
    np.testing.assert_allclose(R.from_euler(seq, angles).as_matrix(),
                               SR.from_euler(seq, angles).as_matrix(), **tol)
  np.testing.assert_allclose(R.from_rotvec(v).as_matrix(), SR.from_rotvec(v).as_matrix(),
                             **tol)
  np.testing.assert_allclose(R.from_mrp(v / 4).as_matrix(), SR.from_mrp(v / 4).as_matrix(),
                             **tol)
  m = sr.as_matrix()
  np.testing.assert_allclose(R.from_matrix(m).as_matrix(), m, **tol)
  times = np.array([0., 1., 3., 4., 6., 7.])
  at = np.array([0., 0.3, 1., 2.5, 6.9, 7.])
  np.testing.assert_allclose(Slerp.init(times, r)(at).as_matrix(),
                             SSlerp(times, sr)(at).as_matrix(), **tol)


def test_gimbal_lock_at_pi_gives_the_same_rotation():
  # the angles themselves depend on the last bit of atan2 there: compare the rotation
  for seq in ["zxz", "xyz"]:
    g = R.from_euler(seq, np.array([[0.1, np.pi, 0.4], [0.3, 0.0, 0.2]], np.float32))
    again = R.from_euler(seq, g.as_euler(seq))
    np.testing.assert_allclose(again.as_matrix(), g.as_matrix(), atol=2e-6)


def test_pytree_vmap_and_grad():
  r = R.from_quat(Q)
  leaves, tree = jaxlite.tree_util.tree_flatten(r)
  assert len(leaves) == 1 and leaves[0].shape == (5, 4)
  assert str(tree) == "PyTreeDef(CustomNode(namedtuple[Rotation], [*]))"   # as JAX's
  s = Slerp.init(jnp.arange(5.), r)
  assert str(jaxlite.tree_util.tree_structure(s)) == (
      "PyTreeDef(CustomNode(namedtuple[Slerp], [*, *, CustomNode(namedtuple[Rotation], "
      "[*]), *]))")
  # a Rotation goes into and out of jit and vmap as it is
  inv = jaxlite.jit(lambda r: r.inv())(r)
  assert isinstance(inv, R)
  np.testing.assert_allclose(inv.quat, np.array(JAX["INV"]), rtol=2e-5, atol=3e-6)
  np.testing.assert_allclose(jaxlite.vmap(lambda r: r.as_rotvec())(r),
                             np.array(JAX["AS_ROTVEC"]), rtol=2e-5, atol=3e-6)
  np.testing.assert_allclose(jaxlite.vmap(lambda r, v: r.apply(v))(r, V),
                             np.array(JAX["APPLY"]), rtol=2e-5, atol=3e-6)
  g = jaxlite.grad(lambda v: R.from_rotvec(v).as_matrix().sum())(V[0])
  np.testing.assert_allclose(g, np.array(JAX["GRAD"]), rtol=1e-5, atol=1e-6)


def test_indexing_len_concatenate_identity():
  r = R.from_quat(Q)
  assert len(r) == 5 and r[2].single and not r.single
  assert r[1:3].quat.shape == (2, 4)
  assert R.concatenate([r, r[:2]]).quat.shape == (7, 4)
  ident = R.identity()
  assert ident.quat.dtype == np.float32 and ident.quat.tolist() == [0., 0., 0., 1.]
  # (JAX 0.10.2 asserts num is None; SciPy stacks num identities, and so does jaxlite)
  np.testing.assert_array_equal(R.identity(3).quat, np.tile([0., 0., 0., 1.], (3, 1)))
  with pytest.raises(TypeError, match="Single rotation is not subscriptable."):
    r[0][0]
  with pytest.raises(TypeError, match=r"Single rotation has no len\(\)."):
    len(r[0])


def test_random_is_uniform_on_the_sphere():
  # JAX 0.10.2 raises NotImplementedError here; jaxlite draws as SciPy does
  key = jaxlite.random.key(0)
  one = R.random(key)
  assert one.single and one.quat.dtype == np.float32
  many = R.random(key, 4000)
  assert many.quat.shape == (4000, 4)
  np.testing.assert_allclose(np.linalg.norm(many.quat, axis=-1), 1, rtol=1e-5)
  # a uniform rotation's matrix has mean 0 and each entry variance 1/3
  mats = np.asarray(many.as_matrix())
  assert np.abs(mats.mean(0)).max() < 0.05
  np.testing.assert_allclose(mats.var(0), 1 / 3, atol=0.03)
  assert not np.allclose(R.random(jaxlite.random.key(1)).quat, one.quat)


def test_float64_with_x64(x64):
  x64(True)
  assert R.identity().quat.dtype == np.float64
  assert R.from_euler("x", 1.0).quat.dtype == np.float64
  assert R.from_quat(Q.astype(np.float64)).as_euler("xyz").dtype == np.float64
  for backend in ["numpy", "xla"]:
    if backend == "xla" and not tiers.xla_available():
      continue
    f = jaxlite.jit(lambda q: R.from_quat(q).as_euler("zyz"), backend=backend)
    np.testing.assert_allclose(f(Q.astype(np.float64)),
                               SR.from_quat(Q.astype(np.float64)).as_euler("zyz"),
                               rtol=1e-10, atol=1e-12)


def test_integer_inputs_give_float32():
  assert R.from_euler("x", 1).quat.dtype == np.float32      # as JAX 0.10.2
  assert R.from_rotvec(np.array([1, 2, 3])).quat.dtype == np.float32


def test_bad_inputs_raise_as_jax():
  r = R.from_quat(Q)
  cases = [
      (lambda: R.from_euler("xyzx", np.ones(4)), ValueError,
       "Expected axis specification to be a non-empty string of upto 3 characters"),
      (lambda: R.from_euler("xYz", np.ones(3)), ValueError, "Expected axes from `seq`"),
      (lambda: R.from_euler("xxz", np.ones(3)), ValueError,
       "Expected consecutive axes to be different"),
      (lambda: r.as_euler("xy"), ValueError, "Expected 3 axes, got xy."),
      (lambda: R.from_euler("xyz", [1., 2., 3.]), TypeError, "list"),   # lists: as JAX
      (lambda: R.from_euler("xyz", np.ones(2)), ValueError, "3 entries in its last axis"),
      (lambda: r.mean(jnp.ones(3)), ValueError,
       "got 3 values and 5 rotations"),
      (lambda: r.mean(jnp.ones((5, 1))), ValueError,
       r"Expected `weights` to be 1 dimensional, got shape \(5, 1\)."),
      (lambda: Slerp.init(np.arange(2.), r[0]), ValueError,
       "`rotations` must be a sequence of at least 2 rotations."),
      (lambda: Slerp.init(np.arange(3.), r), ValueError,
       "got 5 rotations and 3 timestamps"),
      (lambda: Slerp.init(np.arange(2.), r[:2].quat), TypeError,
       "`rotations` must be a `Rotation` instance."),
      (lambda: Slerp.init(np.arange(5.), r)(np.ones((2, 2))), ValueError,
       "`times` must be at most 1-dimensional."),
      # JAX 0.10.2 silently accepts these two (and computes nonsense)
      (lambda: R.from_quat(jnp.ones(3)), ValueError, r"shape \(4,\) or \(N, 4\)"),
      (lambda: R.from_matrix(jnp.eye(4)), ValueError, r"shape \(3, 3\) or \(N, 3, 3\)"),
      (lambda: r * 2, TypeError, "unsupported operand"),
  ]
  for fun, error, match in cases:
    with pytest.raises(error, match=match):
      fun()


# Recorded from JAX 0.10.2: the parameters and defaults of each method
SIGNATURES = {
    'concatenate': [('rotations', None)],
    'from_euler': [('seq', None), ('angles', None), ('degrees', False)],
    'from_matrix': [('matrix', None)], 'from_mrp': [('mrp', None)],
    'from_quat': [('quat', None)], 'from_rotvec': [('rotvec', None), ('degrees', False)],
    'identity': [('num', None), ('dtype', float)],
    'random': [('random_key', None), ('num', None)],
    'apply': [('self', None), ('vectors', None), ('inverse', False)],
    'as_euler': [('self', None), ('seq', None), ('degrees', False)],
    'as_matrix': [('self', None)], 'as_mrp': [('self', None)],
    'as_rotvec': [('self', None), ('degrees', False)],
    'as_quat': [('self', None), ('canonical', False), ('scalar_first', False)],
    'inv': [('self', None)], 'magnitude': [('self', None)],
    'mean': [('self', None), ('weights', None)],
    '__getitem__': [('self', None), ('indexer', None)], '__len__': [('self', None)],
    '__mul__': [('self', None), ('other', None)],
}


def _params(fun):
  return [(p.name, None if p.default is inspect.Parameter.empty else p.default)
          for p in inspect.signature(fun).parameters.values()]


def test_signatures_as_jax():
  for name, params in SIGNATURES.items():
    assert _params(getattr(R, name)) == params, name
  assert _params(Slerp.init) == [("times", None), ("rotations", None)]
  assert _params(Slerp.__call__) == [("self", None), ("times", None)]
  assert R._fields == ("quat",)
  assert Slerp._fields == ("times", "timedelta", "rotations", "rotvecs")
