"""Matmul precision and transcendental accuracy, recorded and lowered as JAX 0.10.2 does.

The expected params, StableHLO attributes, jaxprs and messages were recorded from JAX
0.10.2: ``str(eqn.params[...])`` of ``jax.make_jaxpr``, and the attributes of the op in
``jax.jit(f).lower(...).compiler_ir('stablehlo').operation.get_asm(
print_generic_op_form=True)``, the generic form jaxlite writes. Both are platform-
independent text. On the CPU (both tiers) precision and accuracy change no value, so
results are checked against NumPy.
"""
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import config, lax
from jaxlite._src.lax import elementwise as ew

P = lax.Precision


def _pair(name):
  return f"[#stablehlo<precision {name}>, #stablehlo<precision {name}>]"


DEFAULT, HIGH, HIGHEST = _pair("DEFAULT"), _pair("HIGH"), _pair("HIGHEST")
_PARAM = {"DEFAULT": "(Precision.DEFAULT, Precision.DEFAULT)",
          "HIGH": "(Precision.HIGH, Precision.HIGH)",
          "HIGHEST": "(Precision.HIGHEST, Precision.HIGHEST)"}

# precision= -> (str of the jaxpr param, the lowered precision_config)
PRECISIONS = [
    (None, "None", DEFAULT),
    (P.DEFAULT, _PARAM["DEFAULT"], DEFAULT),
    (P.HIGH, _PARAM["HIGH"], HIGH),
    (P.HIGHEST, _PARAM["HIGHEST"], HIGHEST),
    ("default", _PARAM["DEFAULT"], DEFAULT),
    ("high", _PARAM["HIGH"], HIGH),
    ("highest", _PARAM["HIGHEST"], HIGHEST),
    ("bfloat16", _PARAM["DEFAULT"], DEFAULT),
    ("tensorfloat32", _PARAM["HIGH"], HIGH),
    ("float32", _PARAM["HIGHEST"], HIGHEST),
    ("fastest", _PARAM["DEFAULT"], DEFAULT),
    ("bfloat16_3x", _PARAM["HIGH"], HIGH),
    (("high", "highest"), "(Precision.HIGH, Precision.HIGHEST)",
     "[#stablehlo<precision HIGH>, #stablehlo<precision HIGHEST>]"),
    ((P.HIGHEST, P.DEFAULT), "(Precision.HIGHEST, Precision.DEFAULT)",
     "[#stablehlo<precision HIGHEST>, #stablehlo<precision DEFAULT>]"),
    (["highest", "high"], "(Precision.HIGHEST, Precision.HIGH)",
     "[#stablehlo<precision HIGHEST>, #stablehlo<precision HIGH>]"),
    # a preset is recorded as itself and lowered with DEFAULT (JAX adds an algorithm)
    ("F32_F32_F32", "F32_F32_F32", DEFAULT),
    (lax.DotAlgorithmPreset.BF16_BF16_F32, "BF16_BF16_F32", DEFAULT),
]
# jax_default_matmul_precision -> the precision a dot without one gets
DEFAULT_PRECISIONS = {"default": "DEFAULT", "high": "HIGH", "highest": "HIGHEST",
                      "bfloat16": "DEFAULT", "tensorfloat32": "HIGH", "float32": "HIGHEST"}
PRECISION_MESSAGE = (
    "Precision argument must be one of:\n- None,\n- a string in ['highest', 'float32', "
    "'high', 'bfloat16_3x', 'tensorfloat32', 'default', 'bfloat16', 'fastest', None],\n- a "
    "lax.Precision value,\n- a tuple of two lax.Precision values or strings,\n- a "
    "lax.DotAlgorithmPreset or the name of one of these presets, or\n- a lax.DotAlgorithm "
    "value;\nbut got bad.")
BAD_PRECISIONS = [(3, "but got 3."), (("high",), "but got ('high',)."),
                  (("high", P.HIGH), "but got ('high', Precision.HIGH)."),
                  (("a", "b"), "but got a.")]

