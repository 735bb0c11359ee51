"""Names of JAX 0.10.2 that jaxlite lacked (issue 44), each checked against JAX's
behaviour: values, reprs, error classes and messages recorded from JAX 0.10.2 (inline,
or in tests/data/api_surface_reference.json, made by make_api_surface_reference.py).
The 4-device cases (smap, explicit_axes, visualize_sharding's tables) are in
spmd_cases.py, run here in a process with 4 devices."""
import dataclasses
import io
import json
import pathlib
import typing

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

from spmd_subprocess import run_cases

REF = json.loads((pathlib.Path(__file__).parent / "data" / "api_surface_reference.json")
                 .read_text())


# ----------------------------------------------------------------------------- config flags

FLAGS = {   # context manager -> (option, JAX's default)
    "allow_f16_reductions": ("jax_allow_f16_reductions", True),
    "no_execution": ("jax_no_execution", False),
    "array_garbage_collection_guard": ("jax_array_garbage_collection_guard", None),
    "auto_pcast": ("jax_auto_pcast", True),
    "remove_size_one_mesh_axis_from_type": ("jax_remove_size_one_mesh_axis_from_type", False),
    "thread_guard": ("jax_thread_guard", False),
    "jax2tf_associative_scan_reductions": ("jax2tf_associative_scan_reductions", False),
}


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_flag_defaults_and_context_managers_match_jax(name):
  option, default = FLAGS[name]
  assert getattr(jax.config, option) == default
  context = getattr(jax, name)
  value = "log" if default is None else not default
  with context(value):
    assert getattr(jax.config, option) == value
  assert getattr(jax.config, option) == default


def test_boolean_flag_context_without_a_value_turns_it_on():
  with jax.thread_guard():
    assert jax.config.jax_thread_guard is True


def test_enum_flag_errors_match_jax():
  with pytest.raises(TypeError) as info:
    with jax.array_garbage_collection_guard():
      pass
  assert str(info.value) == (
      "Context manager for array_garbage_collection_guard config option requires an "
      "argument representing the new value for the config option.")
  with pytest.raises(ValueError) as info:
    with jax.array_garbage_collection_guard("x"):
      pass
  assert str(info.value) == ("new enum value must be None or in ['allow', 'log', 'fatal'], "
                             "got x of type <class 'str'>.")
  with pytest.raises(TypeError, match="^Context manager for numpy_rank_promotion config"):
    with jax.numpy_rank_promotion():
      pass


def test_f16_sums_refused_as_jax_when_flag_is_off():
  x = jnp.ones((3, 2), jnp.float16)
  with jax.allow_f16_reductions(False):
    with pytest.raises(ValueError) as info:
      lax.reduce_sum_p.bind(x, axes=(0,), out_sharding=None)
    assert str(info.value) == ("reduce_sum on operand f16[3,2] is not allowed when "
                               "jax_allow_f16_reductions=False.")
    assert float(jnp.sum(x)) == 6.0   # jnp.sum accumulates in float32, as in JAX
    ones = lax.reduce_sum_p.bind(jnp.ones((1, 2), jnp.bfloat16), axes=(0,), out_sharding=None)
    np.testing.assert_array_equal(np.asarray(ones, np.float32), [1, 1])   # a size-1 axis


def test_f16_flag_is_part_of_jits_cache_key():
  traces = []

  @jax.jit
  def f(x):
    traces.append(1)
    return x.sum()
  x = jnp.ones(4, jnp.float16)
  f(x)
  with jax.allow_f16_reductions(False):
    f(x)
    with pytest.raises(ValueError, match="jax_allow_f16_reductions=False"):
      jax.jit(lambda x: lax.reduce_sum_p.bind(x, axes=(0,), out_sharding=None))(x)
  assert len(traces) == 2   # JAX traces twice too


def test_no_execution_refuses_eager_ops_and_jit_calls_as_jax():
  x = jnp.ones(3)
  cos = jax.jit(jnp.cos)
  cos(x)
  with jax.no_execution(True):
    with pytest.raises(RuntimeError) as info:
      jnp.sin(x)
    assert str(info.value) == ("JAX tried to execute function jit(sin), but the "
                               "no_execution config option is set")
    with pytest.raises(RuntimeError) as info:
      cos(x)
    assert str(info.value) == ("JAX tried to execute function jit(cos), but the "
                               "no_execution config option is set")
    jax.jit(jnp.exp).lower(x).compile()   # compiling is not executing, as in JAX
    called = []   # the refusal comes before the program runs: its callback never does
    with pytest.raises(RuntimeError, match="no_execution config option is set"):
      jax.jit(lambda v: jax.debug.callback(lambda u: called.append(u), v) or v)(x)
    assert called == []
  np.testing.assert_allclose(np.asarray(cos(x)), np.cos(1.0), rtol=1e-6)


