"""Tests for jaxlite._src.base.dtypes: canonicalization, weak types and promotion.

The promotion expectations come from tests/data/promotion_table.json, recorded
from real JAX by tests/data/make_promotion_table.py; JAX is not needed here.
"""
import doctest
import json
import os
import warnings

import ml_dtypes
import numpy as np
import pytest

from jaxlite._src.base import dtypes
from jaxlite._src.base.config import config

TABLE_PATH = os.path.join(os.path.dirname(__file__), "data", "promotion_table.json")
with open(TABLE_PATH) as f:
  TABLE = json.load(f)

X64_MSG = ("Explicitly requested dtype float64 requested in zeros is not available, "
           "and will be truncated to dtype float32. To enable more dtypes, set the "
           "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
           "variable. See https://github.com/jax-ml/jax#current-gotchas for more.")


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
  old = config.jax_enable_x64
  config.update("jax_enable_x64", request.param)
  try:
    yield request.param
  finally:
    config.update("jax_enable_x64", old)


@pytest.fixture
def x32():
  with config.override("jax_enable_x64", False):
    yield


@pytest.fixture
def strict():
  with config.override("jax_numpy_dtype_promotion", "strict"):
    yield


class WeakValue:
  """Stands in for a weakly typed jaxlite Array or tracer."""
  weak_type = True

  def __init__(self, dt):
    self.dtype = np.dtype(dt)


PYTHON_OPERANDS = {"py_bool": True, "py_int": 1, "py_float": 1.0, "py_complex": 1j}


def make_operand(name):
  if name in PYTHON_OPERANDS:
    return PYTHON_OPERANDS[name]
  if name.startswith("weak_"):
    return WeakValue(name[len("weak_"):])
  return np.dtype(name)


SHORT_TO_DTYPE = {dtypes.short_name(np.dtype(n)): np.dtype(n) for n in
                  ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                   "uint64", "bfloat16", "float16", "float32", "float64", "complex64",
                   "complex128"]}


def canonical_expectation(expected):
  # JAX keeps the dtype of an existing 64-bit Array even with x64 off (seen in
  # lattice_result_type of one weak int64 array); jaxlite results are always
  # canonical, so compare against the canonicalized JAX answer.
  if expected.startswith("error:"):
    return expected
  weak = expected.endswith("*")
  dt = dtypes.canonicalize_dtype(SHORT_TO_DTYPE[expected.rstrip("*")])
  return dtypes.short_name(dt) + ("*" if weak else "")


def outcome(fn, *args):
  try:
    dt, weak = fn(*args)
  except Exception as e:  # noqa: BLE001 - compared by class name with JAX's
    return "error:" + type(e).__name__
  return dtypes.short_name(dt) + ("*" if weak else "")


def table_cases(fn_name):
  """(mode, operand names, expected) for every single operand and pair recorded."""
  cases = []
  for mode, rows in TABLE["modes"].items():
    names = TABLE["operands"] if fn_name != "promote_types" else TABLE["promote_types_operands"]
    table = rows[fn_name]
    if "single" in table:
      cases += [(mode, (a,), e) for a, e in zip(names, table["single"].split())]
    for i, a in enumerate(names):
      cases += [(mode, (a, b), e) for b, e in zip(names[i:], table[a].split())]
  return cases


def set_mode(mode):
  x64, promotion = (part.split("=")[1] for part in mode.split())
  config.update("jax_enable_x64", x64 == "True")
  config.update("jax_numpy_dtype_promotion", promotion)