TOLERANCE = lax.Tolerance(1e-5, 1e-6, 2)
ACCURACIES = {
    "T": (TOLERANCE, "#stablehlo.result_accuracy<atol = 1.000000e-05, rtol = "
                     "9.9999999999999995E-7, ulps = 2, mode = "
                     "#stablehlo.result_accuracy_mode<TOLERANCE>>"),
    "H": (lax.AccuracyMode.HIGHEST,
          "#stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>"),
    "D": (lax.AccuracyMode.DEFAULT,
          "#stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<DEFAULT>>"),
}
# the functions that take accuracy (as recorded from JAX) -> the op carrying it
# (logistic: none, as JAX lowers it as 1 / (1 + exp(-x)) without it)
ACCURATE_OPS = {
    "exp": "exponential", "exp2": "exponential", "log": "log", "log1p": "log_plus_one",
    "expm1": "exponential_minus_one", "tanh": "tanh", "logistic": None, "sin": "sine",
    "cos": "cosine", "tan": "tan", "sqrt": "sqrt", "rsqrt": "rsqrt", "cbrt": "cbrt"}
# the primitives whose spec says they take accuracy
ACCURATE = sorted(spec.name for spec in ew.specs.values() if spec.accuracy)
# atol -> its text in the lowered attribute (MLIR's float printing)
ATOL_TEXT = [
    (1e-05, "1.000000e-05"), (1e-06, "9.9999999999999995E-7"),
    (0.3333333333333333, "0.33333333333333331"), (1.234567e-05, "1.2345670000000001E-5"),
    (1234567.0, "0x4132D68700000000"), (12345678.9, "12345678.9"),
    (1.2345678901234568e+22, "1.2345678901234568E+22"), (5e-324, "4.940660e-324"),
    (0.00123456789, "0.0012345678899999999"), (1e+23, "9.9999999999999991E+22"),
    (1e-14, "9.9999999999999999E-15"), (0.009999995, "0.0099999949999999993"),
    (99999.95, "99999.949999999997"), (0.000123456789, "1.23456789E-4"),
    (float("inf"), "0x7FF0000000000000"), (2.0, "2.000000e+00")]

GRADS = {
    "exp": """{ lambda ; a:f32[]. let
    b:f32[] = exp[accuracy=AccuracyMode.HIGHEST] a
    c:f32[] = mul 1.0:f32[] b
  in (c,) }""",
    "expm1": """{ lambda ; a:f32[]. let
    _:f32[] = expm1[accuracy=AccuracyMode.HIGHEST] a
    b:f32[] = exp[accuracy=AccuracyMode.HIGHEST] a
    c:f32[] = mul 1.0:f32[] b
  in (c,) }""",
    "tanh": """{ lambda ; a:f32[]. let
    _:f32[] = tanh[accuracy=AccuracyMode.HIGHEST] a
    b:f32[] = mul 2.0:f32[] a
    c:f32[] = logistic[accuracy=AccuracyMode.HIGHEST] b
    d:f32[] = mul -2.0:f32[] a
    e:f32[] = logistic[accuracy=AccuracyMode.HIGHEST] d
    f:f32[] = mul c e
    g:f32[] = mul 4.0:f32[] f
    h:f32[] = mul 1.0:f32[] g
  in (h,) }""",
    "logistic": """{ lambda ; a:f32[]. let
    b:f32[] = logistic[accuracy=AccuracyMode.HIGHEST] a
    c:f32[] = neg a
    d:f32[] = logistic c
    e:f32[] = mul b d
    f:f32[] = mul 1.0:f32[] e
  in (f,) }""",
    "sin": """{ lambda ; a:f32[]. let
    _:f32[] = sin[accuracy=AccuracyMode.HIGHEST] a
    b:f32[] = cos a
    c:f32[] = mul 1.0:f32[] b
  in (c,) }""",
    "cos": """{ lambda ; a:f32[]. let
    _:f32[] = cos[accuracy=AccuracyMode.HIGHEST] a
    b:f32[] = sin[accuracy=AccuracyMode.HIGHEST] a
    c:f32[] = neg 1.0:f32[]
    d:f32[] = mul c b
  in (d,) }""",
    "sqrt": """{ lambda ; a:f32[]. let
    b:f32[] = sqrt[accuracy=AccuracyMode.HIGHEST] a
    c:f32[] = div 0.5:f32[] b
    d:f32[] = mul 1.0:f32[] c
  in (d,) }""",
}

