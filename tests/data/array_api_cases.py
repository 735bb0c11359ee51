"""Array API calls whose results must be JAX 0.10.2's, where JAX answers differently from
the standard or the standard leaves the answer open (edge cases, dtypes, errors).

``cases(jnp)`` builds them from either library, so the same definitions serve
``make_array_api_reference.py`` (run with real JAX, it records the results) and
``tests/test_array_api_standard.py`` (which runs them in jaxlite). Each case is
``name -> thunk``; a thunk returns an array, a tuple of arrays, or a plain value.
"""
import numpy as np

# The functions of the Array API standard 2024.12 (and the linalg and fft extensions),
# plus eig/eigvals/isin, which JAX has ahead of the standard.
STANDARD_FUNCTIONS = [
    "abs", "acos", "acosh", "add", "all", "any", "arange", "argmax", "argmin", "argsort",
    "asarray", "asin", "asinh", "astype", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "broadcast_arrays", "broadcast_shapes", "broadcast_to", "can_cast",
    "ceil", "clip", "concat", "conj", "copysign", "cos", "cosh", "count_nonzero",
    "cumulative_prod", "cumulative_sum", "diff", "divide", "empty", "empty_like", "equal",
    "exp", "expand_dims", "expm1", "eye", "finfo", "flip", "floor", "floor_divide",
    "from_dlpack", "full", "full_like", "greater", "greater_equal", "hypot", "iinfo",
    "imag", "isdtype", "isfinite", "isin", "isinf", "isnan", "less", "less_equal",
    "linspace", "log", "log10", "log1p", "log2", "logaddexp", "logical_and",
    "logical_not", "logical_or", "logical_xor", "matmul", "matrix_transpose", "max",
    "maximum", "mean", "meshgrid", "min", "minimum", "moveaxis", "multiply", "negative",
    "nextafter", "nonzero", "not_equal", "ones", "ones_like", "permute_dims", "positive",
    "pow", "prod", "real", "reciprocal", "remainder", "repeat", "reshape", "result_type",
    "roll", "round", "searchsorted", "sign", "signbit", "sin", "sinh", "sort", "sqrt",
    "square", "squeeze", "stack", "std", "subtract", "sum", "take", "take_along_axis",
    "tan", "tanh", "tensordot", "tile", "tril", "triu", "trunc", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "unstack", "var", "vecdot",
    "where", "zeros", "zeros_like",
    "linalg.cholesky", "linalg.cross", "linalg.det", "linalg.diagonal", "linalg.eig",
    "linalg.eigh", "linalg.eigvals", "linalg.eigvalsh", "linalg.inv", "linalg.matmul",
    "linalg.matrix_norm", "linalg.matrix_power", "linalg.matrix_rank",
    "linalg.matrix_transpose", "linalg.outer", "linalg.pinv", "linalg.qr",
    "linalg.slogdet", "linalg.solve", "linalg.svd", "linalg.svdvals", "linalg.tensordot",
    "linalg.trace", "linalg.vecdot", "linalg.vector_norm",
    "fft.fft", "fft.fftfreq", "fft.fftn", "fft.fftshift", "fft.hfft", "fft.ifft",
    "fft.ifftn", "fft.ifftshift", "fft.ihfft", "fft.irfft", "fft.irfftn", "fft.rfft",
    "fft.rfftfreq", "fft.rfftn",
]

INFO_KINDS = [None, "bool", "signed integer", "unsigned integer", "integral",
              "real floating", "complex floating", "numeric", ("bool", "integral"),
              ("real floating", "complex floating")]

FINFO_ATTRS = ["bits", "eps", "max", "min", "smallest_normal", "tiny", "resolution",
               "epsneg", "machep", "negep", "minexp", "maxexp", "nexp", "nmant", "iexp",
               "precision", "smallest_subnormal", "dtype"]