@pytest.fixture
def restore_config():
  old = config.jax_enable_x64, config.jax_numpy_dtype_promotion
  yield
  config.update("jax_enable_x64", old[0])
  config.update("jax_numpy_dtype_promotion", old[1])


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype")
@pytest.mark.parametrize("fn_name", ["result_type", "lattice_result_type"])
def test_promotion_matches_recorded_jax_table(fn_name, restore_config):
  fn = {"result_type": lambda *a: dtypes.result_type(*a, return_weak_type_flag=True),
        "lattice_result_type": dtypes.lattice_result_type}[fn_name]
  mismatches, cases = [], table_cases(fn_name)
  assert len(cases) == 4 * (34 + 34 * 35 // 2)
  for mode, names, expected in cases:
    set_mode(mode)
    want = canonical_expectation(expected)
    # Promotion is symmetric: check both operand orders.
    for order in (names, names[::-1]):
      got = outcome(fn, *map(make_operand, order))
      if got != want:
        mismatches.append(f"{mode} {fn_name}{order}: got {got}, JAX {want}")
  assert not mismatches, "\n".join(mismatches[:30])


def test_promote_types_matches_recorded_jax_table_canonicalized(restore_config):
  py_types = {"int": int, "float": float, "complex": complex}
  mismatches = []
  for mode, (a, b), expected in table_cases("promote_types"):
    set_mode(mode)
    args = [py_types.get(n) or np.dtype(n) for n in (a, b)]
    got = outcome(lambda x, y: (dtypes.promote_types(x, y), False), *args)
    if got != canonical_expectation(expected):
      mismatches.append(f"{mode} promote_types({a}, {b}): got {got}, JAX {expected}")
  assert not mismatches, "\n".join(mismatches[:30])


def test_promote_types_differs_from_numpy_for_weak_python_types(x32):
  assert dtypes.promote_types("uint8", int) == np.uint8
  assert dtypes.promote_types("float16", float) == np.float16
  assert dtypes.promote_types(int, float) == np.float32


@pytest.mark.parametrize("spec, x32_out, x64_out", [
    (np.int64, "int32", "int64"), ("uint64", "uint32", "uint64"),
    (np.dtype("float64"), "float32", "float64"), ("complex128", "complex64", "complex128"),
    (int, "int32", "int64"), (float, "float32", "float64"),
    (complex, "complex64", "complex128"), (bool, "bool", "bool"),
    ("f4", "float32", "float32"), ("f8", "float32", "float64"),
    ("float32", "float32", "float32"), ("int8", "int8", "int8"),
    ("bfloat16", "bfloat16", "bfloat16"), (dtypes.bfloat16, "bfloat16", "bfloat16"),
    (np.float16, "float16", "float16"), (np.uint16, "uint16", "uint16"),
])
def test_canonicalize_dtype_truncates_64_bit_types_only_without_x64(x64, spec, x32_out, x64_out):
  out = dtypes.canonicalize_dtype(spec)
  assert isinstance(out, np.dtype)
  assert out == np.dtype(x64_out if x64 else x32_out)


def test_canonicalize_dtype_follows_x64_toggle_after_caching(restore_config):
  config.update("jax_enable_x64", False)
  assert dtypes.canonicalize_dtype("float64") == np.float32
  config.update("jax_enable_x64", True)
  assert dtypes.canonicalize_dtype("float64") == np.float64
  config.update("jax_enable_x64", False)
  assert dtypes.canonicalize_dtype("float64") == np.float32


def test_canonicalize_dtype_keeps_float0_and_rejects_garbage():
  assert dtypes.canonicalize_dtype(dtypes.float0) == dtypes.float0
  with pytest.raises(TypeError, match="not understood"):
    dtypes.canonicalize_dtype("foo")


def test_float0_is_the_zero_width_void_dtype_jax_uses():
  assert dtypes.float0 == np.dtype([("float0", np.void, 0)])
  assert dtypes.float0.itemsize == 0
  assert dtypes.short_name(dtypes.float0) == "float0"
  assert dtypes.result_type(dtypes.float0, dtypes.float0) == dtypes.float0
  with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
    dtypes.result_type(dtypes.float0, 1.0)


@pytest.mark.parametrize("value, expected", [
    (1, "int64"), (1.0, "float64"), (1j, "complex128"), (True, "bool"),
    (np.float32(1), "float32"), (np.zeros(2, np.int8), "int8"),
    (np.int64, "int64"), ("bfloat16", "bfloat16"), (int, "int64"),
    (WeakValue("float16"), "float16"),
])
def test_dtype_of_values_and_dtype_likes(x32, value, expected):
  assert dtypes.dtype(value) == np.dtype(expected)
  assert dtypes.dtype(value, canonicalize=True) == dtypes.canonicalize_dtype(expected)


def test_dtype_errors_match_jax():
  with pytest.raises(TypeError, match=r"Cannot determine dtype of \[1, 2\]"):
    dtypes.dtype([1, 2])
  with pytest.raises(TypeError, match="Cannot determine dtype of <object"):
    dtypes.dtype(object())
  with pytest.raises(TypeError, match="with dtype <U1 is not a valid JAX array type"):
    dtypes.dtype(np.array(["a"]))
  with pytest.raises(TypeError, match="with dtype object is not a valid JAX array type"):
    dtypes.dtype("object")
  with pytest.raises(ValueError, match="Invalid argument to dtype: None"):
    dtypes.dtype(None)


def test_is_weakly_typed():
  assert dtypes.is_weakly_typed(1) and dtypes.is_weakly_typed(1.0) and dtypes.is_weakly_typed(1j)
  assert not dtypes.is_weakly_typed(True)
  assert not dtypes.is_weakly_typed(np.float32(1)) and not dtypes.is_weakly_typed(np.float64(1))
  assert not dtypes.is_weakly_typed(np.zeros(2))
  assert dtypes.is_weakly_typed(WeakValue("int8"))


def test_python_scalar_dtype(x64):
  wide = lambda a, b: np.dtype(b if x64 else a)
  assert dtypes.python_scalar_dtype(3) == wide("int32", "int64")
  assert dtypes.python_scalar_dtype(float) == wide("float32", "float64")
  assert dtypes.python_scalar_dtype(1j) == wide("complex64", "complex128")
  assert dtypes.python_scalar_dtype(True) == np.bool_
  assert dtypes.is_python_scalar(3) and not dtypes.is_python_scalar(np.int32(3))


def test_python_scalar_dtype_rejects_ints_that_do_not_fit(x32):
  with pytest.raises(OverflowError, match="Python int 1099511627776 too large to convert to int32"):
    dtypes.python_scalar_dtype(2 ** 40)


def test_result_type_weak_results_take_the_default_width(x64):
  f = np.dtype("float64" if x64 else "float32")
  assert dtypes.result_type(1, 2.0, return_weak_type_flag=True) == (f, True)
  assert dtypes.result_type(WeakValue("bfloat16"), 1.0, return_weak_type_flag=True) == (f, True)
  # lattice_result_type keeps a weak width where the lattice gives one; two weak
  # floats join as their strong counterparts, so weak bf16 + 1.0 is weak f32/f64.
  assert dtypes.lattice_result_type(WeakValue("bfloat16"), 1) == (np.dtype(dtypes.bfloat16), True)
  assert dtypes.lattice_result_type(WeakValue("bfloat16"), 1.0) == (f, True)
  assert dtypes.result_type(np.dtype(dtypes.bfloat16), 1.0) == dtypes.bfloat16
  assert dtypes.result_type(np.int8, 1, return_weak_type_flag=True) == (np.dtype("int8"), False)
  assert dtypes.result_type(True, 1, return_weak_type_flag=True) == (
      np.dtype("int64" if x64 else "int32"), True)
  assert dtypes.result_type(None) == f


def test_result_type_uint64_with_int64_is_float64_under_x64(x64):
  assert dtypes.result_type(np.zeros(1, np.uint64), np.zeros(1, np.int64)) == (
      np.float64 if x64 else np.int32)


def test_result_type_cache_follows_config_changes(restore_config):
  for x64, expected in [(False, np.int32), (True, np.int64), (False, np.int32)]:
    config.update("jax_enable_x64", x64)
    assert dtypes.result_type(np.int16, np.uint16) == np.int32
    assert dtypes.result_type(1) == expected
  config.update("jax_numpy_dtype_promotion", "strict")
  with pytest.raises(dtypes.TypePromotionError):
    dtypes.result_type(np.int16, np.uint16)
  dtypes.clear_caches()
  config.update("jax_numpy_dtype_promotion", "standard")
  assert dtypes.result_type(np.int16, np.uint16) == np.int32


def test_jaxlite_values_keep_their_64_bit_dtype_in_promotion_like_jax_arrays(x32):
  # A weak uint64 value made while x64 was on joins a Python int at the weak
  # float node, exactly as in JAX; the result itself is canonical.
  assert dtypes.result_type(WeakValue("uint64"), 1, return_weak_type_flag=True) == (
      np.dtype("float32"), True)
  # A NumPy uint64 value is canonicalized to uint32 first.
  assert dtypes.result_type(np.zeros(1, np.uint64), 1) == np.uint32


def test_result_type_requires_an_argument():
  with pytest.raises(ValueError, match="at least one array or dtype is required"):
    dtypes.result_type()


def test_result_type_warns_on_explicit_64_bit_dtype_without_x64(x32):
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in dtype is "
                    "not available, and will be truncated to dtype float32") as caught:
    assert dtypes.result_type("float64") == np.float32
  assert caught[0].filename == __file__
  with warnings.catch_warnings():
    warnings.simplefilter("error")  # values (not dtype requests) never warn
    assert dtypes.result_type(np.zeros(2), 1) == np.float32


