"""Running JAX code on jaxlite (issue 17): ``python -m jaxlite``, ``install_as_jax``, and the
surface JAX libraries (optax, chex) use, compared with what JAX 0.10.2 says
(``tests/data/ecosystem_reference.json``, recorded by ``make_ecosystem_reference.py``)."""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import flatten_util, test_util
from jaxlite._src import compiler, tiers
from jaxlite._src.base.config import config

ROOT = pathlib.Path(__file__).resolve().parent.parent
REF = json.loads((ROOT / "tests" / "data" / "ecosystem_reference.json").read_text())


def run_python(args, cwd, code=None):
  """Run ``python args`` in a fresh process with this checkout first on the path."""
  env = dict(os.environ, PYTHONPATH=str(ROOT))
  return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                        text=True, timeout=300)


# -- the entry point -------------------------------------------------------------------

SCRIPT = """
import sys
import jax, jax.numpy as jnp, jax.scipy.special, jaxlite
assert jax.numpy is jaxlite.numpy and jax.jit is jaxlite.jit, (jax, jax.numpy)
assert jax.__version__ == "0.10.2" and jax.__version_info__ == (0, 10, 2), jax.__version__
assert jaxlite.__version__ != jax.__version__
assert sys.modules["jax.scipy.special"] is jaxlite.scipy.special
from jax.flatten_util import ravel_pytree
from jax.experimental import io_callback
assert jax.grad(lambda x: jnp.sin(x))(0.0) == 1.0
print(__name__, sys.argv, jax.tree.leaves({"a": 1, "b": (2, 3)}))
"""


def test_run_script_with_jax_resolving_to_jaxlite(tmp_path):
  (tmp_path / "prog.py").write_text(SCRIPT)
  out = run_python(["-m", "jaxlite", "prog.py", "--lr", "0.1"], tmp_path)
  assert out.returncode == 0, out.stderr
  assert out.stdout.strip() == "__main__ ['prog.py', '--lr', '0.1'] [1, 2, 3]"


def test_run_module_with_jax_resolving_to_jaxlite(tmp_path):
  (tmp_path / "progmod.py").write_text(SCRIPT)
  out = run_python(["-m", "jaxlite", "-m", "progmod", "x"], tmp_path)
  assert out.returncode == 0, out.stderr
  assert out.stdout.strip().startswith("__main__ ['") and "'x'" in out.stdout


def test_usage_and_exit_status(tmp_path):
  out = run_python(["-m", "jaxlite"], tmp_path)
  assert out.returncode == 2 and "usage: python -m jaxlite SCRIPT" in out.stderr
  (tmp_path / "fails.py").write_text("import sys; sys.exit(3)")
  assert run_python(["-m", "jaxlite", "fails.py"], tmp_path).returncode == 3


MISSING = """
import jaxlite
jaxlite.install_as_jax()
for stmt in ["import jax.experimental.jax2tf", "from jax.experimental import no_such_module",
             "import jax._src.pjit", "import jaxlib"]:
  try:
    exec(stmt)
  except ImportError as e:
    print(type(e).__name__, e.name, "|", e)
  else:
    print("imported", stmt)
from jax._src import compiler   # chex imports it at module level
import jaxlite._src.compiler
assert compiler is jaxlite._src.compiler
"""


def test_modules_jaxlite_lacks_raise_import_error_naming_them(tmp_path):
  (tmp_path / "missing.py").write_text(MISSING)
  out = run_python(["missing.py"], tmp_path)
  assert out.returncode == 0, out.stderr
  lines = out.stdout.strip().splitlines()
  names = ["jax.experimental.jax2tf", "jax.experimental.no_such_module", "jax._src.pjit",
           "jaxlib"]
  assert len(lines) == 4
  for line, name in zip(lines, names):
    assert line.startswith(f"ModuleNotFoundError {name} |"), line
    assert f"jaxlite does not provide" in line and repr(name) in line


def test_real_jax_already_imported_is_refused(tmp_path):
  (tmp_path / "mixed.py").write_text(textwrap.dedent("""
      import sys, types
      sys.modules["jax"] = types.ModuleType("jax")   # what importing the real jax leaves
      import jaxlite
      try:
        jaxlite.install_as_jax()
      except ImportError as e:
        print(e)
      """))
  out = run_python(["mixed.py"], tmp_path)
  assert "The real jax is already imported (jax)" in out.stdout, (out.stdout, out.stderr)