D = dict(c64=np.complex64, f32=np.float32, f16=np.float16, bf16=jnp.bfloat16,
         i8=np.int8, i16=np.int16, i32=np.int32, u8=np.uint8, u32=np.uint32, bool=np.bool_)
_NARROWER = ("`preferred_element_type` must not be narrower than the original type, got "
             "preferred_element_type of {} for result type of {}.")
# (operands, preferred type, JAX's message or None, JAX's values (to a few ulps) or None)
DOT_PREFERRED = [
    ("c64", "bool", _NARROWER.format("bool", "complex64"), None),
    ("c64", "u8", _NARROWER.format("uint8", "complex64"), None),
    ("c64", "bf16", _NARROWER.format("bfloat16", "complex64"), None),
    ("i32", "i8", _NARROWER.format("int8", "int32"), None),
    ("i32", "bool", _NARROWER.format("bool", "int32"), None),
    ("i32", "f16", _NARROWER.format("float16", "int32"), None),
    ("i8", "bool", _NARROWER.format("bool", "int8"), None),
    ("u32", "u8", _NARROWER.format("uint8", "uint32"), None),
    ("c64", "i32", None, [-11, -17, 3, 8]),
    ("c64", "f32", None, [-11.06, -17.69, 3.34, 8.41]),
    ("f32", "i32", None, [-8, -14, 15, 20]),
    ("f32", "bool", None, [True, True, True, True]),
    ("i32", "c64", None, [-2, -5, 12, 15]),
    ("bool", "f32", None, [2.0, 3.0, 2.0, 3.0]),
    ("i32", "u32", None, [4294967294, 4294967291, 12, 15]),
    ("f32", "f16", None, [-8.0625, -14.6875, 15.34375, 20.40625]),
]
_KINDS = ("Input type is incompatible with `preferred_element_type`. The compatible "
          "combinations of (input_type, preferred_element_type) are (integral, integral), "
          "(integral, floating), (floating, floating), (complex, complex.")
_SIGN = "`preferred_element_type` must have the same signedness as the original type."
_WIDTH = "`preferred_element_type` must not be narrower than the original type."
CONV_PREFERRED = [
    ("c64", "i32", _KINDS), ("c64", "f32", _KINDS), ("f32", "i32", _KINDS),
    ("f32", "bool", _KINDS), ("f32", "c64", _KINDS), ("i32", "c64", _KINDS),
    ("f16", "i32", _KINDS), ("f32", "f16", _WIDTH), ("i32", "i16", _WIDTH),
    ("i32", "f16", _WIDTH), ("i32", "u32", _SIGN), ("u8", "i32", None),
    ("i32", "f32", None), ("bool", "i32", None), ("i8", "f16", None), ("bool", "f32", None),
    ("c64", "c64", None)]


def _attr(text, op, name):
  """The value of attribute ``name`` of the (single) ``op`` in lowered ``text``."""
  values = [m.group(1) for line in text.splitlines() if f'"stablehlo.{op}"' in line
            for m in [re.search(rf"{name} = (\[[^\]]*\]|#stablehlo\.[a-z_]+<.*?>>?)(?=[,}}])",
                                line)] if m]
  assert len(values) <= 1, text
  return values[0] if values else None


def _lowered(f, *args):
  return jax.jit(f).lower(*args).as_text(dialect="stablehlo")


X, Y = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), np.ones((3, 4), np.float32)
LHS = np.linspace(-1, 1, 50, dtype=np.float32).reshape(1, 2, 5, 5)
KERNEL = np.linspace(0, 1, 54, dtype=np.float32).reshape(3, 2, 3, 3)


@pytest.fixture
def default_precision():
  """Restores ``jax_default_matmul_precision`` after a test that sets it."""
  old = config.jax_default_matmul_precision
  yield
  config.update("jax_default_matmul_precision", old)


# -- precision= ----------------------------------------------------------------------------

@pytest.mark.parametrize("precision,param,lowered", PRECISIONS,
                         ids=[repr(p[0]) for p in PRECISIONS])
def test_precision_is_recorded_and_lowered_as_jax(precision, param, lowered):
  f = lambda a, b: lax.dot(a, b, precision=precision)
  (eqn,) = jax.make_jaxpr(f)(X, Y).jaxpr.eqns
  assert str(eqn.params["precision"]) == param
  printed = str(jax.make_jaxpr(f)(X, Y))
  assert (f"precision={param}" in printed) == (precision is not None), printed
  assert _attr(_lowered(f, X, Y), "dot_general", "precision_config") == lowered