IINFO_ATTRS = ["bits", "max", "min", "kind", "dtype"]
FLOAT_TYPES = ["bfloat16", "float16", "float32", "float64", "complex64", "complex128"]
INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _shift_cases(jnp):
  out = {}
  for name in ("int8", "uint8", "int16", "uint16", "int32", "uint32"):
    dt = getattr(jnp, name)
    bits = np.dtype(name).itemsize * 8
    top = np.iinfo(name).max
    values = np.array([1, top, 5, top // 3, top, 1], name)
    counts = np.array([0, bits - 1, bits, bits + 1, 2 * bits, 200 % (2 * bits)], name)
    if name.startswith("i"):
      values = np.concatenate([values, np.array([-1, -100, np.iinfo(name).min], name)])
      counts = np.concatenate([counts, np.array([bits, bits + 3, -1], name)])
    x, s = jnp.asarray(values, dtype=dt), jnp.asarray(counts, dtype=dt)
    out[f"left_shift_{name}"] = lambda x=x, s=s: jnp.bitwise_left_shift(x, s)
    out[f"right_shift_{name}"] = lambda x=x, s=s: jnp.bitwise_right_shift(x, s)
    out[f"lshift_op_{name}"] = lambda x=x, s=s: x << s
    out[f"rshift_op_{name}"] = lambda x=x, s=s: x >> s
  return out


def _creation_cases(jnp):
  return {
      "arange_float32_step": lambda: jnp.arange(0, 1, 0.1),
      "arange_float32_step_offset": lambda: jnp.arange(0.1, 30.1, 0.7),
      "arange_negative_step": lambda: jnp.arange(5, 0, -2),
      "arange_negative_float_step": lambda: jnp.arange(-1.0, -3.0, -0.5),
      "arange_empty": lambda: jnp.arange(5, 0),
      "arange_float_stop": lambda: jnp.arange(2.5),
      "arange_int_start_float_step": lambda: jnp.arange(0, 5, 1.5),
      "arange_uint8": lambda: jnp.arange(10, dtype=jnp.uint8),
      "arange_float_bounds_int_dtype": lambda: jnp.arange(0.5, 3, dtype=jnp.int32),
      "arange_float_step_int_dtype": lambda: jnp.arange(0, 1, 0.1, dtype=jnp.int32),
      "arange_float16": lambda: jnp.arange(0, 1, 0.1, dtype=jnp.float16),
      "arange_bfloat16": lambda: jnp.arange(0, 1, 0.1, dtype=jnp.bfloat16),
      "arange_int8_stop": lambda: jnp.arange(np.int8(5)),
      "arange_step_zero": lambda: jnp.arange(0, 5, 0),
      "arange_complex": lambda: jnp.arange(1 + 0j, 3),
      "arange_array_bound": lambda: jnp.arange(np.array([3])),
      "eye_rect_k": lambda: jnp.eye(3, 4, k=-1),
      "eye_k_beyond": lambda: jnp.eye(3, k=5),
      "eye_k_below": lambda: jnp.eye(3, 2, k=-7),
      "eye_zero_rows": lambda: jnp.eye(0, 3),
      "eye_bool": lambda: jnp.eye(2, dtype=bool),
      "eye_int_k_array": lambda: jnp.eye(3, k=np.array(1), dtype=jnp.int32),
      "eye_negative": lambda: jnp.eye(-1),
      "eye_negative_cols": lambda: jnp.eye(2, -1),
      "eye_float_size": lambda: jnp.eye(2.0),
      "asarray_copy_false_float64": lambda: jnp.asarray(np.arange(3.0), copy=False),
      "asarray_copy_false_dtype": lambda: jnp.asarray(np.arange(3.0), dtype=jnp.int32,
                                                      copy=False),
      "asarray_copy_false_list": lambda: jnp.asarray([1, 2], copy=False),
      "asarray_copy_true_scalar": lambda: jnp.asarray(3.0, copy=True),
  }


def _cumulative_cases(jnp):
  i3 = np.array([1, 2, 3], np.int32)
  f23 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
  return {
      "cumsum_include_initial": lambda: jnp.cumulative_sum(i3, include_initial=True),
      "cumsum_0d": lambda: jnp.cumulative_sum(np.int32(3)),
      "cumsum_empty_include_initial": lambda: jnp.cumulative_sum(
          np.zeros((0,), np.float32), include_initial=True),
      "cumsum_2d_without_axis": lambda: jnp.cumulative_sum(f23),
      "cumsum_2d_axis0_include_initial": lambda: jnp.cumulative_sum(
          f23, axis=0, include_initial=True),
      "cumsum_2d_axis1_include_initial": lambda: jnp.cumulative_sum(
          f23, axis=-1, include_initial=True),
      "cumsum_bool": lambda: jnp.cumulative_sum(np.array([True, True, False])),
      "cumsum_uint8": lambda: jnp.cumulative_sum(np.array([200, 100], np.uint8)),
      "cumsum_int8_dtype": lambda: jnp.cumulative_sum(np.array([1, 2], np.int8),
                                                      dtype=jnp.float32,
                                                      include_initial=True),
      "cumprod_include_initial": lambda: jnp.cumulative_prod(np.array([2, 3, 4], np.int32),
                                                             include_initial=True),
      "cumprod_int8_include_initial": lambda: jnp.cumulative_prod(
          np.array([2, 3, 4], np.int8), include_initial=True),
      "cumprod_2d_axis1_include_initial": lambda: jnp.cumulative_prod(
          f23, axis=1, include_initial=True),
      "cumprod_empty_axis_include_initial": lambda: jnp.cumulative_prod(
          np.zeros((2, 0), np.float32), axis=1, include_initial=True),
  }


def _search_cases(jnp):
  s = np.array([3., 1., 2., 5.], np.float32)
  return {
      "searchsorted_sorter": lambda: jnp.searchsorted(
          s, np.array([0., 2.5, 6.], np.float32), sorter=np.array([1, 2, 0, 3])),
      "searchsorted_sorter_right": lambda: jnp.searchsorted(
          s, np.array([1., 2., 5.], np.float32), side="right",
          sorter=np.array([1, 2, 0, 3])),
      "searchsorted_nan": lambda: jnp.searchsorted(np.array([1., 2., np.nan], np.float32),
                                                   np.array([np.nan, 3.], np.float32)),
      "searchsorted_0d_value": lambda: jnp.searchsorted(np.arange(3), 1),
      "searchsorted_bad_side": lambda: jnp.searchsorted(np.arange(3), 1, side="middle"),
  }


def _linalg_cases(jnp):
  m = np.array([[2., 1.], [1., 3.]], np.float32)
  c1 = np.array([1 + 2j, 3 - 1j], np.complex64)
  c2 = np.array([2 - 1j, 1 + 1j], np.complex64)
  return {
      "vecdot_complex": lambda: jnp.vecdot(c1, c2),
      "linalg_vecdot_complex": lambda: jnp.linalg.vecdot(c1, c2),
      "vecdot_axis0": lambda: jnp.vecdot(np.arange(6.).reshape(3, 2),
                                         np.ones((3, 2)), axis=0),
      "vecdot_broadcast": lambda: jnp.vecdot(np.arange(6.).reshape(3, 2), np.ones(2)),
      "svd_fields": lambda: type(jnp.linalg.svd(m))._fields,
      "qr_fields": lambda: type(jnp.linalg.qr(m))._fields,
      "qr_complete_fields": lambda: type(jnp.linalg.qr(m, mode="complete"))._fields,
      "eigh_fields": lambda: type(jnp.linalg.eigh(m))._fields,
      "eig_fields": lambda: type(jnp.linalg.eig(m))._fields,
      "slogdet_fields": lambda: type(jnp.linalg.slogdet(m))._fields,
      "svd_names": lambda: [type(jnp.linalg.svd(m)).__name__,
                            type(jnp.linalg.qr(m)).__name__,
                            type(jnp.linalg.eigh(m)).__name__,
                            type(jnp.linalg.eig(m)).__name__,
                            type(jnp.linalg.slogdet(m)).__name__],
      "svd_S": lambda: jnp.linalg.svd(m).S,
      "eigh_eigenvalues": lambda: jnp.linalg.eigh(m).eigenvalues,
      "slogdet_logabsdet": lambda: jnp.linalg.slogdet(m).logabsdet,
      "qr_r_mode_is_array": lambda: type(jnp.linalg.qr(m, mode="r")).__name__ != "QRResult",
      "unique_all_fields": lambda: type(jnp.unique_all(np.array([1, 2, 1])))._fields,
      "unique_counts_fields": lambda: type(jnp.unique_counts(np.array([1, 2, 1])))._fields,
      "unique_inverse_fields": lambda: type(
          jnp.unique_inverse(np.array([1, 2, 1])))._fields,
      "unique_inverse_2d": lambda: tuple(jnp.unique_inverse(np.array([[1, 2], [1, 3]]))),
      "unique_all_2d": lambda: tuple(jnp.unique_all(np.array([[3, 2], [3, 1]]))),
      "unique_counts_nan": lambda: tuple(jnp.unique_counts(
          np.array([np.nan, 1., np.nan], np.float32))),
      "matrix_rank_hermitian": lambda: jnp.linalg.matrix_rank(
          np.array([[1., 1.], [1., 1.]], np.float32), hermitian=True),
  }


def _namespace_cases(jnp):
  x = jnp.arange(3.0)
  return {
      "api_version": lambda: jnp.__array_api_version__,
      "namespace_2024": lambda: x.__array_namespace__(api_version="2024.12") is jnp,
      "namespace_2023": lambda: x.__array_namespace__(api_version="2023.12"),
      "namespace_2025": lambda: x.__array_namespace__(api_version="2025.12"),
      "namespace_positional": lambda: x.__array_namespace__("2024.12"),
      "info_bad_kind": lambda: jnp.__array_namespace_info__().dtypes(kind="bad"),
      "dlpack_device": lambda: tuple(int(v) for v in x.__dlpack_device__()),
      "from_dlpack_list": lambda: jnp.from_dlpack([1, 2]),
      "from_dlpack_int64": lambda: jnp.from_dlpack(np.arange(3)),
      "from_dlpack_float16": lambda: jnp.from_dlpack(np.ones(2, np.float16)),
      "from_dlpack_bool": lambda: jnp.from_dlpack(np.array([True, False])),
      "from_dlpack_transposed": lambda: jnp.from_dlpack(
          np.arange(6, dtype=np.float32).reshape(2, 3).T),
      "numpy_from_dlpack_0d": lambda: np.from_dlpack(jnp.asarray(np.float32(3))),
      "numpy_from_dlpack_bool": lambda: np.from_dlpack(jnp.asarray([True, False])),
      "numpy_from_dlpack_readonly": lambda: np.from_dlpack(x).flags.writeable,
      "iinfo_bool": lambda: jnp.iinfo(jnp.bool_),
      "iinfo_float": lambda: jnp.iinfo(jnp.float32),
      "finfo_int": lambda: jnp.finfo(jnp.int32),
      "finfo_of_array": lambda: jnp.finfo(jnp.ones(2)).dtype,
      "iinfo_of_array": lambda: jnp.iinfo(jnp.ones(2, jnp.int8)).dtype,
      "finfo_python_float": lambda: jnp.finfo(float).dtype,
      "iinfo_python_int": lambda: jnp.iinfo(int).dtype,
      "finfo_bfloat16_repr": lambda: repr(jnp.finfo(jnp.bfloat16)),
      "clip_without_input": lambda: jnp.clip(),
      "stack_out": lambda: jnp.stack([np.ones(2)], out=np.ones(2)),
      "take_along_axis_no_wrap": lambda: jnp.take_along_axis(
          np.arange(5.), np.array([-1, 2, 7]), axis=0, wrap_negative_indices=False),
      "take_along_axis_wrap_promise": lambda: jnp.take_along_axis(
          np.arange(5.), np.array([-1, 2, 4]), axis=0, mode="promise_in_bounds",
          wrap_negative_indices=True),
  }


def cases(jnp):
  """Every case, by name, built from ``jnp`` (``jax.numpy`` or ``jaxlite.numpy``)."""
  out = {}
  for group in (_shift_cases, _creation_cases, _cumulative_cases, _search_cases,
                _linalg_cases, _namespace_cases):
    out.update(group(jnp))
  return out