def test_install_as_jax_in_process_is_idempotent(tmp_path):
  (tmp_path / "twice.py").write_text(textwrap.dedent("""
      import sys, jaxlite
      jaxlite.install_as_jax(); jaxlite.install_as_jax()
      import jax.numpy
      print(sys.meta_path.count(sys.meta_path[0]), jax.numpy is jaxlite.numpy,
            jaxlite.numpy.__spec__.name)
      """))
  out = run_python(["twice.py"], tmp_path)
  assert out.stdout.split() == ["1", "True", "jaxlite.numpy"], out.stderr


def test_xla_bridge_backends_created_on_first_use(tmp_path):
  # chex's set_n_cpu_devices reads jax._src.xla_bridge._backends without importing it
  (tmp_path / "bridge.py").write_text(textwrap.dedent("""
      import jax
      before = sorted(jax._src.xla_bridge._backends)
      jax.devices()
      after = jax._src.xla_bridge._backends
      print(repr([before, sorted(after)]), after["cpu"].platform)
      """))
  out = run_python(["-m", "jaxlite", "bridge.py"], tmp_path)
  assert out.stdout.split(" cpu")[0].strip() == repr(REF["xla_bridge_backends"]), out.stderr
  assert out.stdout.strip().endswith(" cpu")


# -- the surface -----------------------------------------------------------------------

@pytest.mark.parametrize("module", ["jax.tree", "jax.dtypes", "jax.typing", "jax.test_util",
                                    "jax.flatten_util"])
def test_module_has_every_public_name_of_jax(module):
  mod = importlib.import_module("jaxlite" + module[3:])
  have = {n for n in dir(mod) if not n.startswith("_")}
  assert set(REF["modules"][module]) <= have


def test_array_type_accepts_arrays_and_tracers():
  seen = []

  def f(x):
    seen.append(isinstance(x, jax.Array))
    return x * 2
  jax.jit(f)(1.0)
  jax.grad(f)(1.0)
  jax.vmap(f)(jnp.ones(3))
  assert seen == [True, True, True]
  assert isinstance(jnp.ones(3), jax.Array)
  assert not isinstance(np.ones(3), jax.Array) and not isinstance(1.0, jax.Array)
  assert jax.Array.__name__ == "Array"


def test_typing_aliases():
  assert jax.Array in jax.typing.ArrayLike.__args__
  assert np.ndarray in jax.typing.ArrayLike.__args__ and float in jax.typing.ArrayLike.__args__
  assert np.dtype in jax.typing.DTypeLike.__args__ and str in jax.typing.DTypeLike.__args__


def test_dtypes():
  assert jax.dtypes.canonicalize_dtype(np.float64) == np.float32
  assert jax.dtypes.issubdtype(jax.dtypes.prng_key, jax.dtypes.extended)
  assert not jax.dtypes.issubdtype(np.float32, jax.dtypes.extended)
  assert not jax.dtypes.issubdtype(jax.random.PRNGKey(0).dtype, jax.dtypes.prng_key)
  assert jax.dtypes.issubdtype(jax.dtypes.bfloat16, np.floating)
  assert jax.dtypes.result_type(np.int8, 1.0) == np.float32
  assert jax.dtypes.float0.itemsize == 0


def test_shape_dtype_struct():
  s = jax.ShapeDtypeStruct((2, 3), jnp.float32)
  assert s.shape == (2, 3) and s.dtype == np.float32
  out = jax.eval_shape(lambda x: x.sum(0), s)
  assert out.shape == (3,) and out.dtype == np.float32


def test_ravel_pytree_matches_jax():
  ref = REF["ravel"]
  tree = {"a": jnp.arange(2, dtype=jnp.int32), "b": [jnp.ones((2, 2)), 3.0]}
  flat, unravel = flatten_util.ravel_pytree(tree)
  assert flat.tolist() == ref["flat"] and str(flat.dtype) == ref["dtype"]
  back = unravel(flat)
  assert [str(x.dtype) for x in jax.tree.leaves(back)] == ref["leaf_dtypes"]
  np.testing.assert_array_equal(back["b"][0], np.ones((2, 2)))
  with pytest.raises(TypeError) as e:
    unravel(flat.astype(jnp.float16))
  assert str(e.value) == ref["wrong_dtype"][1]
  empty, unravel_empty = flatten_util.ravel_pytree({})
  assert empty.shape == (0,) and empty.dtype == np.float32 and unravel_empty(empty) == {}
  # under jit, the unravel function traces
  assert jax.jit(lambda v: unravel(v)["a"])(flat).tolist() == [0, 1]