def test_strict_promotion_rejects_mixed_strong_dtypes(strict):
  with pytest.raises(dtypes.TypePromotionError) as info:
    dtypes.result_type(np.int32, np.float32)
  assert isinstance(info.value, ValueError)
  assert str(info.value) == (
      "Input dtypes ('int32', 'float32') have no available implicit dtype promotion path "
      "when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
      "output type, or set jax_numpy_dtype_promotion=standard.")
  with pytest.raises(dtypes.TypePromotionError, match=r"\('bool', \"<class 'int'>\"\)"):
    dtypes.result_type(True, 1)
  # Weak types still adapt to a strong dtype, and equal dtypes need no promotion.
  assert dtypes.result_type(np.int8, 1) == np.int8
  assert dtypes.result_type(np.float16, 1.0) == np.float16
  assert dtypes.result_type(np.int32, np.int32) == np.int32
  with pytest.raises(dtypes.TypePromotionError):
    dtypes.promote_types("int8", "int16")


def test_check_user_dtype_supported_warns_with_jax_wording_at_the_callers_line(x32):
  def zeros(dtype):  # a stand-in for jnp.zeros
    return dtypes.check_user_dtype_supported(dtype, "zeros")
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert zeros("float64") == np.float32
  assert [str(w.message) for w in caught] == [X64_MSG]
  assert caught[0].category is UserWarning and caught[0].filename == __file__