def test_user_context_values_key_jits_cache_as_jax():
  traces = []

  @jax.jit
  def f(x):
    traces.append(1)
    return x * 2
  context = jax.make_user_context(None)
  f(1.)
  with context(1):
    assert (context.value, context.get_global()) == (1, None)   # as in JAX
    f(1.)
  with context(2):
    f(1.)
  with context(2):
    f(1.)
  f(1.)
  assert len(traces) == 3 and context.value is None   # JAX: 3 traces


# ----------------------------------------------------------------------------- jax.ad, memory

def test_vjp_with_refs_matches_jax():
  f = lambda x, y: (jnp.sin(x) * y).sum()
  _, f_vjp = jax.vjp(f, jnp.ones(3), 2.0)
  dx, dy = f_vjp.with_refs(jax.ad.DontWant(), jax.ad.GradValue())(1.0)
  assert dx == jax.ad.DidntWant()
  np.testing.assert_allclose(float(dy), 2.5244129, rtol=1e-6)   # JAX's values
  dx, dy = f_vjp.with_refs()(1.0)
  np.testing.assert_allclose(np.asarray(dx), [1.0806046] * 3, rtol=1e-6)
  ref = jax.new_ref(jnp.ones(3))
  assert f_vjp.with_refs(ref, jax.ad.DontWant())(1.0) == (jax.ad.GradRef(), jax.ad.DidntWant())
  np.testing.assert_allclose(np.asarray(ref[...]), [2.0806046] * 3, rtol=1e-6)   # added


def test_ad_markers_print_and_flatten_as_jax():
  assert [repr(c()) for c in (jax.ad.DontWant, jax.ad.DidntWant, jax.ad.GradRef,
                              jax.ad.GradValue)] == ["DontWant()", "DidntWant()", "GradRef()",
                                                     "GradValue()"]
  markers = [jax.ad.DidntWant(), jax.ad.DontWant(), jax.ad.GradRef(), jax.ad.GradValue()]
  assert str(jax.tree.structure(markers)) == (
      "PyTreeDef([CustomNode(DidntWant[()], []), *, CustomNode(GradRef[()], []), *])")


def test_memory_space_matches_jax():
  space = jax.memory.Space
  assert space.__name__ == "MemorySpace"
  assert [(m.name, m.value, repr(m), str(m)) for m in space] == [
      ("Device", 1, "MemorySpace.Device", "MemorySpace.Device"),
      ("Host", 2, "MemorySpace.Host", "MemorySpace.Host"),
      ("Any", 3, "MemorySpace.Any", "MemorySpace.Any")]


# ----------------------------------------------------------------------------- jax.ds

def test_ds_builds_slices_as_jax():
  assert jax.ds(None) == slice(None)
  assert repr(jax.ds(4, 2)) == "Slice(start=4, size=2, stride=1)"
  assert repr(jax.ds(3)) == "Slice(start=0, size=3, stride=1)"
  assert str(jax.tree.structure(jax.ds(1, 2))) == (
      "PyTreeDef(CustomNode(Slice[(1, 2, 1)], [None, None]))")
  with pytest.raises(ValueError, match="^Non-static stride in `dslice`$"):
    jax.ds(1, 2, jnp.int32(1))
  with pytest.raises(ValueError, match="^`stride` must be >= 0.$"):
    jax.ds(1, 2, -1)


def test_indexing_with_ds_matches_jax():
  x = jnp.arange(10)
  cases = {   # index -> JAX 0.10.2's result
      (4, 2): [4, 5], (3,): [0, 1, 2], (1, 6, 2): [1, 3, 5, 7, 9, 9], (-2, 3): [7, 8, 9],
      (8, 3, 2): [8, 9, 9], (-3, 2, 2): [0, 0], (8, 4): [6, 7, 8, 9]}
  for args, want in cases.items():
    np.testing.assert_array_equal(np.asarray(x[jax.ds(*args)]), want, err_msg=str(args))
  np.testing.assert_array_equal(jax.jit(lambda x, i: x[jax.ds(i, 3)])(x, 2), [2, 3, 4])
  np.testing.assert_array_equal(jax.jit(lambda x, i: x[jax.ds(i, 3, 2)])(x, 2), [2, 4, 6])
  y = jnp.arange(12).reshape(3, 4)
  np.testing.assert_array_equal(y[..., jax.ds(1, 2)], [[1, 2], [5, 6], [9, 10]])
  np.testing.assert_array_equal(y[None, jax.ds(1, 2), 0], [[4, 8]])
  np.testing.assert_array_equal(y[1, jax.ds(1, 2)], [5, 6])


