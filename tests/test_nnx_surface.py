"""The JAX surface flax.nnx 0.12.8 needs beyond flax.linen (issue 44): ``Effect``, the
``out_sharding`` keyword of the dot and convolution functions, mutable array references'
types (tests/test_refs.py tests the refs themselves), and the names of hijax
(tests/test_hijax.py runs hijax types).

flax itself runs in tests/test_examples.py (examples/flax_nnx.py, when flax is installed);
these tests need neither flax nor the real jax.
"""
import inspect
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.experimental import hijax as hjx
from jaxlite.extend import core as jex
from jaxlite.sharding import NamedSharding, PartitionSpec as P

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_as_jax(code):
  """Run ``code`` with ``python -m jaxlite -c``, this checkout first on the path."""
  env = dict(os.environ, PYTHONPATH=str(ROOT))
  return subprocess.run([sys.executable, "-m", "jaxlite", "-c", textwrap.dedent(code)],
                        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


# ----------------------------------------------------------------------------- the imports

def test_the_modules_nnx_imports_at_module_level_are_served_under_the_alias():
  out = run_as_jax("""
      import sys
      import jax, jax.interpreters.ad, jax.experimental.checkify
      from jax.extend.core import Effect
      from jax._src.state.types import AbstractRef
      from jax.experimental import hijax as hjx
      from jax._src import checkify as checkify_lib
      from jax._src.tree_util import _registry
      print('jaxlite._src.checkify' in sys.modules)   # imported above, not by `import jax`
      print(hjx.Zero is jax.interpreters.ad.Zero, hjx.AbstractValue is jax.core.AbstractValue)
      print(checkify_lib.user_checks == jax.experimental.checkify.user_checks)
      class Node:
        pass
      jax.tree_util.register_pytree_node(Node, lambda n: ((), None), lambda a, c: Node())
      print(Node in _registry, dict in _registry, int in _registry)
      print(hasattr(jax, 'new_ref') and hasattr(jax, 'Ref'))   # nnx's version gate
      """)
  assert out.returncode == 0, out.stderr
  assert out.stdout.split("\n")[:5] == [
      "True", "True True", "True", "True True False", "True"], out.stdout


def test_import_jax_does_not_load_checkify_as_jaxs_does_not():
  out = run_as_jax("import sys, jax; print('jaxlite._src.checkify' in sys.modules)")
  assert out.stdout.strip() == "False", out.stderr


# ----------------------------------------------------------------------------- Effect

class LogEffect(jex.Effect):
  pass


def _note_primitive(log):
  """A primitive with a side effect (appending to ``log``) and no result."""
  note_p = jex.Primitive("note")
  note_p.multiple_results = True
  note_p.def_impl(lambda x: (log.append(float(np.asarray(x))), [])[1])
  effect = LogEffect()
  note_p.def_effectful_abstract_eval(lambda x: ([], {effect}))
  return note_p, effect


def test_an_effect_subclass_marks_a_library_primitive_effectful():
  log = []
  note_p, effect = _note_primitive(log)

  def f(x):
    note_p.bind(x)
    return x + 1
  closed = jax.make_jaxpr(f)(1.0)
  assert closed.effects == {effect} and closed.jaxpr.eqns[0].effects == {effect}
  out, effects = note_p.abstract_eval(jax.core.ShapedArray((), np.float32))
  assert out == [] and effects == {effect}
  # dead-code elimination keeps it though nothing reads its (empty) result
  assert float(jax.jit(f)(4.0)) == 5.0 and log == [4.0]


def test_an_effectful_library_primitive_runs_inside_scan_and_cond():
  log = []
  note_p, effect = _note_primitive(log)

  def body(c, _):
    note_p.bind(c)
    return c + 1, None
  scanned = lambda x: lax.scan(body, x, None, length=3)[0]
  assert jax.make_jaxpr(scanned)(1.0).effects == {effect}
  assert float(jax.jit(scanned)(1.0)) == 4.0 and log == [1.0, 2.0, 3.0]
  branch = jax.jit(lambda x: lax.cond(x > 0, lambda: (note_p.bind(x), x)[1], lambda: x))
  assert float(branch(2.0)) == 2.0 and log[-1] == 2.0


def test_jaxlites_own_effectful_primitives_keep_standing_for_their_effects():
  def f(x):
    jax.debug.print("{}", x)
    return x
  (eqn,) = jax.make_jaxpr(f)(1.0).jaxpr.eqns
  assert eqn.effects == {eqn.primitive}
  assert jax.make_jaxpr(lambda x: x * 2)(1.0).effects == frozenset()


def test_effect_type_sets_hold_classes_and_checkifys_errors_are_allowed_in_control_flow():
  from jaxlite._src import checkify
  from jaxlite._src.base import effects
  allowed = effects.EffectTypeSet()
  allowed.add_type(LogEffect)

  class Other(jex.Effect):
    pass
  log, other = LogEffect(), Other()
  assert allowed.contains(log) and not allowed.contains(other)
  assert allowed.filter_in([log, other]) == [log]
  assert allowed.filter_not_in([log, other]) == [other]
  error_effect = checkify.ErrorEffect(checkify.FailedCheckError, ())
  assert isinstance(error_effect, jex.Effect)
  assert hjx.control_flow_allowed_effects.contains(error_effect)


# ----------------------------------------------------------------------------- out_sharding

X = np.arange(12.0, dtype=np.float32).reshape(4, 3)
W = np.arange(6.0, dtype=np.float32).reshape(3, 2)
DN = (((1,), (0,)), ((), ()))
KERNEL = np.arange(12.0, dtype=np.float32).reshape(2, 3, 2)   # OIW
SIGNAL = np.arange(15.0, dtype=np.float32).reshape(1, 3, 5)   # NCW


def _calls():
  """Each function that takes out_sharding, as ``call(out_sharding=...)``; a missing
  keyword means the call without it."""
  return {
      "dot_general": lambda **kw: lax.dot_general(X, W, DN, **kw),
      "conv_general_dilated": lambda **kw: lax.conv_general_dilated(
          SIGNAL, KERNEL, (1,), "SAME", **kw),
      "einsum": lambda **kw: jnp.einsum("ij,jk->ik", X, W, **kw),
      "dot": lambda **kw: jnp.dot(X, W, **kw),
  }


def _one_device_shardings():
  mesh = jax.make_mesh((1,), ("x",))
  return [None, jax.typeof(jnp.ones(3)).sharding, NamedSharding(mesh, P()),
          NamedSharding(mesh, P("x"))]


@pytest.mark.parametrize("name", sorted(_calls()))
def test_out_sharding_on_one_device_matches_the_call_without_it(name):
  call = _calls()[name]
  want = np.asarray(call())
  for sharding in _one_device_shardings():
    np.testing.assert_array_equal(np.asarray(call(out_sharding=sharding)), want)
    jitted = jax.jit(lambda s=sharding: call(out_sharding=s))()
    np.testing.assert_allclose(np.asarray(jitted), want, rtol=1e-6)


def test_out_sharding_none_stages_the_same_jaxpr():
  for call in _calls().values():
    assert str(jax.make_jaxpr(lambda: call(out_sharding=None))()) == str(
        jax.make_jaxpr(call)())


def test_out_sharding_is_differentiable():
  mesh = jax.make_mesh((1,), ("x",))
  loss = lambda w, s: jnp.sum(lax.dot_general(X, w, DN, out_sharding=s) ** 2)
  want = jax.grad(loss)(W, None)
  np.testing.assert_allclose(jax.grad(loss)(W, NamedSharding(mesh, P("x"))), want)


@pytest.mark.parametrize("name", sorted(_calls()))
def test_out_sharding_rejects_what_jax_rejects(name):
  call = _calls()[name]
  # JAX 0.10.2 outside a mesh context (jaxlite has none)
  with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh"):
    call(out_sharding=P())
  api = "einsum" if name == "einsum" else "dot_general"
  with pytest.raises(TypeError, match=f"`out_sharding` argument of {api} only supports "
                     "instances of `NamedSharding` or `PartitionSpec`"):
    call(out_sharding="x")


def test_out_sharding_parameters_are_jaxs():
  keyword_only = inspect.Parameter.KEYWORD_ONLY
  for function, kind in [(lax.dot_general, keyword_only), (jnp.einsum, keyword_only),
                         (jnp.dot, keyword_only),
                         (lax.conv_general_dilated, inspect.Parameter.POSITIONAL_OR_KEYWORD)]:
    parameter = inspect.signature(function).parameters["out_sharding"]
    assert parameter.kind is kind and parameter.default is None, function


def test_einsum_computes_its_contractions_with_the_dot_general_it_is_given():
  calls = []

  def counting_dot_general(*args, **kwargs):
    calls.append(kwargs)
    return lax.dot_general(*args, **kwargs)
  out = jnp.einsum("ij,jk,kl->il", X, W, W.T, _dot_general=counting_dot_general)
  np.testing.assert_allclose(out, X @ W @ W.T, rtol=1e-6)
  assert len(calls) == 2 and all("preferred_element_type" in kw for kw in calls)


# ----------------------------------------------------------------------------- refs

def test_no_jaxlite_value_is_a_ref():
  x = jnp.ones(3)
  assert not isinstance(x, jax.Ref)
  assert not isinstance(jax.typeof(x), jax.ref.AbstractRef)
  jax.jit(lambda v: (isinstance(v, jax.Ref), v)[1])(x)


def test_a_ref_is_a_ref_and_its_type_an_abstract_ref():
  r = jax.new_ref(jnp.ones(3))
  assert isinstance(r, jax.Ref) and isinstance(jax.typeof(r), jax.ref.AbstractRef)
  assert bool(jax.jit(lambda v: isinstance(v, jax.Ref))(r))   # (inside jit too)


@pytest.mark.parametrize("use", [
    lambda: jax.freeze(None), lambda: jax.free_ref(None), lambda: jax.ref.get(None, ()),
    lambda: jax.ref.set(None, (), 1.0), lambda: jax.ref.swap(None, (), 1.0),
    lambda: jax.ref.addupdate(None, (), 1.0), lambda: jax.Ref(None, None)])
def test_using_a_non_ref_as_a_ref_raises_and_says_what_to_do(use):
  with pytest.raises(TypeError, match="jax.new_ref"):
    use()


# ----------------------------------------------------------------------------- hijax

class NewBox(hjx.HiPrimitive):
  """A primitive of the kind flax.nnx defines at import (its NewVariable)."""

  def is_high(self, *leaves, treedef):
    return True

  def abstract_eval(self, *leaves, treedef):
    return hjx.AvalQDD(BoxType(), treedef), set()

  def to_lojax(self, *leaves, treedef):
    return leaves

  def jvp(self, primals, tangents, *, treedef):
    return self.bind(*primals, treedef=treedef), self.bind(*tangents, treedef=treedef)

  def transpose(self, *args, treedef):
    raise NotImplementedError


class BoxType(hjx.MutableHiType):
  size = hjx.aval_property(lambda box: 1)
  double = hjx.aval_method(lambda box, x: 2 * x)


def test_hijax_types_and_primitives_can_be_defined_and_made():
  box_p = NewBox("new_box")
  assert box_p.name == "new_box" and isinstance(box_p, jex.Primitive)
  assert BoxType.is_high and BoxType.has_qdd and issubclass(BoxType, hjx.AbstractValue)
  assert BoxType.size.fget(None) == 1 and BoxType.double.fun(None, 3) == 6
  qdd = hjx.AvalQDD(BoxType(), "contents")
  assert qdd.aval.has_qdd and qdd.qdd == "contents"
  mutable = hjx.AvalMutableQDD(BoxType(), ["contents"])
  assert mutable.mutable_qdd == ["contents"]


def test_register_hitype_records_the_type_as_jax_does():
  from jaxlite._src.core import pytypes

  from jaxlite._src.core import core
  from jaxlite._src.core.state import types

  class Box:
    pass
  hjx.register_hitype(Box, lambda box: BoxType())
  try:
    assert isinstance(pytypes.pytype_aval_mappings[Box](Box()), BoxType)
    assert isinstance(jax.typeof(Box()), BoxType)
  finally:
    for table in (pytypes.pytype_aval_mappings, core.hitype_avals, types.hi_rules):
      del table[Box]


def test_the_hijax_names_that_are_jaxlites_own():
  from jaxlite.interpreters import ad
  assert hjx.Zero is ad.Zero and hjx.instantiate_zeros is ad.instantiate_zeros
  assert hjx.is_undefined_primal is ad.is_undefined_primal
  assert hjx.AbstractValue is jax.core.AbstractValue
  assert hjx.ShapedArray is jax.core.ShapedArray and hjx.AbstractRef is jax.ref.AbstractRef
  zero = ad.Zero(jax.core.ShapedArray((2,), np.float32))
  np.testing.assert_array_equal(hjx.instantiate_zeros(zero), np.zeros(2, np.float32))