def test_check_user_dtype_supported_is_silent_for_supported_requests(x64):
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert dtypes.check_user_dtype_supported(float) == dtypes.default_float_dtype()
    assert dtypes.check_user_dtype_supported("bfloat16") == dtypes.bfloat16
    assert dtypes.check_user_dtype_supported(np.int8, "array") == np.int8
    if x64:
      assert dtypes.check_user_dtype_supported("float64", "array") == np.float64


@pytest.mark.parametrize("spec, shown", [
    (object, "<class 'object'>"), (str, "<class 'str'>"),
    ("datetime64[s]", "datetime64[s]"), ("V4", "V4"),
])
def test_check_user_dtype_supported_rejects_non_numeric_dtypes(spec, shown):
  with pytest.raises(TypeError) as info:
    dtypes.check_user_dtype_supported(spec, "array")
  assert str(info.value) == f"JAX only supports number, bool, and string dtypes, got dtype {shown} in array"


def test_check_user_dtype_supported_rejects_none_and_arrays():
  with pytest.raises(ValueError, match="dtype must be specified"):
    dtypes.check_user_dtype_supported(None)
  with pytest.raises(ValueError, match="instead of dtype=arr use dtype=arr.dtype"):
    dtypes.check_user_dtype_supported(WeakValue("float32"))


