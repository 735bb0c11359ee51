"""``device=`` on jax.numpy's creation functions puts the result on that device,
committed, as JAX 0.10.2 does (its ``committed`` and ``sharding`` recorded below); inside
jit the result is left as it is (JAX's jitted ``zeros(device=d)`` is uncommitted).
Devices other than the first are checked in spmd_cases.py."""
import inspect

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.sharding import SingleDeviceSharding

DEVICE = jax.devices()[0]
MADE = {   # each call with device=, and NumPy's values for it
    "array": (lambda d: jnp.array([1, 2], device=d), np.array([1, 2])),
    "asarray": (lambda d: jnp.asarray([1.0, 2.0], device=d), np.array([1.0, 2.0])),
    "asarray of an Array": (lambda d: jnp.asarray(jnp.ones(2), device=d), np.ones(2)),
    "zeros": (lambda d: jnp.zeros(3, device=d), np.zeros(3)),
    "ones": (lambda d: jnp.ones((2, 2), jnp.int32, device=d), np.ones((2, 2))),
    "full": (lambda d: jnp.full((2,), 1.5, device=d), np.full(2, 1.5)),
    "empty": (lambda d: jnp.empty(2, device=d), np.zeros(2)),
    "zeros_like": (lambda d: jnp.zeros_like(jnp.ones(2), device=d), np.zeros(2)),
    "ones_like": (lambda d: jnp.ones_like(jnp.ones(2), device=d), np.ones(2)),
    "full_like": (lambda d: jnp.full_like(jnp.ones(2), 3, device=d), np.full(2, 3.0)),
    "empty_like": (lambda d: jnp.empty_like(jnp.ones(2), device=d), np.zeros(2)),
    "arange": (lambda d: jnp.arange(3, device=d), np.arange(3)),
    "linspace": (lambda d: jnp.linspace(0, 1, 3, device=d), np.linspace(0, 1, 3)),
    "eye": (lambda d: jnp.eye(2, device=d), np.eye(2)),
    "astype": (lambda d: jnp.astype(jnp.ones(2), jnp.int32, device=d), np.ones(2)),
    "Array.astype": (lambda d: jnp.ones(2).astype(jnp.int32, device=d), np.ones(2)),
    "fftfreq": (lambda d: jnp.fft.fftfreq(4, device=d), np.fft.fftfreq(4)),
    "rfftfreq": (lambda d: jnp.fft.rfftfreq(4, device=d), np.fft.rfftfreq(4)),
    "from_dlpack": (lambda d: jnp.from_dlpack(np.arange(3.0, dtype=np.float32), device=d),
                    np.arange(3.0)),
}


@pytest.mark.parametrize("name", list(MADE))
@pytest.mark.parametrize("how", ["device", "sharding"])
def test_device_commits_the_result_to_it(name, how):
  make, expected = MADE[name]
  out = make(DEVICE if how == "device" else SingleDeviceSharding(DEVICE))
  assert out.committed and out.sharding == SingleDeviceSharding(DEVICE)
  np.testing.assert_allclose(np.asarray(out), expected)


@pytest.mark.parametrize("name", ["zeros", "arange", "asarray", "astype"])
def test_without_device_the_result_is_not_committed(name):
  out = {"zeros": lambda: jnp.zeros(3), "arange": lambda: jnp.arange(3),
         "asarray": lambda: jnp.asarray([1.0]),
         "astype": lambda: jnp.ones(2).astype(jnp.int32)}[name]()
  assert not out.committed


def test_inside_jit_device_leaves_the_result_as_it_is():
  out = jax.jit(lambda: jnp.zeros(3, device=DEVICE) + jnp.arange(3.0, device=DEVICE))()
  assert not out.committed   # (JAX 0.10.2: False)
  np.testing.assert_array_equal(out, np.arange(3.0))


def test_linspace_with_retstep_places_both():
  out, step = jnp.linspace(0.0, 1.0, 5, retstep=True, device=DEVICE)
  assert out.committed and step.committed
  np.testing.assert_allclose(out, np.linspace(0, 1, 5))
  assert float(step) == pytest.approx(0.25)


def test_a_device_that_is_not_one_is_a_clear_error():
  with pytest.raises(TypeError, match="device must be a jax.Device or a jax.sharding.Sharding"):
    jnp.zeros(3, device="cpu")


# JAX 0.10.2's parameter names, in order
SIGNATURES = {
    "array": ["object", "dtype", "copy", "order", "ndmin", "device", "out_sharding"],
    "asarray": ["a", "dtype", "order", "copy", "device", "out_sharding"],
    "zeros": ["shape", "dtype", "device", "out_sharding"],
    "full": ["shape", "fill_value", "dtype", "device", "out_sharding"],
    "zeros_like": ["a", "dtype", "shape", "device", "out_sharding"],
    "empty_like": ["prototype", "dtype", "shape", "device"],
    "arange": ["start", "stop", "step", "dtype", "device", "out_sharding"],
    "linspace": ["start", "stop", "num", "endpoint", "retstep", "dtype", "axis", "device"],
    "eye": ["N", "M", "k", "dtype", "device"],
    "astype": ["x", "dtype", "copy", "device"],
}


@pytest.mark.parametrize("name", list(SIGNATURES))
def test_signatures_name_device_where_jax_does(name):
  params = inspect.signature(getattr(jnp, name)).parameters
  assert [p for p in params if p != "args"] == SIGNATURES[name]
  assert params["device"].kind is inspect.Parameter.KEYWORD_ONLY