def test_jaxpr_prints_precision_as_jax():
  assert str(jax.make_jaxpr(lambda a, b: lax.dot(a, b, precision="highest"))(X, Y)) == """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
    ] a b
  in (c,) }"""
  assert str(jax.make_jaxpr(lambda a, b: lax.dot(a, b))(X, Y)) == """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b
  in (c,) }"""


def test_bad_precision_raises_jax_error():
  with pytest.raises(ValueError) as info:
    lax.dot(X, Y, precision="bad")
  assert str(info.value) == PRECISION_MESSAGE
  for precision, ending in BAD_PRECISIONS:
    with pytest.raises(ValueError, match=re.escape(ending)):
      jax.jit(lambda a, b, p=precision: lax.dot_general(a, b, (((1,), (0,)), ((), ())), p))(
          X, Y)


PRODUCTS = {
    "jnp.dot": lambda a, b, p: jnp.dot(a, b, precision=p),
    "jnp.matmul": lambda a, b, p: jnp.matmul(a, b, precision=p),
    "jnp.einsum": lambda a, b, p: jnp.einsum("ij,jk->ik", a, b, precision=p),
    "jnp.tensordot": lambda a, b, p: jnp.tensordot(a, b, 1, precision=p),
    "jnp.inner": lambda a, b, p: jnp.inner(a, b.T, precision=p),
    "jnp.vdot": lambda a, b, p: jnp.vdot(a[0], b[:, 0], precision=p),
    "jnp.linalg.multi_dot": lambda a, b, p: jnp.linalg.multi_dot([a, b, b.T], precision=p),
    "lax.batch_matmul": lambda a, b, p: lax.batch_matmul(a[None], b[None], precision=p),
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_products_built_on_dot_general_pass_precision_on(name):
  f = lambda a, b: PRODUCTS[name](a, b, "highest")
  lowered = _lowered(f, X, Y)
  configs = re.findall(r"precision_config = (\[[^\]]*\])", lowered)
  assert configs and set(configs) == {HIGHEST}, lowered
  np.testing.assert_allclose(jax.jit(f, backend="numpy")(X, Y),
                             PRODUCTS[name](X, Y, None), rtol=1e-6)


def test_convolution_precision_is_recorded_and_lowered_as_jax():
  f = lambda a, b: lax.conv(a, b, (1, 1), "SAME", precision=("highest", "high"))
  (eqn,) = jax.make_jaxpr(f)(LHS, KERNEL).jaxpr.eqns
  assert str(eqn.params["precision"]) == "(Precision.HIGHEST, Precision.HIGH)"
  assert "precision=None" in str(jax.make_jaxpr(
      lambda a, b: lax.conv(a, b, (1, 1), "SAME"))(LHS, KERNEL))   # JAX prints every param
  assert _attr(_lowered(f, LHS, KERNEL), "convolution", "precision_config") == \
      "[#stablehlo<precision HIGHEST>, #stablehlo<precision HIGH>]"
  assert _attr(_lowered(lambda a, b: lax.conv(a, b, (1, 1), "SAME"), LHS, KERNEL),
               "convolution", "precision_config") == DEFAULT


def test_gradients_keep_the_precision():
  grads = jax.grad(lambda a, b: lax.dot(a, b, precision=("highest", "high")).sum(),
                   argnums=(0, 1))
  for eqn in jax.make_jaxpr(grads)(X, Y).jaxpr.eqns:
    if eqn.primitive.name == "dot_general":
      assert str(eqn.params["precision"]) == "(Precision.HIGHEST, Precision.HIGH)"
  conv_grad = jax.grad(lambda a, k: (lax.conv(a, k, (1, 1), "SAME", precision="high") ** 2
                                     ).sum(), argnums=(0, 1))
  configs = re.findall(r"precision_config = (\[[^\]]*\])", _lowered(conv_grad, LHS, KERNEL))
  assert len(configs) == 3 and set(configs) == {HIGH}


# -- jax.default_matmul_precision ----------------------------------------------------------

@pytest.mark.parametrize("value,level", DEFAULT_PRECISIONS.items())
def test_default_matmul_precision_sets_what_a_dot_without_one_gets(value, level):
  with jax.default_matmul_precision(value):
    (eqn,) = jax.make_jaxpr(lambda a, b: lax.dot(a, b))(X, Y).jaxpr.eqns
    lowered = _lowered(lambda a, b: a @ b, X, Y)
  assert str(eqn.params["precision"]) == _PARAM[level]
  assert _attr(lowered, "dot_general", "precision_config") == _pair(level)


def test_explicit_precision_overrides_the_default(default_precision):
  config.update("jax_default_matmul_precision", "float32")
  assert _attr(_lowered(lambda a, b: lax.dot(a, b, precision="high"), X, Y),
               "dot_general", "precision_config") == HIGH
  assert _attr(_lowered(lambda a, b: lax.conv(a, b, (1, 1), "SAME"), LHS, KERNEL),
               "convolution", "precision_config") == HIGHEST


def test_default_matmul_precision_from_the_environment():
  code = ("import jaxlite as jax, numpy as np\n"
          "x = np.ones((2, 2), np.float32)\n"
          "print(jax.make_jaxpr(lambda a: a @ a)(x).jaxpr.eqns[0].params['precision'])\n")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**__import__("os").environ,
                            "JAX_DEFAULT_MATMUL_PRECISION": "tensorfloat32"}, timeout=120)
  assert out.stdout.strip() == "(Precision.HIGH, Precision.HIGH)", out.stderr