@pytest.mark.parametrize("a, b, expected", [
    (dtypes.bfloat16, np.floating, True), (dtypes.bfloat16, np.inexact, True),
    (dtypes.bfloat16, np.number, True), (dtypes.bfloat16, np.generic, True),
    ("bfloat16", dtypes.bfloat16, True), (dtypes.bfloat16, np.integer, False),
    (dtypes.bfloat16, np.complexfloating, False), (dtypes.bfloat16, np.float16, False),
    (np.float16, dtypes.bfloat16, False), (ml_dtypes.int4, np.signedinteger, True),
    (ml_dtypes.uint4, np.unsignedinteger, True), (ml_dtypes.float8_e4m3fn, np.floating, True),
    (np.float32, np.floating, True), (np.int8, np.signedinteger, True),
    (np.uint8, np.signedinteger, False), (np.uint8, np.unsignedinteger, True),
    (np.complex64, np.complexfloating, True), (np.complex64, np.floating, False),
    (np.bool_, np.bool_, True), (np.bool_, np.integer, False), ("int32", np.integer, True),
    (np.dtype("float64"), np.inexact, True), (dtypes.float0, np.floating, False),
    (np.float32, np.float64, False), (np.int32, np.generic, True),
])
def test_issubdtype_knows_where_bfloat16_and_friends_belong(a, b, expected):
  assert dtypes.issubdtype(a, b) is expected
  assert dtypes.issubdtype(a, b) is expected  # cached answer


@pytest.mark.parametrize("name, short", [
    ("bool", "bool"), ("int8", "i8"), ("int16", "i16"), ("int32", "i32"), ("int64", "i64"),
    ("uint8", "u8"), ("uint16", "u16"), ("uint32", "u32"), ("uint64", "u64"),
    ("bfloat16", "bf16"), ("float16", "f16"), ("float32", "f32"), ("float64", "f64"),
    ("complex64", "c64"), ("complex128", "c128"),
])
def test_short_name_is_the_jaxpr_spelling(name, short):
  assert dtypes.short_name(np.dtype(name)) == short
  assert dtypes.short_name(name) == short


def test_kind_predicates():
  assert dtypes.is_floating(np.dtype(dtypes.bfloat16)) and dtypes.is_inexact("bfloat16")
  assert not dtypes.is_integer(np.bool_) and dtypes.is_integer(np.uint8)
  assert dtypes.is_complex(np.complex64) and dtypes.is_inexact(np.complex128)
  assert not dtypes.is_floating(dtypes.float0) and not dtypes.is_floating(np.int32)


def test_defaults_follow_x64(x64):
  assert dtypes.default_int_dtype() == (np.int64 if x64 else np.int32)
  assert dtypes.default_uint_dtype() == (np.uint64 if x64 else np.uint32)
  assert dtypes.default_float_dtype() == (np.float64 if x64 else np.float32)
  assert dtypes.default_complex_dtype() == (np.complex128 if x64 else np.complex64)


def test_finfo_iinfo_scalar_type_of_and_itemsize_bits():
  assert dtypes.finfo(dtypes.bfloat16).bits == 16
  assert float(dtypes.finfo(dtypes.bfloat16).eps) == 2.0 ** -7
  assert dtypes.iinfo("int8").min == -128
  assert dtypes.scalar_type_of(np.zeros(2, dtypes.bfloat16)) is float
  assert dtypes.scalar_type_of(np.uint8(1)) is int
  assert dtypes.scalar_type_of(True) is bool and dtypes.scalar_type_of(1j) is complex
  assert [dtypes.itemsize_bits(t) for t in (np.bool_, ml_dtypes.int4, dtypes.bfloat16, np.complex64)] == [8, 4, 16, 64]


def test_public_module_reexports():
  import jaxlite.dtypes as public
  assert public.result_type is dtypes.result_type and public.float0 is dtypes.float0
  assert public.TypePromotionError is dtypes.TypePromotionError


def test_docstring_examples(x32):
  failures, _ = doctest.testmod(dtypes, optionflags=doctest.NORMALIZE_WHITESPACE)
  assert failures == 0
