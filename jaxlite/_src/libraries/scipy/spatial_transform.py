"""``jax.scipy.spatial.transform``: rotations in 3 dimensions (``Rotation``) and their
spherical linear interpolation (``Slerp``), as JAX has them.

Both are NamedTuples, so they are pytrees whose leaves are arrays: they pass through
``jit``, ``vmap`` and ``grad`` as they are. A rotation is held as a unit quaternion
``(x, y, z, w)`` (scalar last, as SciPy); a stack of rotations has shape ``(N, 4)``. The
conversions are SciPy's algorithms, written on the trailing axis so that stacks and
batches broadcast.
"""
from __future__ import annotations

import re
import typing

import numpy as np

from jaxlite._src.libraries import random as jrandom
from jaxlite._src.libraries.numpy import namespace as jnp

__all__ = ["Rotation", "Slerp"]

Array = typing.Any


# -- quaternion algebra on the trailing axis

def _parts(quat):
  return quat[..., 0], quat[..., 1], quat[..., 2], quat[..., 3]


def _norm(v):
  return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _normalize_quaternion(quat):
  quat = jnp.asarray(quat)
  _check_last("quaternions", quat, 4)
  return quat / _norm(quat)[..., None]


def _compose_quat(p, q):
  cross = jnp.cross(p[..., :3], q[..., :3])
  pw, qw = p[..., 3:], q[..., 3:]
  vec = pw * q[..., :3] + qw * p[..., :3] + cross
  # (summed in this order, as JAX does, so that rounding agrees at gimbal lock)
  w = (pw * qw - p[..., 0:1] * q[..., 0:1] - p[..., 1:2] * q[..., 1:2]
       - p[..., 2:3] * q[..., 2:3])
  return jnp.concatenate([vec, w], axis=-1)


def _inv(quat):
  return quat * jnp.array([-1, -1, -1, 1], dtype=quat.dtype)