def test_jit_retraces_when_the_default_precision_changes(default_precision):
  """As JAX: the default is part of the trace context, so a cached trace made under
  another value is not reused, and going back reuses the first."""
  traces = []

  @jax.jit
  def f(a, b):
    traces.append(1)
    return a @ b

  f(X, Y)
  f(X, Y)
  assert len(traces) == 1
  with jax.default_matmul_precision("float32"):
    f(X, Y)
    assert len(traces) == 2
    assert _attr(f.lower(X, Y).as_text(dialect="stablehlo"), "dot_general",
                 "precision_config") == HIGHEST
  f(X, Y)
  assert len(traces) == 2
  config.update("jax_default_matmul_precision", "tensorfloat32")
  config.update("jax_explain_cache_misses", True)
  try:
    with warnings.catch_warnings(record=True) as caught:
      warnings.simplefilter("always")
      f(X, Y)
  finally:
    config.update("jax_explain_cache_misses", False)
  assert len(traces) == 3
  assert any("jax_default_matmul_precision changed None -> tensorfloat32" in str(w.message)
             for w in caught), [str(w.message) for w in caught]


def _valid_conv(x, k):
  """NCHW x OIHW, stride 1, no padding, in float64."""
  oh, ow = x.shape[2] - k.shape[2] + 1, x.shape[3] - k.shape[3] + 1
  windows = np.stack([np.stack([x[:, :, i:i + k.shape[2], j:j + k.shape[3]]
                                for j in range(ow)], -1) for i in range(oh)], -2)
  return np.einsum("nchwij,ochw->noij", windows.astype(np.float64), k)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("precision", [None, "bfloat16", "tensorfloat32", "highest"])