def test_check_grads():
  test_util.check_grads(jnp.sin, (0.7,), order=2, modes=("fwd", "rev"))

  @jax.custom_jvp
  def wrong(x):
    return jnp.sin(x)
  wrong.defjvp(lambda primals, tangents: (jnp.sin(primals[0]), 2.0 * tangents[0]))
  with pytest.raises(AssertionError):
    test_util.check_grads(wrong, (0.7,), order=1, modes=("fwd",))


# -- config ----------------------------------------------------------------------------

def test_every_option_exists_with_jax_default():
  for name, default in REF["defaults"].items():
    if name == "jax_persistent_cache_min_compile_time_secs":
      assert config.read(name) == 0.0   # jaxlite caches every executable (docs/ecosystem.md)
    else:
      assert config.read(name) == default, name


@pytest.mark.parametrize("name", sorted(REF["bad_values"]))
def test_bad_values_raise_jax_errors(name):
  value, error_class, message = REF["bad_values"][name]
  old = config.read(name)
  with pytest.raises(ValueError) as e:
    config.update(name, value)
  assert error_class == "ValueError" and str(e.value) == message
  assert config.read(name) == old


def test_unknown_option():
  with pytest.raises(AttributeError, match=REF["unknown_option"][1]):
    config.update("jax_no_such_option", 1)


def test_boolean_options_keep_truth_value():
  with config.override("jax_enable_checks", 1):
    assert config.jax_enable_checks is True
  with jax.enable_checks():
    assert config.jax_enable_checks is True
  with jax.checking_leaks():
    assert config.jax_check_tracer_leaks is True
  with pytest.raises(TypeError, match="requires an argument"):
    with jax.numpy_rank_promotion():
      pass


def test_backend_options_known_right_after_import(tmp_path):
  code = ("import sys, jaxlite\n"
          "assert 'jaxlite._src.backends.xla' not in sys.modules\n"
          f"jaxlite.config.update('jaxlite_cache_dir', {str(tmp_path)!r})\n"
          f"jaxlite.config.update('jax_compilation_cache_dir', {str(tmp_path)!r})\n"
          "from jaxlite._src.backends import disk_cache as cache\n"
          "print(cache.cache_dir())\n")
  out = run_python(["-c", code], tmp_path)
  assert out.returncode == 0 and out.stdout.strip() == str(tmp_path), out.stderr


@pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin")
def test_compilation_cache_dir_and_min_compile_time(tmp_path):
  with config.override("jax_compilation_cache_dir", str(tmp_path / "a")):
    jax.jit(lambda x: x * 3.0 + 1.0, backend="xla")(jnp.ones(7))
  assert len(list((tmp_path / "a").glob("*.bin"))) == 1
  with config.override("jax_compilation_cache_dir", str(tmp_path / "b")), \
      config.override("jax_persistent_cache_min_compile_time_secs", 1e6):
    jax.jit(lambda x: x * 5.0 - 2.0, backend="xla")(jnp.ones(9))
  assert not list((tmp_path / "b").glob("*.bin"))


def test_debug_nans_and_infs_name_the_primitive():
  with jax.debug_nans(True):
    for key, thunk in [("nan_eager", lambda: jnp.log(-jnp.ones(2))),
                       ("nan_jit", lambda: jax.jit(lambda x: jnp.log(x) * 2)(-jnp.ones(2)))]:
      with pytest.raises(FloatingPointError) as e:
        thunk()
      assert str(e.value) == REF[key][1]
    assert float(jnp.log(jnp.float32(2.0))) == pytest.approx(np.log(2.0))
  with jax.debug_infs(True):
    for key, thunk in [("inf_eager", lambda: jnp.ones(2) / 0.0),
                       ("inf_jit", lambda: jax.jit(lambda x: jnp.exp(x) + 1)(jnp.float32(100)))]:
      with pytest.raises(FloatingPointError) as e:
        thunk()
      assert str(e.value) == REF[key][1]
  assert np.isnan(jnp.log(-jnp.ones(2))).all()   # off again: no check


def test_numpy_rank_promotion():
  with jax.numpy_rank_promotion("raise"):
    with pytest.raises(ValueError) as e:
      jnp.ones(3) + jnp.ones((2, 3))
    assert str(e.value) == REF["rank_raise"][1]
    assert (jnp.ones(3) + 1.0).shape == (3,)
  with jax.numpy_rank_promotion("warn"), warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    jnp.ones(3) * jnp.ones((2, 3))
    jnp.ones(3) * 2.0
  assert [str(w.message) for w in seen] == REF["rank_warn"]
  assert (jnp.ones(3) + jnp.ones((2, 3))).shape == (2, 3)   # 'allow' again