# ----------------------------------------------------------------------------- submodules

def test_error_classes_match_jax():
  assert jax.errors.JaxprTypeError.__mro__[1] is TypeError
  assert jax.errors.InconclusiveDimensionOperation.__mro__[1] is Exception


def test_arg_info_and_compiler_options_match_jax():
  info = jax.stages.ArgInfo(jax.core.ShapedArray((2, 3), jnp.int32), True)
  assert repr(info) == "ArgInfo(_aval=ShapedArray(int32[2,3]), donated=True)"
  assert info.shape == (2, 3) and info.dtype == np.int32
  assert info == jax.stages.ArgInfo(jax.core.ShapedArray((2, 3), jnp.int32), True)
  assert dataclasses.fields(info)[0].name == "_aval"
  assert jax.stages.CompilerOptions == dict[str, typing.Union[str, bool]]
  with pytest.raises(TypeError, match="^No shape attribute with aval of type <class 'int'>$"):
    jax.stages.ArgInfo(3, False).shape


def test_manual_axis_type_matches_jax():
  m = jax.sharding.ManualAxisType(varying={"a"}, reduced={"b"})
  assert repr(m) == ("ManualAxisType(varying=frozenset({'a'}), unreduced=frozenset(), "
                     "reduced=frozenset({'b'}))")
  assert m is jax.sharding.ManualAxisType(varying=frozenset("a"), reduced={"b"})
  assert repr(m.to_ct_mat()) == ("ManualAxisType(varying=frozenset({'a'}), "
                                 "unreduced=frozenset({'b'}), reduced=frozenset())")
  assert repr(m.update(varying=frozenset())) == (
      "ManualAxisType(varying=frozenset(), unreduced=frozenset(), reduced=frozenset({'b'}))")
  with pytest.raises(ValueError) as info:
    jax.sharding.ManualAxisType(varying={"a"}, unreduced={"a"})
  assert str(info.value) == ("varying and unreduced cannot have common mesh axes. Got "
                             "varying={'a'} and unreduced={'a'}")


def test_make_single_device_sharding_matches_jax():
  s = jax.sharding.make_single_device_sharding(jax.devices()[0])
  assert s == jax.sharding.SingleDeviceSharding(jax.devices()[0])


def test_explicit_axes_needs_a_mesh_and_in_sharding_as_jax():
  x = jnp.ones((4, 4))
  with pytest.raises(ValueError) as info:
    jax.sharding.explicit_axes(lambda a: a, in_sharding=jax.P())(x)
  assert str(info.value) == ("Context mesh cannot be empty. Please use `jax.set_mesh` API to "
                             "enter into a mesh context when using `explicit_axes` API.")
  with jax.set_mesh(jax.make_mesh((1,), ("a",))):
    with pytest.raises(TypeError, match="^Missing required keyword argument: 'in_sharding'$"):
      jax.sharding.explicit_axes(lambda a: a)(x)


def test_default_registry_matches_jax():
  r = jax.tree_util.default_registry
  assert r.flatten_one_level((1, (2, 3))) == ((1, (2, 3)), None)
  assert r.flatten_one_level(1) is None
  assert r.is_node(tuple) and not r.is_node(int)
  leaves, treedef = r.flatten({"a": (1, [2])}, lambda x: isinstance(x, list))
  assert leaves == [1, [2]] and str(treedef) == "PyTreeDef({'a': (*, *)})"
  pairs, treedef = r.flatten_with_path({"a": (1, None)})
  assert str(pairs) == "[((DictKey(key='a'), SequenceKey(idx=0)), 1)]"
  assert str(treedef) == "PyTreeDef({'a': (*, None)})"


def test_random_gamma_p_is_gammas_primitive():
  assert str(jax.random.random_gamma_p) == "random_gamma"
  jaxpr = jax.make_jaxpr(lambda k, a: jax.random.gamma(k, a))(jax.random.key(0), 2.0)
  assert "random_gamma[log_space=False]" in str(jaxpr)