def test_results_are_full_precision_on_the_cpu(backend, precision, default_precision):
  """The CPU computes float32 products in float32 at every precision, as XLA's CPU
  backend does in JAX."""
  rng = np.random.default_rng(0)
  a, b = rng.standard_normal((16, 32), np.float32), rng.standard_normal((32, 8), np.float32)
  config.update("jax_default_matmul_precision", precision)
  dot = jax.jit(lambda u, v: jnp.dot(u, v), backend=backend)(a, b)
  np.testing.assert_allclose(dot, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
  conv = jax.jit(lambda u, v: lax.conv(u, v, (1, 1), "VALID"), backend=backend)(LHS, KERNEL)
  np.testing.assert_allclose(conv, _valid_conv(LHS, KERNEL), rtol=1e-5, atol=1e-6)


# -- accuracy= -----------------------------------------------------------------------------

def test_accuracy_prints_as_jax():
  assert str(jax.make_jaxpr(lambda a: lax.exp(a, accuracy=lax.AccuracyMode.HIGHEST))(X)) \
      == """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = exp[accuracy=AccuracyMode.HIGHEST] a
  in (b,) }"""
  assert str(jax.make_jaxpr(lambda a: lax.exp(a))(X)) == \
      "{ lambda ; a:f32[2,3]. let b:f32[2,3] = exp a in (b,) }"
  (eqn,) = jax.make_jaxpr(lambda a: jnp.sin(a))(X).jaxpr.eqns
  assert eqn.params == {"accuracy": None}   # always there, as in JAX
  # JAX prints a Tolerance as its object address; jaxlite prints its value
  assert "exp[accuracy=Tolerance(atol=1e-05, rtol=1e-06, ulps=2)] a" in str(
      jax.make_jaxpr(lambda a: lax.exp(a, accuracy=TOLERANCE))(X))


def test_the_primitives_taking_accuracy_are_jaxs():
  assert ACCURATE == sorted(ACCURATE_OPS)


@pytest.mark.parametrize("name", ACCURATE)
@pytest.mark.parametrize("kind", ACCURACIES)
def test_accuracy_is_lowered_as_jax(name, kind):
  accuracy, attribute = ACCURACIES[kind]
  lowered = _lowered(lambda a: getattr(lax, name)(a, accuracy=accuracy), X)
  carrying = re.findall(r'"stablehlo\.([a-z_]+)"\([^)]*\) <\{result_accuracy = ', lowered)
  op = ACCURATE_OPS[name]
  assert carrying == ([op] if op else []), lowered
  if op:
    assert _attr(lowered, op, "result_accuracy") == attribute
    assert lowered.count(f'"stablehlo.{op}"') == 1   # JAX writes a dead second one


@pytest.mark.parametrize("atol,text", ATOL_TEXT, ids=[t for _, t in ATOL_TEXT])
def test_tolerances_print_as_mlir_prints_them(atol, text):
  lowered = _lowered(lambda a: lax.exp(a, accuracy=lax.Tolerance(atol=atol)), X)
  assert _attr(lowered, "exponential", "result_accuracy") == (
      f"#stablehlo.result_accuracy<atol = {text}, "
      "mode = #stablehlo.result_accuracy_mode<TOLERANCE>>")


def test_accuracy_compiles_on_xla_and_changes_no_value():
  x = np.linspace(0.1, 2.0, 6, dtype=np.float32).reshape(2, 3)
  for name in ACCURATE:
    fun = getattr(lax, name)
    reference = np.asarray(fun(x))
    for accuracy, _ in ACCURACIES.values():
      f = lambda a: [fun(a, accuracy=accuracy), jax.grad(
          lambda s: fun(s, accuracy=accuracy))(a[0, 0])]
      for backend in ("numpy", "xla"):
        out, grad = jax.jit(f, backend=backend)(x)
        np.testing.assert_allclose(out, reference, rtol=2e-6, err_msg=f"{name} {backend}")
        np.testing.assert_allclose(grad, jax.grad(fun)(x[0, 0]), rtol=2e-6)
      np.testing.assert_allclose(fun(x, accuracy=accuracy), reference, rtol=0)


@pytest.mark.parametrize("name", GRADS)
def test_gradients_keep_or_drop_accuracy_as_jax(name):
  fun = getattr(lax, name)
  grad = jax.grad(lambda a: fun(a, accuracy=lax.AccuracyMode.HIGHEST))
  assert str(jax.make_jaxpr(grad)(np.float32(0.5))) == GRADS[name]


def test_vmap_and_jvp_keep_accuracy():
  f = lambda a: lax.sin(a, accuracy=lax.AccuracyMode.HIGHEST)
  assert str(jax.make_jaxpr(jax.vmap(f))(np.ones(3, np.float32))) == """\
{ lambda ; a:f32[3]. let
    b:f32[3] = sin[accuracy=AccuracyMode.HIGHEST] a
  in (b,) }"""
  out, tangent = jax.jvp(lambda a: lax.cos(a, accuracy=TOLERANCE), (X,), (np.ones_like(X),))
  np.testing.assert_allclose(tangent, -np.sin(X), rtol=1e-6)
  assert "sin[accuracy=Tolerance" in str(jax.make_jaxpr(
      lambda a: jax.jvp(lambda b: lax.cos(b, accuracy=TOLERANCE), (a,), (a,)))(X))


def test_tolerance_and_accuracy_checks_raise_jax_errors():
  with pytest.raises(ValueError, match="^Tolerances must be non-negative.$"):
    lax.Tolerance(atol=-1.0)
  with pytest.raises(ValueError, match="^At least one of atol, rtol, or ulps must be set.$"):
    lax.Tolerance()
  assert lax.Tolerance(1e-3) == lax.Tolerance(atol=1e-3)   # by value, to cache by value
  with pytest.raises(NotImplementedError, match="^Accuracy highest not supported$"):
    lax.exp(X, accuracy="highest")


# -- preferred_element_type that XLA cannot compute -----------------------------------------

@pytest.mark.parametrize("dtype,preferred,message,values", DOT_PREFERRED,
                         ids=[f"{a}->{p}" for a, p, _, _ in DOT_PREFERRED])
def test_dot_preferred_element_type_as_jax(dtype, preferred, message, values):
  x = (np.arange(6).reshape(2, 3) + (0.5j if dtype == "c64" else 0) * np.arange(6).reshape(
      2, 3) - 2.7).astype(D[dtype])
  y = (np.arange(6).reshape(3, 2) * 1.3 + (2j if dtype == "c64" else 0)).astype(D[dtype])
  f = lambda a, b: lax.dot(a, b, preferred_element_type=D[preferred])
  if message is not None:
    for run in (f, jax.jit(f, backend="xla"), jax.make_jaxpr(f)):
      with pytest.raises(TypeError) as info:
        run(x, y)
      assert str(info.value) == message
    return
  for backend in ("numpy", "xla"):
    out = jax.jit(f, backend=backend)(x, y)
    assert out.dtype == np.dtype(D[preferred])
    np.testing.assert_allclose(np.asarray(out).ravel(), values, rtol=2e-3)


@pytest.mark.parametrize("dtype,preferred,message", [
    pytest.param(*case, id=f"{case[0]}->{case[1]}") for case in CONV_PREFERRED])
def test_conv_preferred_element_type_as_jax(dtype, preferred, message):
  x, k = np.ones((1, 2, 3, 3), D[dtype]), np.ones((2, 2, 2, 1), D[dtype])
  f = lambda a, b: lax.conv(a, b, (1, 1), "VALID", preferred_element_type=D[preferred])
  if message is not None:
    with pytest.raises(TypeError) as info:
      jax.make_jaxpr(f)(x, k)
    assert str(info.value) == message
    return
  for backend in ("numpy", "xla"):
    out = jax.jit(f, backend=backend)(x, k)
    assert out.dtype == np.dtype(D[preferred])
    np.testing.assert_array_equal(np.asarray(out), np.full(out.shape, 4))


def test_conv_of_booleans_counts_in_a_numeric_preferred_type():
  """Boolean operands are summed as numbers (as XLA and JAX do), not as a logical or."""
  rng = np.random.default_rng(0)
  x, k = rng.random((1, 2, 5, 5)) < 0.5, rng.random((3, 2, 3, 3)) < 0.5
  want = np.zeros((1, 3, 3, 3))
  for o in range(3):
    for i in range(3):
      for j in range(3):
        want[0, o, i, j] = np.sum(x[0, :, i:i + 3, j:j + 3] & k[o])
  for preferred in (np.float32, np.int32):
    for backend in ("numpy", "xla"):
      out = jax.jit(lambda a, b: lax.conv(a, b, (1, 1), "VALID",
                                          preferred_element_type=preferred),
                    backend=backend)(x, k)
      np.testing.assert_array_equal(np.asarray(out), want.astype(preferred))


def test_float32_exp_on_tier_0_is_within_one_ulp_of_the_exact_value():
  # NumPy's float32 exp is up to 2 ulp off; XLA's (JAX 0.10.2) at most 1. The oracle is
  # float64 exp rounded to float32; exp(-0.01) is JAX's recorded 0.99004984.
  x = np.random.default_rng(0).uniform(-20, 5, 20000).astype(np.float32)
  exact = np.exp(x.astype(np.float64)).astype(np.float32)
  ulps = lambda a: np.abs(np.asarray(a).view(np.int32).astype(np.int64)
                          - exact.view(np.int32).astype(np.int64)).max()
  assert ulps(jnp.exp(x)) <= 1
  assert ulps(jax.jit(lambda v: jnp.exp(v * 1.0))(x)) <= 1   # the tier-0 template
  assert float(jnp.exp(np.float32(-0.01))) == np.float32(0.99004984)


def test_scipy_quad_of_a_float32_density_sees_no_roundoff():
  # numpyro's TruncatedGamma test integrates exp(log_prob) in float32 with SciPy under
  # warnings-as-errors; NumPy's float32 exp made quad report roundoff. SciPy is the oracle.
  import scipy.integrate
  import scipy.special
  import scipy.stats
  c, rate, low, high = 5.0, 1.5, 0.5, 10.0
  log_z = np.log(np.diff(scipy.stats.gamma.cdf([low, high], c, scale=1 / rate))[0])
  const = jnp.float32(scipy.special.gammaln(c) - c * np.log(rate) + log_z)
  pdf = lambda x: float(jnp.exp((c - 1) * jnp.log(jnp.float32(x)) - rate * jnp.float32(x)
                                - const))
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    integral, _ = scipy.integrate.quad(pdf, low, high, limit=200)
  assert abs(integral - 1.0) < 1e-5


# Inputs where NumPy's float32 loop misses JAX 0.10.2's (XLA CPU) float32 result, and
# JAX's result, recorded: (function, operands, JAX's value). log(1.3333333) is the one
# that put numpyro's funsor log joints 2 ulp apart.
_JAX_FLOAT32_VALUES = [
  ("exp", (50.12323760986328,), 5.86469608410287e+21),
  ("log", (1.3333332538604736,), 0.28768202662467957),
  ("log", (15538.095703125,), 9.651049613952637),
  ("log1p", (0.48559460043907166,), 0.3958151042461395),
  ("expm1", (-2.557314872741699,), -0.9224873781204224),
  ("tan", (1.538392186164856,), 30.849451065063477),
  ("arcsin", (-0.8614032864570618,), -1.038025975227356),
  ("arccos", (-0.4387909471988678,), 2.0250489711761475),
  ("arctan", (-45.28864288330078,), -1.5487192869186401),
  ("arctan2", (-3.607278823852539, 2.3213493824005127), -0.9989912509918213),
  ("cbrt", (233.65362548828125,), 6.15919828414917),
  ("power", (0.01684313639998436, -6.124186992645264), 72730640384.0),
  ("rsqrt", (1.0036243835997993e-08,), 9981.9267578125),
  ("rsqrt", (5068.8134765625,), 0.01404581218957901),
]


@pytest.mark.parametrize("name,args,want", _JAX_FLOAT32_VALUES,
                         ids=[f"{v[0]}{i}" for i, v in enumerate(_JAX_FLOAT32_VALUES)])
def test_float32_transcendentals_on_tier_0_match_jax_where_numpys_loop_does_not(
    name, args, want):
  args = [np.float32(a) for a in args]
  f = lax.rsqrt if name == "rsqrt" else getattr(jnp, name)
  assert float(f(*args)) == np.float32(want)
  xs = [np.full(8, a) for a in args]
  got = jax.jit(lambda *v: f(*[u * 1.0 for u in v]), backend="numpy")(*xs)
  np.testing.assert_array_equal(np.asarray(got), np.full(8, np.float32(want)))


@pytest.mark.parametrize("name,low,high", [
    ("log", 1e-30, 1e30), ("log1p", -0.99, 10.0), ("expm1", -20.0, 20.0),
    ("tan", -10.0, 10.0),
    ("arcsin", -1.0, 1.0), ("arccos", -1.0, 1.0), ("arctan", -50.0, 50.0),
    ("cbrt", -1e3, 1e3)])
def test_float32_transcendentals_on_tier_0_are_rounded_once_from_the_exact_value(
    name, low, high):
  # The oracle: NumPy's float64 function rounded to float32, the nearest float32 nearly
  # always; NumPy's own float32 loops match it on 85-96% of these inputs.
  x = np.random.default_rng(1).uniform(low, high, 20000).astype(np.float32)
  if name == "log":
    x = np.exp(np.random.default_rng(1).uniform(-69, 69, 20000)).astype(np.float32)
  exact = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
  for got in (getattr(jnp, name)(x), jax.jit(getattr(jnp, name), backend="numpy")(x)):
    assert np.mean(np.asarray(got) == exact) > 0.999