def test_numpy_functions_do_not_trip_rank_promotion_themselves():
  # JAX's own broadcasting inside outer, ufunc.outer and vander has equal ranks, so
  # 'raise' refuses only the user's mixed-rank operands (equinox's RoPE uses outer)
  a, b = np.arange(3.0, dtype=np.float32), np.arange(1.0, 3.0, dtype=np.float32)
  with jax.numpy_rank_promotion("raise"):
    np.testing.assert_array_equal(jnp.outer(a, b), np.outer(a, b))
    np.testing.assert_array_equal(jnp.multiply.outer(a, b.reshape(2, 1)),
                                  np.multiply.outer(a, b.reshape(2, 1)))
    np.testing.assert_array_equal(jnp.vander(b), np.vander(b))


def test_every_compile_passes_through_the_compiler_hook(monkeypatch):
  platforms = []
  plain = compiler.backend_compile_and_load

  def spy(backend, *args):
    platforms.append(backend.platform)
    return plain(backend, *args)
  monkeypatch.setattr(compiler, "backend_compile_and_load", spy)
  jax.jit(lambda x: x - 4.5, backend="numpy")(jnp.ones(11))
  assert platforms == ["cpu"]


# -- the optax example -----------------------------------------------------------------

# What `python examples/optax_training.py --steps 60` prints on JAX 0.10.2 with optax 0.2.8
# (CPU): the losses to the four digits printed.
OPTAX_EXAMPLE_JAX = ["step    0  loss 0.1170", "step   12  loss 0.0512",
                     "step   24  loss 0.0395", "step   36  loss 0.0354",
                     "step   48  loss 0.0331", "final loss 0.0321 (from 0.1170)"]


@pytest.mark.skipif(importlib.util.find_spec("optax") is None and not os.environ.get("CI"),
                    reason="optax is not installed (the test extra installs it)")
def test_optax_example_prints_jaxs_losses(tmp_path):
  out = run_python(["-m", "jaxlite", str(ROOT / "examples" / "optax_training.py"),
                    "--steps", "60"], tmp_path)
  assert out.returncode == 0, out.stderr
  assert out.stdout.splitlines()[-6:] == OPTAX_EXAMPLE_JAX, out.stdout


# -- what optax's suite found ------------------------------------------------------------

def test_jnp_ndarray_is_jax_array_for_tracers_too():
  assert jnp.ndarray is jax.Array
  seen = []
  jax.jit(lambda x: seen.append(isinstance(x, jnp.ndarray)) or x)(1.0)
  assert seen == [True]


def test_asarray_python_int_checked_against_requested_dtype():
  x = jnp.asarray(2**32 - 1, dtype=jnp.uint32)
  assert x.dtype == np.uint32 and int(x) == 2**32 - 1
  with pytest.raises(OverflowError, match="Python integer -1 out of bounds for uint32"):
    jnp.asarray(-1, dtype=jnp.uint32)


def test_cond_operand_keyword_passes_none():
  assert jax.lax.cond(True, lambda _: 1, lambda _: 2, operand=None) == 1
  with pytest.raises(TypeError, match="if 'operand' keyword is passed"):
    jax.lax.cond(True, lambda x: x, lambda x: x, 1, operand=2)


def test_round_operator():
  r = round(jnp.float32(2.6))
  assert r.dtype == np.int32 and int(r) == 3
  assert round(jnp.float32(2.65), 1).dtype == np.float32


def test_like_functions_take_shape_dtype_struct():
  s = jax.ShapeDtypeStruct((2,), jnp.float32)
  for fn, value in [(jnp.zeros_like, 0.0), (jnp.ones_like, 1.0),
                    (lambda a: jnp.full_like(a, 3.0), 3.0)]:
    out = fn(s)
    assert out.shape == (2,) and out.dtype == np.float32 and not out.weak_type
    np.testing.assert_array_equal(out, np.full(2, value, np.float32))


# -- the sharding in the types (optax's tree.random_like, add_noise, _vdot, microbatching) --

SHARDING_REF = REF["typeof_sharding"]


def describe_sharding(s):
  """The same fields as make_ecosystem_reference.describe_sharding."""
  m = s.mesh

  def error_of(thunk):
    try:
      thunk()
    except Exception as e:  # compared, class and message
      return [type(e).__name__, str(e)]
    return None
  return {"repr": repr(s), "spec": repr(s.spec), "memory_kind": s.memory_kind,
          "num_devices": s.num_devices, "is_fully_replicated": s.is_fully_replicated,
          "mesh": repr(m), "empty": m.empty, "size": m.size, "axis_names": list(m.axis_names),
          "are_all_axes_explicit": m.are_all_axes_explicit,
          "are_all_axes_auto": m.are_all_axes_auto, "are_all_axes_manual": m.are_all_axes_manual,
          "device_set": error_of(lambda: s.device_set), "devices": error_of(lambda: m.devices)}