def _as_matrix(quat):
  x, y, z, w = _parts(quat)
  x2, y2, z2, w2 = x * x, y * y, z * z, w * w
  xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
  rows = [[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
          [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
          [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]]
  return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _from_matrix(matrix):
  """Shepperd's method, as SciPy: build the quaternion from the largest of the diagonal
  entries and the trace, for accuracy."""
  matrix = jnp.asarray(matrix)
  if matrix.ndim < 2 or matrix.shape[-2:] != (3, 3):
    raise ValueError(f"Expected `matrix` to have shape (3, 3) or (N, 3, 3), got "
                     f"{matrix.shape}.")
  m = lambda r, c: matrix[..., r, c]
  trace = m(0, 0) + m(1, 1) + m(2, 2)
  choice = jnp.argmax(jnp.stack([m(0, 0), m(1, 1), m(2, 2), trace], axis=-1), axis=-1)
  quat = jnp.stack([m(2, 1) - m(1, 2), m(0, 2) - m(2, 0), m(1, 0) - m(0, 1), 1 + trace],
                   axis=-1)
  for i in range(3):
    j, k = (i + 1) % 3, (i + 2) % 3
    parts = [None] * 4
    parts[i] = 1 - trace + 2 * m(i, i)
    parts[j] = m(j, i) + m(i, j)
    parts[k] = m(k, i) + m(i, k)
    parts[3] = m(k, j) - m(j, k)
    quat = jnp.where((choice == i)[..., None], jnp.stack(parts, axis=-1), quat)
  return _normalize_quaternion(quat)


def _from_rotvec(rotvec, degrees):
  rotvec = jnp.asarray(rotvec)
  _check_last("rotation vectors", rotvec, 3)
  rotvec = jnp.where(degrees, jnp.deg2rad(rotvec), rotvec)
  angle = _norm(rotvec)[..., None]
  angle2 = angle * angle
  # sin(angle / 2) / angle by its Taylor series near 0
  small = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
  large = jnp.sin(angle / 2) / angle
  scale = jnp.where(angle <= 1e-3, small, large)
  return jnp.concatenate([scale * rotvec, jnp.cos(angle / 2)], axis=-1)


def _as_rotvec(quat, degrees):
  quat = jnp.where(quat[..., 3:] < 0, -quat, quat)   # w >= 0: 0 <= angle <= pi
  angle = 2. * jnp.arctan2(_norm(quat[..., :3]), quat[..., 3])[..., None]
  angle2 = angle * angle
  small = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
  large = angle / jnp.sin(angle / 2)
  scale = jnp.where(angle <= 1e-3, small, large)
  scale = jnp.where(degrees, jnp.rad2deg(scale), scale)
  return scale * quat[..., :3]


def _from_mrp(mrp):
  mrp = jnp.asarray(mrp)
  _check_last("MRPs", mrp, 3)
  squared_plus_1 = jnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
  return jnp.concatenate([2 * mrp, 2 - squared_plus_1], axis=-1) / squared_plus_1


def _as_mrp(quat):
  sign = jnp.where(quat[..., 3:] < 0, -1., 1.)
  return sign * quat[..., :3] / (1. + sign * quat[..., 3:])


def _magnitude(quat):
  return 2. * jnp.arctan2(_norm(quat[..., :3]), jnp.abs(quat[..., 3]))


def _make_canonical(quat):
  """The one of ``q``, ``-q`` whose first nonzero entry in (w, x, y, z) is positive."""
  neg, zero = quat < 0, quat == 0
  x, y, z, w = range(4)
  flip = (neg[..., w] | (zero[..., w] & neg[..., x])
          | (zero[..., w] & zero[..., x] & neg[..., y])
          | (zero[..., w] & zero[..., x] & zero[..., y] & neg[..., z]))
  return jnp.where(flip[..., None], -quat, quat)


def _check_last(what, x, size):
  if x.ndim < 1 or x.shape[-1] != size:
    raise ValueError(f"Expected {what} to have shape ({size},) or (N, {size}), got "
                     f"{x.shape}.")


# -- Euler angles

def _euler_axes(seq, lengths):
  """(axes as indices 0..2, extrinsic) for a sequence such as 'xyz' or 'ZXZ'."""
  if not isinstance(seq, str) or len(seq) not in lengths:
    if lengths == (3,):
      raise ValueError(f"Expected 3 axes, got {seq}.")
    raise ValueError("Expected axis specification to be a non-empty string of upto 3 "
                     f"characters, got {seq}")
  intrinsic = re.match(r'^[XYZ]{1,3}$', seq) is not None
  extrinsic = re.match(r'^[xyz]{1,3}$', seq) is not None
  if not (intrinsic or extrinsic):
    raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                     f"['X', 'Y', 'Z'], got {seq}")
  if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
    raise ValueError(f"Expected consecutive axes to be different, got {seq}")
  return ["xyz".index(a) for a in seq.lower()], extrinsic


def _elementary_quat(axis, angle):
  zero = jnp.zeros_like(angle)
  parts = [zero, zero, zero, jnp.cos(angle / 2.)]
  parts[axis] = jnp.sin(angle / 2.)
  return jnp.stack(parts, axis=-1)


def _from_euler(seq, angles, degrees):
  axes, extrinsic = _euler_axes(seq, (1, 2, 3))
  angles = jnp.atleast_1d(angles)
  if angles.shape[-1] != len(axes):
    raise ValueError(f"Expected `angles` to have {len(axes)} entries in its last axis "
                     f"(one per axis of {seq!r}), got shape {angles.shape}.")
  if not jnp.issubdtype(angles.dtype, jnp.inexact):
    angles = angles.astype(jnp.result_type(angles, 1.0))
  angles = jnp.where(degrees, jnp.deg2rad(angles), angles)
  result = _elementary_quat(axes[0], angles[..., 0])
  for idx in range(1, len(axes)):
    quat = _elementary_quat(axes[idx], angles[..., idx])
    result = _compose_quat(quat, result) if extrinsic else _compose_quat(result, quat)
  return result


def _as_euler(quat, seq, degrees):
  """SciPy's quaternion-to-Euler method (Bernardes and Viollet, 2022); the gimbal-locked
  cases set the third angle to 0 (extrinsic) or the first (intrinsic)."""
  axes, extrinsic = _euler_axes(seq, (3,))
  first, third = (0, 2) if extrinsic else (2, 0)
  i, j, k = axes if extrinsic else axes[::-1]
  symmetric = i == k
  if symmetric:
    k = 3 - i - j
  sign = (i - j) * (j - k) * (k - i) // 2
  q = [quat[..., n] for n in range(4)]
  if symmetric:
    a, b, c, d = q[3], q[i], q[j], q[k] * sign
  else:
    a, b, c, d = q[3] - q[j], q[i] + q[k] * sign, q[j] + q[3], q[k] * sign - q[i]
  eps = 1e-7
  middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
  case = jnp.where(jnp.abs(middle - np.pi) <= eps, 2, 0)
  case = jnp.where(jnp.abs(middle) <= eps, 1, case)
  half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
  angles = [None, middle, jnp.zeros_like(middle)]
  angles[0] = jnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
  angles[first] = jnp.where(case == 0, half_sum - half_diff, angles[first])
  angles[third] = jnp.where(case == 0, half_sum + half_diff, angles[third])
  if not symmetric:
    angles[third] = angles[third] * sign
    angles[1] = angles[1] - np.pi / 2
  angles = jnp.stack(angles, axis=-1)
  angles = (angles + np.pi) % (2 * np.pi) - np.pi
  return jnp.where(degrees, jnp.rad2deg(angles), angles)


class Rotation(typing.NamedTuple):
  """Rotation in 3 dimensions (``scipy.spatial.transform.Rotation``).

  Held as unit quaternions ``quat`` (scalar last): shape ``(4,)`` for one rotation,
  ``(N, 4)`` for a stack. A pytree, so it passes through ``jit`` and ``vmap``.

  Examples
  --------
  >>> from jaxlite.scipy.spatial.transform import Rotation
  >>> r = Rotation.from_euler('z', 90, degrees=True)
  >>> r.as_rotvec().round(4).tolist()
  [0.0, 0.0, 1.5708]
  """
  quat: Array

  @classmethod
  def concatenate(cls, rotations: typing.Sequence):
    """Concatenate a sequence of stacks of rotations."""
    return cls(jnp.concatenate([rotation.quat for rotation in rotations]))

  @classmethod
  def from_euler(cls, seq: str, angles: Array, degrees: bool = False):
    """Initialize from Euler angles.

    Parameters
    ----------
    seq : str
      Up to 3 axes: lower case ('xyz') for extrinsic rotations, upper case ('XYZ') for
      intrinsic ones.
    angles : array of shape (..., len(seq))
      A scalar for a single axis.
    degrees : bool
      Whether the angles are in degrees (default radians).
    """
    return cls(_from_euler(seq, angles, degrees))

  @classmethod
  def from_matrix(cls, matrix: Array):
    """Initialize from rotation matrices, shape (3, 3) or (N, 3, 3)."""
    return cls(_from_matrix(matrix))

  @classmethod
  def from_mrp(cls, mrp: Array):
    """Initialize from Modified Rodrigues Parameters, shape (3,) or (N, 3)."""
    return cls(_from_mrp(mrp))

  @classmethod
  def from_quat(cls, quat: Array):
    """Initialize from quaternions ``(x, y, z, w)`` (normalized here)."""
    return cls(_normalize_quaternion(quat))

  @classmethod
  def from_rotvec(cls, rotvec: Array, degrees: bool = False):
    """Initialize from rotation vectors (axis times angle), shape (3,) or (N, 3)."""
    return cls(_from_rotvec(rotvec, degrees))

  @classmethod
  def identity(cls, num: int | None = None, dtype=float):
    """The identity rotation, or ``num`` of them stacked."""
    quat = jnp.array([0., 0., 0., 1.], dtype=dtype)
    return cls(quat if num is None else jnp.tile(quat, (num, 1)))

  @classmethod
  def random(cls, random_key: Array, num: int | None = None):
    """Uniformly distributed rotations: normalized 4-dimensional Gaussian samples (as
    SciPy draws them), one rotation or a stack of ``num``."""
    shape = (4,) if num is None else (num, 4)
    return cls.from_quat(jrandom.normal(random_key, shape))

  def __getitem__(self, indexer):
    """Extract rotation(s) at given index(es) from a stack."""
    if self.single:
      raise TypeError("Single rotation is not subscriptable.")
    return Rotation(self.quat[indexer])

  def __len__(self):
    """Number of rotations in a stack."""
    if self.single:
      raise TypeError("Single rotation has no len().")
    return self.quat.shape[0]

  def __mul__(self, other) -> Rotation:
    """Compose this rotation with the other: ``(p * q).apply(v) == p.apply(q.apply(v))``."""
    if not isinstance(other, Rotation):
      return NotImplemented
    return Rotation.from_quat(_compose_quat(self.quat, other.quat))

  def apply(self, vectors: Array, inverse: bool = False) -> Array:
    """Apply this rotation (or its inverse) to vectors of shape (3,) or (N, 3)."""
    vectors = jnp.asarray(vectors)
    _check_last("vectors", vectors, 3)
    matrix = self.as_matrix()
    matrix = jnp.where(inverse, jnp.swapaxes(matrix, -1, -2), matrix)
    return jnp.matmul(matrix, vectors[..., None])[..., 0]

  def as_euler(self, seq: str, degrees: bool = False):
    """Represent as Euler angles about the 3 axes of ``seq`` (see ``from_euler``)."""
    return _as_euler(self.quat, seq, degrees)

  def as_matrix(self) -> Array:
    """Represent as rotation matrices, shape (3, 3) or (N, 3, 3)."""
    return _as_matrix(self.quat)

  def as_mrp(self) -> Array:
    """Represent as Modified Rodrigues Parameters."""
    return _as_mrp(self.quat)

  def as_rotvec(self, degrees: bool = False) -> Array:
    """Represent as rotation vectors (angle in [0, pi] times the unit axis)."""
    return _as_rotvec(self.quat, degrees)

  def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Array:
    """Represent as quaternions: ``(x, y, z, w)``, or ``(w, x, y, z)`` when
    ``scalar_first``; ``canonical`` picks the sign with ``w >= 0`` (ties broken by the
    first nonzero of x, y, z)."""
    quat = _make_canonical(self.quat) if canonical else self.quat
    return jnp.roll(quat, shift=1, axis=-1) if scalar_first else quat

  def inv(self):
    """Invert this rotation."""
    return Rotation(_inv(self.quat))

  def magnitude(self) -> Array:
    """The angle(s) of the rotation(s), in radians, in [0, pi]."""
    return _magnitude(self.quat)

  def mean(self, weights: Array | None = None):
    """The (weighted) mean of a stack of rotations: the eigenvector of the largest
    eigenvalue of ``sum_i w_i q_i q_i^T`` (Markley et al., 2007)."""
    n = len(self)
    dtype = self.quat.dtype
    w = (jnp.ones(n, dtype=dtype) if weights is None
         else jnp.asarray(weights, dtype=dtype))
    if w.ndim != 1:
      raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
    if w.shape[0] != n:
      raise ValueError("Expected `weights` to have number of values equal to number of "
                       f"rotations, got {w.shape[0]} values and {n} rotations.")
    k = jnp.dot(w[None, :] * self.quat.T, self.quat)
    _, v = jnp.linalg.eigh(k)
    return Rotation(v[:, -1])

  @property
  def single(self) -> bool:
    """Whether this instance represents a single rotation."""
    return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
  """Spherical linear interpolation of rotations (``scipy.spatial.transform.Slerp``).

  Build it with ``Slerp.init(times, rotations)`` and call it with the times to
  interpolate at. A pytree, so it passes through ``jit`` and ``vmap``.
  """
  times: Array
  timedelta: Array
  rotations: Rotation
  rotvecs: Array

  @classmethod
  def init(cls, times: Array, rotations: Rotation):
    """The interpolator through ``rotations`` (a stack of at least 2) at increasing
    ``times`` (one per rotation)."""
    if not isinstance(rotations, Rotation):
      raise TypeError("`rotations` must be a `Rotation` instance.")
    if rotations.single or len(rotations) == 1:
      raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
    times = jnp.asarray(times, dtype=rotations.quat.dtype)
    if times.ndim != 1:
      raise ValueError("Expected times to be specified in a 1 dimensional array, got "
                       f"{times.ndim} dimensions.")
    if times.shape[0] != len(rotations):
      raise ValueError("Expected number of rotations to be equal to number of timestamps "
                       f"given, got {len(rotations)} rotations and {times.shape[0]} "
                       "timestamps.")
    starts = Rotation(rotations.as_quat()[:-1])
    return cls(times=times, timedelta=jnp.diff(times), rotations=starts,
               rotvecs=(starts.inv() * Rotation(rotations.as_quat()[1:])).as_rotvec())

  def __call__(self, times: Array):
    """The interpolated rotations at ``times`` (a scalar gives a single rotation)."""
    compute_times = jnp.asarray(times, dtype=self.times.dtype)
    if compute_times.ndim > 1:
      raise ValueError("`times` must be at most 1-dimensional.")
    single_time = compute_times.ndim == 0
    compute_times = jnp.atleast_1d(compute_times)
    ind = jnp.maximum(jnp.searchsorted(self.times, compute_times) - 1, 0)
    alpha = (compute_times - self.times[ind]) / self.timedelta[ind]
    result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
    return result[0] if single_time else result
