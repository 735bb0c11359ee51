"""``jaxlite.lax``: the primitive operations (``jax.lax``)."""
from jaxlite._src.lax.elementwise import (
    neg, sign, floor, ceil, is_finite, exp, exp2, log, log1p, expm1, tanh, logistic, sin,
    cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, sqrt, rsqrt, cbrt, abs,
    bitwise_not, square, add, sub, div, rem, pow, max, min, atan2,
    bitwise_and, bitwise_or, bitwise_xor, eq, ne, lt, le, gt, ge, integer_pow, select_n,
    select, convert_element_type, clamp)
from jaxlite._src.lax.shapes import (
    broadcast_in_dim, broadcast, expand_dims, reshape, transpose, squeeze, concatenate,
    slice, slice_in_dim, rev, iota, broadcasted_iota, pad)
from jaxlite._src.lax.indexing import (
    GatherDimensionNumbers, ScatterDimensionNumbers, GatherScatterMode, gather, scatter,
    scatter_add, scatter_sub, scatter_mul, scatter_min, scatter_max, scatter_apply,
    dynamic_slice, dynamic_update_slice, index_in_dim, dynamic_index_in_dim, dynamic_slice_in_dim, dynamic_update_slice_in_dim,
    dynamic_update_index_in_dim)
from jaxlite._src.lax.control_flow import (
    cond, switch, while_loop, fori_loop, scan, map, associative_scan, cond_p, while_p,
    scan_p)
from jaxlite._src.lax.reductions import (
    reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or, reduce_xor,
    argmax, argmin, dot_general, dot, reduce, reduce_p)
from jaxlite._src.lax.elementwise import (
    neg_p, sign_p, floor_p, ceil_p, is_finite_p, exp_p, exp2_p, log_p, log1p_p, expm1_p,
    tanh_p, logistic_p, sin_p, cos_p, tan_p, asin_p, acos_p, atan_p, sinh_p, cosh_p,
    asinh_p, acosh_p, atanh_p, sqrt_p, rsqrt_p, cbrt_p, abs_p, not_p, square_p,
    integer_pow_p, add_p, sub_p, mul_p, div_p, rem_p, pow_p, max_p, min_p, atan2_p,
    nextafter_p, and_p, or_p, xor_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p, select_n_p,
    convert_element_type_p, clamp_p)
from jaxlite._src.lax.shapes import (
    broadcast_in_dim_p, reshape_p, transpose_p, squeeze_p, concatenate_p, slice_p, rev_p,
    iota_p, pad_p)
from jaxlite._src.lax.reductions import (
    reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p,
    reduce_xor_p, argmax_p, argmin_p, dot_general_p)
from jaxlite._src.lax.indexing import (
    dynamic_slice_p, dynamic_update_slice_p, gather_p, scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p,
    scatter_max_p)
from jaxlite._src.lax.parallel import (
    psum, pmean, pmax, pmin, all_gather, axis_index, psum_p, pmax_p, pmin_p, all_gather_p,
    axis_index_p, ppermute, ppermute_p, all_to_all, all_to_all_p)
from jaxlite._src.lax.custom_derivatives import stop_gradient, stop_gradient_p
from jaxlite._src.lax.special import (erf, erfc, erf_inv, lgamma, digamma, polygamma, igamma, igammac, igamma_grad_a, bessel_i0e, bessel_i1e, erf_p, erfc_p, erf_inv_p, lgamma_p, digamma_p, polygamma_p, igamma_p, igammac_p, igamma_grad_a_p, bessel_i0e_p, bessel_i1e_p, zeta_p)  # noqa
from jaxlite._src.lax.bits import (RoundingMethod, shift_left, shift_right_logical, shift_right_arithmetic, population_count, clz, round, reduce_precision, bitcast_convert_type, real, imag, complex, conj, shift_left_p, shift_right_logical_p, shift_right_arithmetic_p, population_count_p, clz_p, round_p, reduce_precision_p, bitcast_convert_type_p, real_p, imag_p, complex_p, conj_p)  # noqa
from jaxlite._src.lax.sorting import (sort, sort_key_val, top_k, cumsum, cumprod, cummax, cummin, cumlogsumexp, sort_p, top_k_p, cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p)  # noqa
from jaxlite._src.lax.fft import fft, fft_p, FftType  # noqa
from jaxlite._src.lax.convolution import conv_general_dilated, conv, conv_with_general_padding, conv_dimension_numbers, ConvDimensionNumbers, conv_general_dilated_p, padtype_to_pads  # noqa
from jaxlite._src.lax.windowed import reduce_window, reduce_window_sum, reduce_window_max, reduce_window_min, reduce_window_sum_p, reduce_window_max_p, reduce_window_min_p, reduce_window_p  # noqa
from jaxlite.lax import linalg  # noqa
from jaxlite._src.lax.base import dtype, stage, shape_as_value  # noqa
from jaxlite._src.lax.shapes import (  # noqa
    full, full_like, empty, broadcast_like, broadcast_shapes, broadcast_to_rank, collapse,
    split, stack, tile)
from jaxlite._src.lax.indexing import index_take, unstack  # noqa
from jaxlite._src.lax.sorting import approx_max_k, approx_min_k  # noqa
from jaxlite._src.lax.arithmetic import reciprocal, mulhi, mul, nextafter  # noqa
from jaxlite._src.lax.reductions import DotDimensionNumbers  # noqa
from jaxlite._src.lax.precision import (  # noqa
    AccuracyMode, DotAlgorithm, DotAlgorithmPreset, Precision, PrecisionLike, Tolerance)
from jaxlite._src.lax.call import optimization_barrier, composite  # noqa
from jaxlite._src.lax.special import zeta, betainc, random_gamma_grad  # noqa
from jaxlite._src.lax.rng import RandomAlgorithm, rng_bit_generator  # noqa
from jaxlite._src.lax.convolution import (  # noqa
    ConvGeneralDilatedDimensionNumbers, conv_general_permutations, conv_general_shape_tuple,
    conv_shape_tuple, conv_transpose_shape_tuple, conv_transpose,
    conv_general_dilated_patches, conv_general_dilated_local)
from jaxlite._src.lax.windowed import reduce_window_shape_tuple  # noqa
from jaxlite._src.lax.matmul import (  # noqa
    RaggedDotDimensionNumbers, batch_matmul, ragged_dot, ragged_dot_general, scaled_dot)
from jaxlite._src.lax.solves import custom_linear_solve  # noqa
from jaxlite._src.lax.parallel import (  # noqa
    axis_size, pshuffle, pswapaxes, psum_scatter, pbroadcast, pcast)
from jaxlite._src.api import platform_dependent  # noqa
from jaxlite._src.autodiff_api import custom_root  # noqa
from jaxlite._src.lax.rng import rng_bit_generator_p  # noqa
from jaxlite._src.lax.sharding_constraint import with_sharding_constraint, sharding_constraint_p  # noqa: E402