@pytest.mark.parametrize("shape", [(), (3,), (3, 4)])
def test_typeof_sharding_is_jax_empty_abstract_mesh(shape):
  got = describe_sharding(jax.typeof(jnp.ones(shape)).sharding)
  assert got == SHARDING_REF[f"eager{list(shape)}"]


def test_typeof_sharding_of_tracers_and_scalars():
  seen = {}

  def probe(name):
    def f(y):
      seen[name] = repr(jax.typeof(y).sharding)
      return y.sum()
    return f
  jax.jit(probe("jit"))(jnp.ones((3, 4)))
  jax.vmap(probe("vmap"))(jnp.ones((3, 4)))
  jax.grad(probe("grad"))(jnp.ones((3, 4)))
  assert seen == SHARDING_REF["traced"]
  assert repr(jax.typeof(1.0).sharding) == SHARDING_REF["python_scalar"]
  sharding = jax.typeof(jnp.ones((3, 4))).sharding
  assert list(sharding.shard_shape((3, 4))) == SHARDING_REF["shard_shape"]


def test_abstract_mesh_and_axis_types():
  from jaxlite.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec as P
  named = AbstractMesh((2, 3), ("a", "b"))
  explicit = AbstractMesh((2,), ("a",), axis_types=(AxisType.Explicit,))
  got = [[repr(m), m.size, m.are_all_axes_explicit, m.are_all_axes_auto,
          [repr(t) for t in m.axis_types]] for m in (named, explicit)]
  assert got == SHARDING_REF["abstract_meshes"]
  assert list(NamedSharding(named, P("b", "a")).shard_shape((6, 4))) == (
      SHARDING_REF["named_shard_shape"])
  with pytest.raises(ValueError) as e:
    NamedSharding(AbstractMesh((), ()), P("x"))
  assert [type(e.value).__name__, str(e.value)] == SHARDING_REF["bad_axis"]
  with pytest.raises(ValueError, match="one size per axis name"):
    AbstractMesh((2,), ("a", "b"))
  # JAX 0.10.2's errors for axis types
  with pytest.raises(ValueError, match=r"Number of axis names should match the number of "
                     r"axis_types. Got axis_names=\('a',\) and axis_types=\(Auto, Auto\)"):
    AbstractMesh((2,), ("a",), (AxisType.Auto, AxisType.Auto))
  with pytest.raises(TypeError, match="axis_types passed to AbstractMesh must be of type "
                     "`jax.sharding.AxisType`"):
    AbstractMesh((2,), ("a",), ("x",))


# -- what chex's asserts and fakes read ------------------------------------------------

CHEX_REF = REF["chex_surface"]


def test_jitted_function_name_repr_and_signature():
  import inspect

  def f(x, y=2, *, k=3):
    return x
  jitted = jax.jit(f)
  assert type(jitted).__name__ == CHEX_REF["jit_type"]
  assert repr(jitted).split(" at 0x")[0].replace(
      "test_jitted_function_name_repr_and_signature", "chex_surface") == CHEX_REF["jit_repr"]
  assert str(inspect.signature(jitted, follow_wrapped=False)) == CHEX_REF["jit_signature"]


def test_device_count_per_backend():
  assert [jax.device_count("cpu"), jax.local_device_count("cpu")] == CHEX_REF["device_count"]
  with pytest.raises(Exception, match="Unknown backend") as e:
    jax.device_count("bogus")
  assert type(e.value).__name__ == CHEX_REF["unknown_backend"]


def test_array_of_bfloat16_arrays():
  bf16 = jnp.bfloat16(128)
  listed = [jnp.array([bf16, bf16], dtype=jnp.bfloat16), jnp.array([bf16, bf16]),
            jnp.array((jnp.ones(2, jnp.bfloat16), [1.0, 2.0]), dtype=jnp.bfloat16)]
  assert [[str(a.dtype), a.tolist()] for a in listed] == CHEX_REF["array_of_bf16_arrays"]


def test_check_message_formats_payload_as_arrays():
  from jaxlite.experimental import checkify

  def checked(x, d):
    checkify.check(False, "s={} v={v} d={d} f={s:.2f}", x[0], v=x, d=d, s=x[1])
    return x
  err, _ = checkify.checkify(jax.jit(checked))(
      jnp.array([-1.0, 2.5]), {"a": jnp.float32(0), "b": jnp.int32(3)})
  assert err.get() == CHEX_REF["check_message"]