def test_scaled_dot_general_and_configs_match_jax():
  c = jax.nn.get_scaled_dot_general_config("mxfp8")
  assert repr(c) == ("BlockScaleConfig(mode='mxfp8', block_size=32, data_type=<class "
                     "'ml_dtypes.float8_e4m3fn'>, scale_type=<class 'ml_dtypes.float8_e8m0fnu'>, "
                     "global_scale=None, infer_only=False)")
  n = jax.nn.get_scaled_dot_general_config("nvfp4")
  assert (n.block_size, n.data_type.__name__, n.scale_type.__name__) == (
      16, "float4_e2m1fn", "float8_e4m3fn")
  np.testing.assert_array_equal(np.asarray(n.global_scale), [1.0])
  with pytest.raises(ValueError, match="^Unsupported mode: x$"):
    jax.nn.get_scaled_dot_general_config("x")
  lhs = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], np.float32)
  rhs = np.array([[1.0, 2.0], [0.5, -1.0], [-0.25, 0.75]], np.float32)
  out = jax.nn.scaled_dot_general(lhs.astype(jnp.bfloat16), rhs.astype(jnp.bfloat16),
                                  (((1,), (0,)), ((), ())))
  assert out.dtype == np.float32   # preferred_element_type's default, as in JAX
  np.testing.assert_allclose(np.asarray(out), lhs @ rhs, rtol=1e-6)
  with pytest.raises(NotImplementedError):   # a cuDNN kernel: JAX's CPU raises too
    jax.nn.scaled_dot_general(jnp.ones((3, 64, 64)), jnp.ones((3, 64, 64)),
                              (((2,), (2,)), ((0,), (0,))), configs=[c] * 3)


def test_smap_needs_a_mesh_as_jax():
  with pytest.raises(ValueError) as info:
    jax.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="a")(jnp.ones(2))
  assert str(info.value) == ("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                             "enter into a mesh context")


# ----------------------------------------------------------------------------- jax.debug

def test_visualize_sharding_on_one_device_matches_jax(capsys):
  pytest.importorskip("rich")
  d = jax.sharding.SingleDeviceSharding(jax.devices()[0])
  ref = REF["1"]["visualize"]
  jax.debug.visualize_sharding((4, 4), d, use_color=False)
  assert capsys.readouterr().out == ref["single_4x4"]
  jax.debug.visualize_sharding((8,), d, use_color=False)
  assert capsys.readouterr().out == ref["single_8"]
  jax.debug.visualize_sharding((8, 2), d, use_color=False, scale=2, min_width=12)
  assert capsys.readouterr().out == ref["single_8x2_scale2_min12"]
  with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dimensions"):
    jax.debug.visualize_sharding((2, 2, 2), d)


def test_inspect_array_sharding_calls_back_with_the_sharding():
  seen = []
  jax.debug.inspect_array_sharding(jnp.ones(3), callback=seen.append)
  assert repr(seen[0]) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"


def _run_breakpoints(commands):
  out = io.StringIO()

  def f(x):
    y = x * 2
    jax.debug.breakpoint(stdin=io.StringIO(commands), stdout=out)
    return y + 1
  result = jax.jit(f)(jnp.arange(3.))
  return out.getvalue(), result


def test_breakpoint_shows_runtime_values_as_jax():
  text, result = _run_breakpoints("p y\nnope\np x.sum()\nc\n")
  assert text == ("Entering jdb:\n(jdb) Array([0., 2., 4.], dtype=float32)\n(jdb) *** "
                  "NameError: name 'nope' is not defined\n(jdb) Array(3., dtype=float32)\n"
                  "(jdb) ")   # JAX 0.10.2's session
  np.testing.assert_array_equal(result, [1., 3., 5.])


def test_breakpoint_with_token_returns_it_as_jax():
  out = io.StringIO()
  t = jax.jit(lambda x: jax.debug.breakpoint(token=x * 3, stdin=io.StringIO("p x\nc\n"),
                                             stdout=out))(jnp.ones(2))
  np.testing.assert_array_equal(t, [3., 3.])
  assert out.getvalue() == "Entering jdb:\n(jdb) Array([1., 1.], dtype=float32)\n(jdb) "
  with pytest.raises(ValueError, match="^`ordered` and `token` are mutually exclusive"):
    jax.debug.breakpoint(token=1, ordered=True)


# ----------------------------------------------------------------------------- 4 devices

def test_sharding_names_on_four_devices():
  run_cases(4, "visualize or smap or explicit_axes")
