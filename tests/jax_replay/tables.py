"""What the replay covers: every elementwise function over the dtypes and argument
patterns, reductions, shape functions with their keywords, indexing, ``.at[]`` updates,
gradients, and the rest of the public API that a table can describe.

``all_cases(x64)`` builds the list; ``COVERED`` is the set of public names it calls, which
the replay test checks against jaxlite's public namespaces.
"""
from __future__ import annotations

from cases import A, Case, DTYPES, DTYPES_X64, FLOATS, edge_values, _dtype

# ----------------------------------------------------------------------------- elementwise

JNP_UNARY = """abs absolute acos acosh angle arccos arccosh arcsin arcsinh arctan arctanh asin
asinh atan atanh bitwise_count bitwise_invert bitwise_not cbrt ceil conj conjugate cos cosh
deg2rad degrees exp exp2 expm1 fabs floor frexp i0 imag invert iscomplex isfinite isinf isnan
isneginf isposinf isreal log log10 log1p log2 logical_not modf nan_to_num negative positive
rad2deg radians real reciprocal rint round around sign signbit sin sinc sinh spacing sqrt
square tan tanh trunc""".split()

JNP_BINARY = """add arctan2 atan2 bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift
bitwise_xor copysign divide divmod equal float_power floor_divide fmax fmin fmod gcd greater
greater_equal heaviside hypot isclose lcm ldexp left_shift less less_equal logaddexp
logaddexp2 logical_and logical_or logical_xor maximum minimum mod multiply nextafter
not_equal pow power remainder right_shift subtract true_divide array_equal array_equiv
allclose""".split()

LAX_UNARY = """abs acos acosh asin asinh atan atanh bessel_i0e bessel_i1e bitwise_not cbrt ceil
clz conj cos cosh digamma erf erf_inv erfc exp exp2 expm1 floor imag is_finite lgamma log
log1p logistic neg population_count real reciprocal round rsqrt sign sin sinh sqrt square
tan tanh""".split()

LAX_BINARY = """add atan2 bitwise_and bitwise_or bitwise_xor complex div eq ge gt igamma
igammac le lt max min mul ne nextafter pow rem shift_left shift_right_arithmetic
shift_right_logical sub polygamma zeta""".split()

NN_UNARY = """celu elu gelu hard_sigmoid hard_silu hard_swish hard_tanh identity leaky_relu
log1mexp log_sigmoid mish relu relu6 selu sigmoid silu soft_sign softplus sparse_plus
sparse_sigmoid squareplus swish tanh""".split()

SPECIAL_UNARY = """dawsn digamma entr erf erfc erfcx erfinv exp1 expi expit gamma gammaln
gammasgn i0 i0e i1 i1e log_ndtr loggamma logit ndtr ndtri spence fresnel sici wofz
factorial""".split()

SPECIAL_BINARY = """beta betaln boxcox boxcox1p comb gammainc gammaincc kl_div multigammaln
poch polygamma rel_entr xlog1py xlogy zeta expn""".split()

# functions whose float results legitimately differ from JAX's by more than a few ulps
# (different but accurate algorithms): relative tolerance for float32 and wider
LOOSE = {name: 1e-4 for name in
         ["special." + n for n in SPECIAL_UNARY + SPECIAL_BINARY] +
         ["lax." + n for n in "bessel_i0e bessel_i1e digamma erf_inv lgamma igamma igammac "
          "polygamma zeta erf erfc".split()] +
         ["numpy.i0", "numpy.sinc", "numpy.spacing"]}

# JAX 0.10's gcd loop never ends when an operand is iinfo.min (its absolute value
# overflows), so there is no answer to record for the integer edge values
_HANGS_ON_EDGES = {"numpy.gcd", "numpy.lcm"}
# (2 - 3j) ** (3.4e38 + 1j) has parts +-inf with the signs of cos and sin of
# 3.4e38 * arg(2 - 3j): XLA's float32 atan2 is one ulp off libm's there (measured:
# -0.98279375 vs -0.9827938), which flips a sign; the complex edge cross product is libm's
_LIBM_DEPENDENT_COMPLEX_EDGES = {"numpy.pow", "numpy.power", "numpy.float_power", "lax.pow"}
# complex128 atan2(0, -1.5 - 0.5j) divides -1.5 - 0.5j by its own square root: Smith's
# algorithm's imaginary part is -0.5 + (1/3) * 1.5, exactly +0 in NumPy and a tiny negative
# number where XLA's LLVM contracts it into a fused multiply-add, which picks the side of
# the branch cut (pi or -pi); that depends on the CPU's FMA, so these edges are not compared
_FMA_DEPENDENT_COMPLEX128_EDGES = {"numpy.arctan2", "numpy.atan2", "lax.atan2"}

# at the float maximum these compute exp(x) * (1 / x): XLA's CPU code flushes the
# subnormal 1 / x to zero and answers inf * 0 = NaN, where NumPy (eager, tier 0) keeps
# it and answers the limit. Not a property of the function; the other edges stay covered
# by the same functions' other cases and by tests/test_scipy.py.
# Case.rtol is in units of the float32 tolerance; the float64 one is this much smaller
RTOL_FLOAT64_PER_FLOAT32 = 1e-12 / 4e-6
_FLUSHED_SUBNORMAL_EDGES = {"special.expi", "special.spence"}
# jit of custom_linear_solve with an int32 operand and a float solve fails JAX's own
# MLIR verifier (a JAX bug: the result type is taken from the operand), so there is no
# answer to record
_JAX_LOWERING_BUG = {("lax.custom_linear_solve", "int32")}

_MIXED = [("int8", "uint8"), ("int32", "float16"), ("bfloat16", "float16"), ("bool", "int8"),
          ("uint32", "int32"), ("float32", "complex64"), ("uint8", "bfloat16"),
          ("int8", "float32")]
_MIXED_X64 = [("int64", "uint64"), ("int32", "float64"), ("float32", "float64"),
              ("uint32", "int64"), ("complex64", "float64")]


def _unary(group, fn, dtypes, scalars=(2, -1.5, True)):
  out = []
  for d in dtypes:
    out.append(Case(group, fn, [A(d)]))
    if group not in _FLUSHED_SUBNORMAL_EDGES:
      out.append(Case(group, fn, [A(d, (16,) if d != "bool" else (2,), "edge")]))
  for d in ("int32", "float32", "bool"):
    out.append(Case(group, fn, [A(d, ())]))
  for s in scalars:
    out.append(Case(group, fn, [s], vmap=False))
  return out


def _binary(group, fn, dtypes, x64, weak=True):
  out = []
  for d in dtypes:
    out.append(Case(group, fn, [A(d), A(d)]))
    k = len(edge_values(_dtype(d)))
    if not (group in _HANGS_ON_EDGES and d[0] in "iu") and not (
        group in _LIBM_DEPENDENT_COMPLEX_EDGES and d.startswith("complex")) and not (
        group in _FMA_DEPENDENT_COMPLEX128_EDGES and d == "complex128"):
      out.append(Case(group, fn, [A(d, (k * k,), "edge_x"), A(d, (k * k,), "edge_y")]))
    if weak:
      for s in (2, 1.5, -3, True):
        out.append(Case(group, fn, [A(d), s]))
      for s in (3, 0.5):
        out.append(Case(group, fn, [s, A(d)]))
  if weak:
    for a, b in _MIXED + (_MIXED_X64 if x64 else []):
      out.append(Case(group, fn, [A(a), A(b)]))
    for d in ("float32", "int32"):
      out.append(Case(group, fn, [A(d), A(d, (3,))]))
      out.append(Case(group, fn, [A(d, ()), A(d)]))
      out.append(Case(group, fn, [A(d, (2, 1)), A(d, (1, 3))]))
    out.append(Case(group, fn, [2, 3], vmap=False))
    out.append(Case(group, fn, [2.5, 1], vmap=False))
  return out


def elementwise_cases(x64):
  dtypes = DTYPES_X64 if x64 else DTYPES
  cases = []
  for n in JNP_UNARY:
    cases += _unary(f"numpy.{n}", f"numpy.{n}", dtypes)
  for n in JNP_BINARY:
    cases += _binary(f"numpy.{n}", f"numpy.{n}", dtypes, x64)
  for n in LAX_UNARY:
    cases += _unary(f"lax.{n}", f"lax.{n}", dtypes, scalars=(2.0,))
  for n in LAX_BINARY:
    cases += _binary(f"lax.{n}", f"lax.{n}", dtypes, x64, weak=False)
    cases.append(Case(f"lax.{n}", f"lax.{n}", [A("float32"), 2.0]))
    cases.append(Case(f"lax.{n}", f"lax.{n}", [A("int32"), 2]))
  # no complex activations: JAX jits them, so XLA's algebraic simplifier (x / 1 -> x and
  # the like) decides what complex infinities and the signs of zero parts on branch cuts
  # become, which no eager evaluation reproduces
  for n in NN_UNARY:
    cases += _unary(f"nn.{n}", f"nn.{n}", [d for d in dtypes if not d.startswith("complex")],
                    scalars=(2, -1.5))
  for n in SPECIAL_UNARY:
    cases += _unary(f"special.{n}", f"scipy.special.{n}",
                    ["float32", "int32", "bool"] + (["float64"] if x64 else []), scalars=(2,))
  for n in SPECIAL_BINARY:
    for d in ["float32", "int32"] + (["float64"] if x64 else []):
      cases.append(Case(f"special.{n}", f"scipy.special.{n}", [A(d, fill="pos"),
                                                                A(d, fill="pos")]))
      cases.append(Case(f"special.{n}", f"scipy.special.{n}", [A(d), A(d)]))
    cases.append(Case(f"special.{n}", f"scipy.special.{n}", [A("float32", fill="pos"), 2]))
  for n, fills in {"betainc": ("pos", "pos", "prob"), "hyp1f1": ("pos", "pos", "small"),
                   "hyp2f1": ("pos", "pos", "pos", "unit")}.items():
    for d in ["float32"] + (["float64"] if x64 else []):
      cases.append(Case(f"special.{n}", f"scipy.special.{n}", [A(d, fill=f) for f in fills]))
  cases.append(Case("special.bernoulli", "scipy.special.bernoulli", [8], vmap=False))
  cases.append(Case("special.bessel_jn", "scipy.special.bessel_jn", [A("float32", fill="pos")],
                    {"v": 3}))
  cases.append(Case("special.log_ndtr", "scipy.special.log_ndtr", [A("float32")],
                    {"series_order": 2}))
  # with x64 on, JAX computes these from float32 inputs partly in float32 and widens the
  # result to 64 bits, so its answer is right to float32's rounding only (measured: 1e-7
  # relative to scipy's float64 values, as jaxlite's); compared to 1e-6 there
  float32_inside = 1e-6 / RTOL_FLOAT64_PER_FLOAT32 if x64 else None
  cases.append(Case("special.owens_t", "scipy.special.owens_t", [A("float32"), A("float32")],
                    rtol=float32_inside))
  cases.append(Case("special.sph_harm_y", "scipy.special.sph_harm_y",
                    [A("int32", (3,), (1, 2, 3)), A("int32", (3,), (0, 1, -2)),
                     A("float32", (3,), "pos"), A("float32", (3,), "pos")], {"n_max": 3},
                    rtol=float32_inside))
  for d in ("float32", "int32"):
    cases.append(Case("special.softmax", "scipy.special.softmax", [A(d)], {"axis": 1}))
    cases.append(Case("special.log_softmax", "scipy.special.log_softmax", [A(d)], {"axis": 0}))
    cases.append(Case("special.logsumexp", "scipy.special.logsumexp", [A(d)], {"axis": 1}))
  cases.append(Case("special.logsumexp", "scipy.special.logsumexp", [A("float32")],
                    {"b": A("float32", fill="pos"), "return_sign": True}))
  for n, kw in {"leaky_relu": {"negative_slope": 0.2}, "elu": {"alpha": 0.5},
                "celu": {"alpha": 2.0}, "gelu": {"approximate": False},
                "squareplus": {"b": 2.0}}.items():
    for d in ("float32", "bfloat16", "int32"):
      cases.append(Case(f"nn.{n}", f"nn.{n}", [A(d)], kw))
  for d in ("float32", "float16", "int32", "bool"):
    for kw in ({}, {"axis": 0}, {"axis": None}, {"where": A("bool")}):
      for n in ("softmax", "log_softmax", "standardize", "logsumexp", "logmeanexp"):
        cases.append(Case(f"nn.{n}", f"nn.{n}", [A(d)], kw))
    cases.append(Case("nn.glu", "nn.glu", [A(d, (2, 4))]))
    cases.append(Case("nn.glu", "nn.glu", [A(d, (4, 2))], {"axis": 0}))
    cases.append(Case("nn.one_hot", "nn.one_hot", [A(d, (5,), "small"), 3]))
  cases.append(Case("nn.one_hot", "nn.one_hot", [A("int32", (2, 3), "small"), 4],
                    {"axis": 0, "dtype": "int8"}))
  cases.append(Case("nn.logsumexp", "nn.logsumexp", [A("float32")],
                    {"axis": 1, "keepdims": True, "b": A("float32")}))
  return cases


# ----------------------------------------------------------------------------- reductions

REDUCTIONS = """sum prod max min mean var std any all argmax argmin nansum nanprod nanmax nanmin
nanmean nanvar nanstd nanargmax nanargmin ptp median nanmedian count_nonzero amax amin
average""".split()
CUMULATIVE = "cumsum cumprod nancumsum nancumprod cumulative_sum cumulative_prod".split()


def reduction_cases(x64):
  dtypes = DTYPES_X64 if x64 else DTYPES
  cases = []
  for n in REDUCTIONS:
    g, fn = f"numpy.{n}", f"numpy.{n}"
    for d in dtypes:
      cases.append(Case(g, fn, [A(d)]))
      cases.append(Case(g, fn, [A(d, (16,) if d != "bool" else (2,), "edge")]))
      cases.append(Case(g, fn, [A(d)], {"axis": 0}))
      cases.append(Case(g, fn, [A(d, (2, 3, 4))], {"axis": -1, "keepdims": True}))
    for d in ("float32", "int32", "bool"):
      cases.append(Case(g, fn, [A(d, ())]))
      cases.append(Case(g, fn, [A(d, (0, 3))]))
      cases.append(Case(g, fn, [A(d, (0, 3))], {"axis": 1}))
      cases.append(Case(g, fn, [A(d, (2, 3, 4))], {"axis": (0, 2)}))
      cases.append(Case(g, fn, [A(d)], {"axis": None, "keepdims": True}))
      cases.append(Case(g, fn, [A(d)], {"axis": 2}))
    cases.append(Case(g, fn, [3.0], vmap=False))
  for n in ("sum", "prod", "mean", "var", "std", "nansum", "nanmean", "nanprod", "nanvar",
            "nanstd"):
    for d in ("int8", "int32", "float16", "float32", "bool", "uint8"):
      for to in ("int32", "float32", "float16", "int8") + (("float64",) if x64 else ()):
        cases.append(Case(f"numpy.{n}", f"numpy.{n}", [A(d)], {"dtype": to}))
  for n in ("var", "std", "nanvar", "nanstd"):
    cases.append(Case(f"numpy.{n}", f"numpy.{n}", [A("float32")], {"ddof": 1, "axis": 1}))
  for n in ("sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "nansum",
            "nanmax", "nanmin", "nanmean", "amax", "amin"):
    for d in ("float32", "int32"):
      kw = {"where": A("bool")}
      if n in ("max", "min", "nanmax", "nanmin", "amax", "amin"):
        cases.append(Case(f"numpy.{n}", f"numpy.{n}", [A(d)], dict(kw)))   # needs initial
        kw["initial"] = 0
      cases.append(Case(f"numpy.{n}", f"numpy.{n}", [A(d)], dict(kw, axis=1)))
  for n in ("sum", "prod", "max", "min"):
    cases.append(Case(f"numpy.{n}", f"numpy.{n}", [A("float32")], {"initial": 2.0, "axis": 0}))
  cases.append(Case("numpy.average", "numpy.average", [A("float32")],
                    {"axis": 1, "weights": A("float32", (3,), "pos"), "returned": True}))
  for n in CUMULATIVE:
    for d in dtypes:
      cases.append(Case(f"numpy.{n}", f"numpy.{n}", [A(d)], {"axis": 1}))
      cases.append(Case(f"numpy.{n}", f"numpy.{n}", [A(d, (16,) if d != "bool" else (2,),
                                                         "edge")], {"axis": 0}))
    cases.append(Case(f"numpy.{n}", f"numpy.{n}", [A("float32")], {"axis": 0,
                                                                   "dtype": "int32"}))
  for n in ("cumsum", "cumprod", "nancumsum", "nancumprod"):
    cases.append(Case(f"numpy.{n}", f"numpy.{n}", [A("int8")]))
  for n in ("cumulative_sum", "cumulative_prod"):
    cases.append(Case(f"numpy.{n}", f"numpy.{n}", [A("int32")],
                      {"axis": 1, "include_initial": True}))
  for n in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
    for d in ("float32", "int32", "bfloat16", "uint8"):
      cases.append(Case(f"lax.{n}", f"lax.{n}", [A(d)], {"axis": 1}))
      cases.append(Case(f"lax.{n}", f"lax.{n}", [A(d)], {"axis": 0, "reverse": True}))
  for n in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
            "reduce_or", "reduce_xor"):
    for d in dtypes:
      cases.append(Case(f"lax.{n}", f"lax.{n}", [A(d, (2, 3, 4)), (0, 2)]))
  for n in ("argmax", "argmin"):
    for d in ("float32", "int32", "bool", "bfloat16"):
      cases.append(Case(f"lax.{n}", f"lax.{n}", [A(d), 1, "int32"]))
  for q in ("quantile", "percentile", "nanquantile", "nanpercentile"):
    qv = 0.3 if "quantile" in q else 30.0
    for method in ("linear", "lower", "higher", "nearest", "midpoint"):
      cases.append(Case(f"numpy.{q}", f"numpy.{q}", [A("float32", (3, 5)), qv],
                        {"axis": 1, "method": method}))
    cases.append(Case(f"numpy.{q}", f"numpy.{q}", [A("int32", (3, 5)), qv]))
    cases.append(Case(f"numpy.{q}", f"numpy.{q}", [A("float32", (3, 5)),
                                                     A("float32", (2,), "prob")]))
  return cases


# ----------------------------------------------------------------------------- shapes

def _calls(group_prefix, table, dtypes=("float32", "int32", "bool")):
  """Cases from ``(name, args, kwargs)`` rows calling ``group_prefix.name``."""
  out = []
  for name, args, kwargs in table:
    for d in dtypes:
      concrete = [A(d, a.shape, a.fill) if isinstance(a, A) and a.dtype == "T" else a
                  for a in args]
      kw = {k: A(d, v.shape, v.fill) if isinstance(v, A) and v.dtype == "T" else v
            for k, v in kwargs.items()}
      out.append(Case(f"{group_prefix}.{name}", f"{group_prefix}.{name}", concrete, kw))
  return out


def T(shape=(2, 3), fill="any"):
  """An array argument of the row's dtype."""
  return A("T", shape, fill)


SHAPE_CALLS = [
    ("reshape", [T(), (3, 2)], {}), ("reshape", [T(), -1], {}),
    ("reshape", [T(), (3, -1)], {}), ("reshape", [T(), (3, 2)], {"order": "F"}),
    ("reshape", [T(), (4, 2)], {}), ("reshape", [T(), (-1, -1)], {}),
    ("ravel", [T()], {}), ("ravel", [T()], {"order": "F"}),
    ("transpose", [T()], {}), ("transpose", [T((2, 3, 4)), (1, 2, 0)], {}),
    ("transpose", [T((2, 3, 4)), (1, 1, 0)], {}),
    ("permute_dims", [T((2, 3, 4))], {"axes": (2, 0, 1)}),
    ("matrix_transpose", [T((2, 3, 4))], {}),
    ("swapaxes", [T((2, 3, 4)), 0, 2], {}), ("moveaxis", [T((2, 3, 4)), 0, -1], {}),
    ("moveaxis", [T((2, 3, 4)), (0, 1), (2, 0)], {}), ("rollaxis", [T((2, 3, 4)), 2], {}),
    ("squeeze", [T((1, 3, 1))], {}), ("squeeze", [T((1, 3, 1)), 2], {}),
    ("squeeze", [T((1, 3, 1)), (0, 2)], {}), ("squeeze", [T((1, 3, 1)), 1], {}),
    ("expand_dims", [T(), 0], {}), ("expand_dims", [T(), -1], {}),
    ("expand_dims", [T(), (0, 2)], {}), ("expand_dims", [T(), 4], {}),
    ("broadcast_to", [T((3,)), (2, 3)], {}), ("broadcast_to", [T((2, 1)), (2, 2, 4)], {}),
    ("broadcast_to", [T((2, 3)), (3,)], {}),
    ("concatenate", [[T(), T()]], {}), ("concatenate", [[T(), T()]], {"axis": 1}),
    ("concatenate", [[T(), T((2, 2))]], {"axis": 1}),
    ("concatenate", [[T(), T()]], {"axis": None}),
    ("concatenate", [[T(), T()]], {"dtype": "float16"}),
    ("concat", [[T(), T()]], {"axis": 1}),
    ("stack", [[T(), T()]], {}), ("stack", [[T(), T()]], {"axis": -1}),
    ("stack", [[T(), T((3, 2))]], {}),
    ("vstack", [[T(), T((3,))]], {}), ("hstack", [[T(), T()]], {}),
    ("dstack", [[T(), T()]], {}), ("column_stack", [[T((3,)), T((3, 2))]], {}),
    ("split", [T((4, 3)), 2], {}), ("split", [T((4, 3)), [1, 3]], {}),
    ("split", [T((4, 3)), 3], {}), ("split", [T((2, 6)), 3], {"axis": 1}),
    ("array_split", [T((5, 3)), 3], {}), ("hsplit", [T((2, 4)), 2], {}),
    ("vsplit", [T((4, 2)), 2], {}), ("dsplit", [T((2, 2, 4)), 2], {}),
    ("unstack", [T()], {}), ("unstack", [T()], {"axis": 1}),
    ("tile", [T(), 2], {}), ("tile", [T(), (2, 1, 2)], {}),
    ("repeat", [T(), 2], {}), ("repeat", [T(), 2], {"axis": 1}),
    ("repeat", [T(), [1, 0, 2]], {"axis": 1}),
    ("repeat", [T(), A("int32", (3,), "small")], {"axis": 1, "total_repeat_length": 5}),
    ("flip", [T()], {}), ("flip", [T(), 0], {}), ("flip", [T(), (0, 1)], {}),
    ("fliplr", [T()], {}), ("flipud", [T()], {}),
    ("rot90", [T()], {}), ("rot90", [T(), 2], {}), ("rot90", [T((2, 3, 4)), -1, (1, 2)], {}),
    ("roll", [T(), 1], {}), ("roll", [T(), -2, 1], {}), ("roll", [T(), (1, 1), (0, 1)], {}),
    ("atleast_1d", [T(())], {}), ("atleast_2d", [T((3,))], {}),
    ("atleast_3d", [T()], {}), ("atleast_1d", [T(()), T((2,))], {}),
    ("pad", [T(), 1], {}), ("pad", [T(), ((1, 0), (0, 2))], {"constant_values": 5}),
    ("pad", [T(), 2], {"mode": "edge"}), ("pad", [T(), 1], {"mode": "reflect"}),
    ("pad", [T(), 1], {"mode": "symmetric"}), ("pad", [T(), 2], {"mode": "wrap"}),
    ("pad", [T(), 1], {"mode": "linear_ramp", "end_values": 3}),
    ("pad", [T(), 1], {"mode": "maximum"}), ("pad", [T(), 1], {"mode": "mean"}),
    ("pad", [T(), 1], {"mode": "empty"}),
    ("diag", [T((3, 3))], {}), ("diag", [T((3,))], {"k": 1}), ("diag", [T((3, 4)), -1], {}),
    ("diagonal", [T((3, 4))], {}), ("diagonal", [T((2, 3, 4)), 1, 1, 2], {}),
    ("diagflat", [T()], {}), ("trace", [T((3, 4))], {}), ("trace", [T((3, 4)), 1], {}),
    ("tril", [T((3, 4))], {}), ("triu", [T((3, 4)), 1], {}), ("tril", [T((2, 3, 3)), -1], {}),
    ("append", [T(), T()], {}), ("append", [T(), T()], {"axis": 0}),
    ("insert", [T(), 1, 5], {}), ("insert", [T(), 1, 5], {"axis": 1}),
    ("insert", [T(), [0, 2], T((2, 2))], {"axis": 1}),
    ("delete", [T(), 1], {}), ("delete", [T(), [0, 2]], {"axis": 1}),
    ("delete", [T(), slice(0, 2)], {"axis": 1}),
    ("resize", [T(), (4, 4)], {}), ("resize", [T(), 3], {}),
    ("block", [[[T((2, 2)), T((2, 1))], [T((1, 2)), T((1, 1))]]], {}),
    ("broadcast_arrays", [T((3,)), T((2, 1))], {}),
    ("meshgrid", [T((3,)), T((2,))], {}), ("meshgrid", [T((3,)), T((2,))],
                                           {"indexing": "ij", "sparse": True}),
    ("ix_", [T((3,)), T((2,))], {}),
    ("copy", [T()], {}), ("astype", [T(), "int8"], {}), ("astype", [T(), "float16"], {}),
    ("astype", [T(), "bool"], {}), ("astype", [T(), "complex64"], {}),
    ("astype", [T(), "uint32"], {}),
    ("trim_zeros", [T((6,), (0, 1, 2, 0, 3, 0))], {}),
    ("trim_zeros", [T((6,), (0, 1, 2, 0, 3, 0))], {"trim": "b"}),
    ("shape", [T()], {}), ("ndim", [T()], {}), ("size", [T()], {}), ("size", [T(), 1], {}),
    ("isscalar", [T(())], {}), ("iscomplexobj", [T()], {}), ("isrealobj", [T()], {}),
]

SORT_CALLS = [
    ("sort", [T()], {}), ("sort", [T(), 0], {}), ("sort", [T()], {"axis": None}),
    ("sort", [T()], {"descending": True}), ("sort", [T((16,), "edge")], {}),
    ("argsort", [T()], {}), ("argsort", [T(), 0], {}), ("argsort", [T()], {"descending": True}),
    ("argsort", [T((16,), "edge")], {}), ("argsort", [T()], {"axis": None}),
    ("lexsort", [[T((5,)), T((5,))]], {}), ("partition", [T((6,)), 2], {}),
    ("argpartition", [T((6,)), 2], {}), ("sort_complex", [T((5,))], {}),
    ("searchsorted", [T((5,), (0, 1, 1, 2, 3)), T((4,), (1, 0, 3, 2))], {}),
    ("searchsorted", [T((5,), (0, 1, 1, 2, 3)), T((4,), (1, 0, 3, 2))], {"side": "right"}),
    ("searchsorted", [T((5,), (0, 1, 1, 2, 3)), 1], {}),
    ("unique", [T((8,), "small")], {}),
    ("unique", [T((8,), "small")], {"return_index": True, "return_inverse": True,
                                    "return_counts": True}),
    ("unique", [T((8,), "small")], {"size": 4, "fill_value": 0}),
    ("unique", [T((3, 4), "small")], {"axis": 0}),
    ("unique_values", [T((8,), "small")], {}), ("unique_counts", [T((8,), "small")], {}),
    ("unique_inverse", [T((8,), "small")], {}), ("unique_all", [T((8,), "small")], {}),
    ("nonzero", [T()], {}), ("nonzero", [T()], {"size": 4}), ("flatnonzero", [T()], {}),
    ("argwhere", [T()], {}), ("argwhere", [T()], {"size": 3, "fill_value": -1}),
    ("count_nonzero", [T()], {"axis": 0}),
    ("isin", [T((6,), "small"), T((2,), "small")], {}),
    ("isin", [T((6,), "small"), T((2,), "small")], {"invert": True}),
    ("intersect1d", [T((6,), "small"), T((4,), "small")], {}),
    ("intersect1d", [T((6,), "small"), T((4,), "small")], {"return_indices": True}),
    ("union1d", [T((6,), "small"), T((4,), "small")], {}),
    ("setdiff1d", [T((6,), "small"), T((4,), "small")], {}),
    ("setxor1d", [T((6,), "small"), T((4,), "small")], {}),
    ("compress", [A("bool", (3,)), T()], {"axis": 1}),
    ("extract", [A("bool"), T()], {}), ("extract", [A("bool"), T()], {"size": 4}),
    ("where", [A("bool"), T(), T()], {}), ("where", [A("bool"), T(), 0], {}),
    ("where", [A("bool"), 1.5, T((3,))], {}), ("where", [T()], {}),
    ("where", [T()], {"size": 5, "fill_value": 0}),
    ("select", [[A("bool"), A("bool")], [T(), T()]], {}),
    ("select", [[A("bool")], [T()]], {"default": 7}),
    ("choose", [A("int32", (2, 3), "small"), [T(), T(), T()]], {}),
    ("choose", [A("int32", (2, 3), "index"), [T(), T()]], {"mode": "wrap"}),
    ("clip", [T(), 0, 2], {}), ("clip", [T()], {"min": -1}), ("clip", [T(), T(), 1.5], {}),
    ("bincount", [A("int32", (8,), "small")], {}),
    ("bincount", [A("int32", (8,), "small")], {"weights": T((8,)), "length": 4}),
    ("digitize", [T((6,)), A("float32", (3,), (-1.0, 0.0, 1.0))], {}),
    ("digitize", [T((6,)), A("float32", (3,), (-1.0, 0.0, 1.0))], {"right": True}),
    ("histogram", [T((10,))], {"bins": 4}),
    ("histogram", [T((10,))], {"bins": 3, "range": (-1, 1), "density": True}),
    ("histogram_bin_edges", [T((10,))], {"bins": 4}),
    ("interp", [A("float32", (5,)), A("float32", (4,), (-2.0, -0.5, 1.0, 2.0)), T((4,))], {}),
    ("packbits", [A("bool", (2, 10))], {}), ("packbits", [A("bool", (2, 10))],
                                                 {"axis": 1, "bitorder": "little"}),
    ("unpackbits", [A("uint8", (2, 2), "any")], {}),
    ("unpackbits", [A("uint8", (2, 2), "any")], {"axis": 1, "count": 5}),
    ("put_along_axis", [T(), A("int32", (2, 1), "small"), T((2, 1))],
     {"axis": 1, "inplace": False}),
    ("take_along_axis", [T(), A("int32", (2, 2), "small")], {"axis": 1}),
    ("take", [T(), A("int32", (4,), "index")], {}),
    ("take", [T(), A("int32", (2,), "small")], {"axis": 1}),
    ("take", [T(), A("int32", (4,), "any")], {"mode": "clip"}),
    ("take", [T(), A("int32", (4,), "any")], {"mode": "wrap", "axis": 1}),
    ("take", [T(), A("int32", (4,), "any")], {"mode": "fill", "fill_value": -1}),
]

LINALG_CALLS = [
    ("dot", [T((3,)), T((3,))], {}), ("dot", [T(), T((3, 2))], {}), ("dot", [T(), T((3,))], {}),
    ("dot", [T(), 2], {}), ("dot", [T((2, 3, 4)), T((4, 2))], {}),
    ("dot", [T(), T((3, 2))], {"preferred_element_type": "float32"}),
    ("dot", [T(), T((3, 2))], {"preferred_element_type": "int32"}),
    ("matmul", [T(), T((3, 2))], {}), ("matmul", [T((3,)), T((3, 2))], {}),
    ("matmul", [T((2, 2, 3)), T((3, 4))], {}), ("matmul", [T(), T((3,))], {}),
    ("matmul", [T(), T((3, 2))], {"preferred_element_type": "float32"}),
    ("vdot", [T(), T()], {}), ("vecdot", [T(), T()], {}), ("vecdot", [T(), T()], {"axis": 0}),
    ("matvec", [T(), T((3,))], {}), ("vecmat", [T((2,)), T()], {}),
    ("inner", [T(), T((4, 3))], {}), ("outer", [T((3,)), T((2,))], {}),
    ("tensordot", [T((2, 3, 4)), T((3, 4, 2))], {}),
    ("tensordot", [T((2, 3, 4)), T((4, 3))], {"axes": ([1, 2], [1, 0])}),
    ("tensordot", [T(), T((3, 2))], {"axes": 1}),
    ("kron", [T((2, 2)), T((2, 3))], {}), ("cross", [T((2, 3)), T((2, 3))], {}),
    ("einsum", ["ij,jk->ik", T(), T((3, 2))], {}), ("einsum", ["ii->i", T((3, 3))], {}),
    ("einsum", ["ij->", T()], {}), ("einsum", ["i,i", T((3,)), T((3,))], {}),
    ("einsum", ["bij,bjk->bik", T((2, 2, 3)), T((2, 3, 2))], {}),
    ("convolve", [T((5,)), T((3,))], {}), ("convolve", [T((5,)), T((3,))], {"mode": "same"}),
    ("correlate", [T((5,)), T((3,))], {}),
    ("correlate", [T((5,)), T((3,))], {"mode": "full"}),
    ("polyval", [T((3,)), T((4,))], {}), ("polyadd", [T((3,)), T((2,))], {}),
    ("polysub", [T((3,)), T((2,))], {}), ("polymul", [T((3,)), T((2,))], {}),
    ("polyder", [T((4,))], {}), ("polyder", [T((4,)), 2], {}), ("polyint", [T((3,))], {}),
    ("polyint", [T((3,)), 2, 1.0], {}), ("poly", [T((3,))], {}),
    ("trapezoid", [T()], {}), ("trapezoid", [T(), T((3,))], {}),
    ("trapezoid", [T()], {"dx": 0.5, "axis": 0}),
    ("diff", [T()], {}), ("diff", [T(), 2], {"axis": 1}), ("diff", [T()], {"axis": 0,
                                                                        "prepend": 0}),
    ("ediff1d", [T((5,))], {}), ("ediff1d", [T((5,))], {"to_begin": 1, "to_end": 2}),
    ("gradient", [T((5,))], {}), ("gradient", [T((4, 5))], {"axis": 1}),
    ("cov", [T((2, 5))], {}), ("cov", [T((2, 5))], {"bias": True}),
    ("corrcoef", [T((2, 5))], {}), ("unwrap", [T((6,))], {}),
    ("vander", [T((3,))], {}), ("vander", [T((3,)), 4], {"increasing": True}),
    ("isclose", [T(), T()], {"rtol": 0.5}), ("allclose", [T(), T()], {"atol": 10}),
    ("array_equal", [T(), T()], {"equal_nan": True}),
    ("nan_to_num", [T((16,), "edge")], {"nan": 1.0, "posinf": 2.0, "neginf": -2.0}),
    ("round", [T()], {"decimals": 1}), ("around", [T()], {"decimals": -1}),
    ("angle", [T()], {"deg": True}),
]

CREATION = [
    ("zeros", [(2, 3)], {}), ("zeros", [3], {"dtype": "int8"}), ("ones", [(2,)], {}),
    ("ones", [(2, 3)], {"dtype": "bool"}), ("full", [(2, 3), 7], {}), ("full", [3, 1.5], {}),
    ("full", [(2,), 2], {"dtype": "float16"}), ("full", [(2, 3), True], {}),
    ("empty", [(2, 0)], {}), ("arange", [5], {}), ("arange", [1, 7, 2], {}),
    ("arange", [0.5, 3.0], {}), ("arange", [5], {"dtype": "float32"}),
    ("arange", [5, 0, -1], {}), ("arange", [0, 1, 0.25], {}),
    ("linspace", [0, 1, 5], {}), ("linspace", [0, 10, 4], {"endpoint": False}),
    ("linspace", [0, 1, 5], {"retstep": True}), ("linspace", [0, 10, 6], {"dtype": "int32"}),
    ("logspace", [0, 2, 3], {}), ("geomspace", [1, 100, 3], {}),
    ("eye", [3], {}), ("eye", [2, 3], {"k": 1}), ("eye", [3], {"dtype": "int32"}),
    ("identity", [3], {}), ("tri", [3], {}), ("tri", [3, 4, -1], {}),
    ("tril_indices", [3], {}), ("triu_indices", [3, 1], {}), ("diag_indices", [3], {}),
    ("indices", [(2, 3)], {}), ("indices", [(2, 3)], {"sparse": True}),
    ("hamming", [5], {}), ("hanning", [5], {}), ("bartlett", [5], {}), ("blackman", [5], {}),
    ("kaiser", [5, 2.0], {}), ("array", [[1, 2, 3]], {}), ("array", [[1.5, 2]], {}),
    ("array", [[True, False]], {}), ("array", [[1, 2.5, 1j]], {}), ("array", [3], {}),
    ("array", [[1, 2]], {"dtype": "int8"}), ("asarray", [2.5], {}), ("asarray", [[1, 2]], {}),
    ("array", [[[1], [2]]], {"ndmin": 4}),
    ("result_type", ["int8", "uint8"], {}), ("result_type", ["bfloat16", "float16"], {}),
    ("result_type", [1, "int8"], {}), ("result_type", [1.0, "int32"], {}),
    ("promote_types", ["int8", "uint32"], {}), ("promote_types", ["float16", "bfloat16"], {}),
    ("can_cast", ["int8", "int32"], {}), ("can_cast", ["float32", "int32"], {}),
    ("issubdtype", ["int8", "integer"], {}), ("issubdtype", ["bfloat16", "floating"], {}),
    ("isdtype", ["int8", "integral"], {}), ("isdtype", ["float16", "real floating"], {}),
]

LIKE_CALLS = [
    ("zeros_like", [T()], {}), ("ones_like", [T()], {"dtype": "float16"}),
    ("full_like", [T(), 3], {}), ("full_like", [T(), 2.5], {}),
    ("empty_like", [T()], {"shape": (3,)}), ("tril_indices_from", [T((3, 3))], {}),
    ("triu_indices_from", [T((3, 3)), 1], {}), ("diag_indices_from", [T((3, 3))], {}),
    ("fill_diagonal", [T((3, 3)), 5], {"inplace": False}),
    ("place", [T(), A("bool"), T((3,))], {"inplace": False}),
    ("put", [T(), A("int32", (2,), "small"), T((2,))], {"inplace": False}),
]


def shape_cases(x64):
  out = _calls("numpy", SHAPE_CALLS + SORT_CALLS + LIKE_CALLS)
  out += _calls("numpy", LINALG_CALLS, dtypes=("float32", "int32", "bool", "complex64",
                                                "bfloat16", "int8"))
  out += _calls("numpy", CREATION, dtypes=("float32",))
  return out


# ----------------------------------------------------------------------------- lax shapes

LAX_CALLS = [
    ("reshape", [T(), (3, 2)], {}), ("reshape", [T(), (3, 2)], {"dimensions": (1, 0)}),
    ("broadcast", [T(), (2,)], {}), ("broadcast_in_dim", [T((3,)), (2, 3), (1,)], {}),
    ("broadcast_to_rank", [T((3,)), 3], {}), ("squeeze", [T((1, 3)), (0,)], {}),
    ("expand_dims", [T(), (0, 3)], {}), ("transpose", [T(), (1, 0)], {}),
    ("rev", [T(), (0, 1)], {}), ("slice", [T(), (0, 1), (2, 3)], {}),
    ("slice", [T((5, 6)), (0, 1), (5, 6), (2, 3)], {}),
    ("slice_in_dim", [T(), 1, 3], {"axis": 1}), ("index_in_dim", [T(), 1], {"axis": 1}),
    ("index_in_dim", [T(), 0], {"keepdims": False}),
    ("dynamic_slice", [T((4, 5)), (1, 2), (2, 2)], {}),
    ("dynamic_slice", [T((4, 5)), (3, -1), (2, 2)], {}),
    ("dynamic_slice_in_dim", [T((4, 5)), 2, 3], {"axis": 1}),
    ("dynamic_index_in_dim", [T((4, 5)), -1], {}),
    ("dynamic_update_slice", [T((4, 5)), T((2, 2)), (1, 4)], {}),
    ("dynamic_update_slice_in_dim", [T((4, 5)), T((4, 2)), 1, 1], {}),
    ("dynamic_update_index_in_dim", [T((4, 5)), T((5,)), 2, 0], {}),
    ("concatenate", [[T(), T((2, 1))], 1], {}), ("pad", [T(), 0, ((1, 2, 0), (0, 1, 1))], {}),
    ("pad", [T(), 0, ((-1, 1, 0), (0, 0, 2))], {}),
    ("collapse", [T((2, 3, 4)), 0, 2], {}), ("tile", [T(), (2, 1)], {}),
    ("split", [T((5, 2)), (2, 3)], {}), ("stack", [[T(), T()]], {}),
    ("unstack", [T()], {}), ("select", [A("bool"), T(), T()], {}),
    ("select_n", [A("int32", (2, 3), "small"), T(), T(), T()], {}),
    ("select_n", [A("bool"), T(), T()], {}),
    ("clamp", [T(()), T(), T(())], {}), ("clamp", [0, T(), 2], {}),
    ("convert_element_type", [T(), "int8"], {}),
    ("convert_element_type", [T(), "float16"], {}),
    ("convert_element_type", [T(), "bool"], {}),
    ("convert_element_type", [T(), "uint8"], {}),
    ("convert_element_type", [T((16,), "edge"), "int32"], {}),
    ("convert_element_type", [T((16,), "edge"), "uint32"], {}),
    ("convert_element_type", [T((16,), "edge"), "bfloat16"], {}),
    ("bitcast_convert_type", [T(), "uint32"], {}),
    ("bitcast_convert_type", [T(), "int8"], {}),
    ("integer_pow", [T(), 3], {}), ("integer_pow", [T(), -2], {}), ("integer_pow", [T(), 0], {}),
    ("reduce_precision", [T(), 5, 10], {}), ("sort", [T()], {}), ("sort", [T(), 0], {}),
    ("sort", [[T((5,)), T((5,))]], {"num_keys": 1}), ("sort_key_val", [T(), T()], {}),
    ("top_k", [T((2, 5)), 2], {}), ("iota", ["int32", 4], {}), ("iota", ["float32", 3], {}),
    ("broadcasted_iota", ["int32", (2, 3), 1], {}), ("full", [(2, 3), 1.5], {}),
    ("full_like", [T(), 2], {}), ("zeros_like_array", [T()], {}),
    ("dot", [T(), T((3, 2))], {}),
    ("dot", [T(), T((3, 2))], {"preferred_element_type": "float32"}),
    ("dot_general", [T((2, 3, 4)), T((2, 4, 5)), (((2,), (1,)), ((0,), (0,)))], {}),
    ("dot_general", [T((3, 4)), T((4, 3)), (((1,), (0,)), ((), ()))],
     {"preferred_element_type": "int32"}),
    ("batch_matmul", [T((2, 2, 3)), T((2, 3, 2))], {}),
    ("conv", [T((1, 2, 5, 5)), T((3, 2, 2, 2)), (1, 1), "SAME"], {}),
    ("conv_general_dilated", [T((1, 2, 6, 6)), T((3, 2, 3, 3)), (2, 1), ((1, 1), (0, 2))],
     {"lhs_dilation": (1, 2), "rhs_dilation": (1, 1)}),
    ("conv_general_dilated", [T((1, 5, 5, 2)), T((2, 2, 2, 4)), (1, 1), "VALID"],
     {"dimension_numbers": ("NHWC", "HWIO", "NHWC"), "feature_group_count": 2}),
    ("conv_transpose", [T((1, 2, 4, 4)), T((2, 3, 3, 3)), (2, 2), "SAME"],
     {"dimension_numbers": ("NCHW", "IOHW", "NCHW")}),
    ("reduce_window", [T((4, 6)), 0, "add", (2, 2), (1, 2), "VALID"], {}),
    ("cumsum", [T()], {"axis": 1}),
    ("rng_bit_generator", [A("uint32", (4,), "any"), (2, 3)], {}),
]


def _reduce_window(ns, x, init, op, *args, **kw):
  fn = {"add": ns.lax.add, "max": ns.lax.max, "min": ns.lax.min}[op]
  return ns.lax.reduce_window(x, ns.jnp.zeros((), x.dtype) + init, fn, *args, **kw)


def _lax_zeros_like(ns, x):
  return ns.lax.zeros_like_array(x)


def lax_cases(x64):
  out = []
  for name, args, kwargs in LAX_CALLS:
    for d in ("float32", "int32", "bool", "bfloat16", "complex64", "uint8"):
      concrete = [A(d, a.shape, a.fill) if isinstance(a, A) and a.dtype == "T" else
                  [A(d, b.shape, b.fill) if isinstance(b, A) and b.dtype == "T" else b
                   for b in a] if isinstance(a, list) else a for a in args]
      fn = {"reduce_window": lambda ns, *a, **k: _reduce_window(ns, *a, **k)}.get(
          name, f"lax.{name}")
      out.append(Case(f"lax.{name}", fn, concrete, kwargs))
  for op in ("max", "min"):
    out.append(Case("lax.reduce_window", _reduce_window,
                    [A("float32", (4, 6)), -1e30 if op == "max" else 1e30, op, (3, 2)],
                    {"window_strides": (1, 1), "padding": "SAME"}))
  return out


# ----------------------------------------------------------------------------- indexing

def _index(expr):
  """A program applying the index expression ``expr`` (a Python expression over x, i, j)."""
  code = compile(expr, f"<index {expr}>", "eval")

  def program(ns, x, *idx):
    names = {"x": x, "jnp": ns.jnp, "None": None}
    names.update(zip("ij", idx))
    return eval(code, names)
  program.__name__ = expr
  return program


INDEX_EXPRS = [
    ("x[1]", [], (3, 4)), ("x[-1]", [], (3, 4)), ("x[1, 2]", [], (3, 4)),
    ("x[1:]", [], (3, 4)), ("x[:, ::2]", [], (3, 4)), ("x[::-1]", [], (3, 4)),
    ("x[1:-1, -2:]", [], (3, 4)), ("x[..., 1]", [], (2, 3, 4)), ("x[None]", [], (3, 4)),
    ("x[:, None, 1]", [], (3, 4)), ("x[..., None]", [], (3, 4)), ("x[5:]", [], (3, 4)),
    ("x[10]", [], (3, 4)), ("x[-10]", [], (3, 4)), ("x[2:1]", [], (3, 4)),
    ("x[::-2, 1::2]", [], (5, 4)), ("x[()]", [], (3, 4)), ("x[1, ..., 1]", [], (2, 3, 4)),
    ("x[i]", [A("int32", (2,), "index")], (3, 4)),
    ("x[i]", [A("int32", (2, 2), "index")], (3, 4)),
    ("x[:, i]", [A("int32", (3,), "index")], (3, 4)),
    ("x[i, j]", [A("int32", (2,), "index"), A("int32", (2,), "index")], (3, 4)),
    ("x[i, :, j]", [A("int32", (2,), "index"), A("int32", (2,), "index")], (3, 4, 5)),
    ("x[:, i, j]", [A("int32", (2,), "index"), A("int32", (1,), "index")], (3, 4, 5)),
    ("x[i, 1:]", [A("int32", (2,), "index")], (3, 4)),
    ("x[i]", [A("bool", (3,))], (3, 4)), ("x[i]", [A("bool", (3, 4))], (3, 4)),
    ("x[i]", [A("uint8", (2,), "small")], (3, 4)), ("x[i]", [A("int8", (2,), "index")], (3, 4)),
    ("x[i]", [A("int32", (), "index")], (3, 4)),
    ("x[i, None]", [A("int32", (2,), "index")], (3, 4)),
    ("x[[0, 2]]", [], (3, 4)), ("x[[True, False, True]]", [], (3,)),
    ("x[[[0], [1]], [1, 2]]", [], (3, 4)), ("x[1.0]", [], (3, 4)), ("x['a']", [], (3, 4)),
    ("x[jnp.array(1)]", [], (3, 4)), ("x[:, jnp.array([0, -1])]", [], (3, 4)),
    ("x[1, 2, 3]", [], (3, 4)), ("x[..., ...]", [], (3, 4)),
    ("x[i]", [A("float32", (2,))], (3, 4)),
    ("x[i:]", [A("int32", (), "small")], (3, 4)),
]

AT_EXPRS = [
    "x.at[1].set(y)", "x.at[1].add(y)", "x.at[1].multiply(y)", "x.at[1].divide(y)",
    "x.at[1].power(y)", "x.at[1].min(y)", "x.at[1].max(y)", "x.at[1].get()",
    "x.at[-1, 1:].set(y)", "x.at[::2].add(y)", "x.at[i].set(y)", "x.at[i].add(y)",
    "x.at[i].mul(y)", "x.at[i].min(y)", "x.at[i].max(y)", "x.at[i].get()",
    "x.at[i].get(mode='fill', fill_value=-1)", "x.at[i].set(y, mode='drop')",
    "x.at[i].add(y, mode='clip')", "x.at[i].set(y, mode='promise_in_bounds')",
    "x.at[i].add(y, indices_are_sorted=True, unique_indices=True)",
    "x.at[i].apply(jnp.negative)", "x.at[10].set(y)", "x.at[10].get()",
    "x.at[10].add(y, mode='clip')", "x.at[-10].set(y)", "x.at[:, 1].set(y)",
    "x.at[x > 0].set(y)", "x.at[...].set(y)", "x.at[None].set(y)",
]


def _at(expr, y_shape):
  code = compile(expr, f"<at {expr}>", "eval")

  def program(ns, x, y, i):
    return eval(code, {"x": x, "y": y, "i": i, "jnp": ns.jnp})
  program.__name__ = expr
  return program


def index_cases(x64):
  out = []
  for expr, idx, shape in INDEX_EXPRS:
    for d in ("float32", "int32", "bool", "bfloat16"):
      out.append(Case("index", _index(expr), [A(d, shape)] + idx, label=f"{d}{list(shape)} {expr}"))
  for expr in AT_EXPRS:
    for d, yd in (("float32", "float32"), ("int32", "int32"), ("int8", "float32"),
                  ("bool", "bool"), ("uint8", "int32"), ("float16", "float32")):
      for y_shape in ((), (4,)):
        y_shape_used = (3,) if "1:" in expr and y_shape == (4,) else y_shape
        out.append(Case("at", _at(expr, y_shape_used),
                        [A(d, (3, 4)), A(yd, y_shape_used), A("int32", (2,), "index")],
                        label=f"{d}[3,4] {expr} y={yd}{list(y_shape_used)}"))
    out.append(Case("at", _at(expr, ()), [A("float32", (3, 4)), 2.5, A("int32", (2,), "index")],
                    label=f"float32[3,4] {expr} y=2.5"))
    out.append(Case("at", _at(expr, ()), [A("int32", (3, 4)), 2.5, A("int32", (2,), "index")],
                    label=f"int32[3,4] {expr} y=2.5"))
  return out


# ----------------------------------------------------------------------------- gradients

_NOT_DIFFERENTIABLE = set("""bitwise_count bitwise_invert bitwise_not ceil floor invert
iscomplex isfinite isinf isnan isneginf isposinf isreal logical_not rint round around sign
signbit trunc spacing frexp modf angle imag real conj conjugate i0 clz is_finite
population_count bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift
left_shift right_shift equal not_equal greater greater_equal less less_equal logical_and
logical_or logical_xor gcd lcm isclose array_equal array_equiv allclose floor_divide divmod
ldexp nextafter heaviside eq ne ge gt le lt shift_left shift_right_arithmetic
shift_right_logical complex rem igamma igammac polygamma zeta identity gammasgn factorial
fresnel sici wofz comb expn""".split())

_POINTS = (-2.5, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 3.0)
_POS_POINTS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.5, 4.0)


def _grad_of(path, n_args):
  def program(ns, *xs):
    fn = resolve_path(ns, path)
    return ns.jax.grad(lambda *a: ns.jnp.sum(fn(*a)), argnums=tuple(range(n_args)))(*xs)
  program.__name__ = f"grad({path})"
  return program


def resolve_path(ns, path):
  from cases import resolve
  return resolve(ns, path)


def _grad_point(path):
  def program(ns, x):
    return ns.jax.grad(resolve_path(ns, path))(x)
  program.__name__ = f"grad({path}) at a point"
  return program


def grad_cases(x64):
  out = []
  f = "float64" if x64 else "float32"
  unary = ([f"numpy.{n}" for n in JNP_UNARY] + [f"lax.{n}" for n in LAX_UNARY] +
           [f"nn.{n}" for n in NN_UNARY] + [f"scipy.special.{n}" for n in SPECIAL_UNARY])
  for path in unary:
    name = path.rpartition(".")[2]
    if name in _NOT_DIFFERENTIABLE:
      continue
    pos = path.startswith("scipy") or name in ("log", "log2", "log10", "sqrt", "rsqrt",
                                                "lgamma", "digamma", "acosh", "arccosh")
    pts = _POS_POINTS if pos else _POINTS
    out.append(Case(f"grad.{path}", _grad_of(path, 1), [A(f, (8,), pts)]))
    for p in (0.0, 1.0) if not pos else (1.0,):
      out.append(Case(f"grad.{path}", _grad_point(path), [A(f, (), (p,))]))
  binary = [f"numpy.{n}" for n in JNP_BINARY] + [f"lax.{n}" for n in LAX_BINARY] + [
      f"scipy.special.{n}" for n in SPECIAL_BINARY]
  for path in binary:
    name = path.rpartition(".")[2]
    if name in _NOT_DIFFERENTIABLE:
      continue
    pos = path.startswith("scipy") or name in ("pow", "power", "float_power", "logaddexp2")
    pts = _POS_POINTS if pos else _POINTS
    out.append(Case(f"grad.{path}", _grad_of(path, 2),
                    [A(f, (8,), pts), A(f, (8,), pts[::-1])]))
    out.append(Case(f"grad.{path}", _grad_of(path, 2), [A(f, (8,), pts), A(f, (), (2.0,))]))
    out.append(Case(f"grad.{path}", _grad_of(path, 2), [A(f, (8,), pts), A(f, (8,), pts)]))
  ties = (1.0, 2.0, 2.0, 0.0, -1.0, 0.0)
  for n in ("sum", "prod", "max", "min", "mean", "var", "std", "ptp", "median", "cumsum",
            "cumprod", "sort", "amax", "nansum", "nanmean", "nanmax", "average"):
    for kw in ({}, {"axis": 1}):
      if n in ("cumsum", "cumprod", "sort") and not kw:
        continue
      out.append(Case(f"grad.numpy.{n}", _grad_reduction(f"numpy.{n}", kw),
                      [A(f, (2, 3), ties)], label=f"{f}[2,3] ties {kw}"))
      out.append(Case(f"grad.numpy.{n}", _grad_reduction(f"numpy.{n}", kw),
                      [A(f, (2, 3), "any")], label=f"{f}[2,3] {kw}"))
  for n in ("logsumexp", "softmax", "log_softmax", "standardize"):
    out.append(Case(f"grad.nn.{n}", _grad_reduction(f"nn.{n}", {"axis": 1}),
                    [A(f, (2, 3), "any")]))
  for expr, idx in (("x[i]", A("int32", (3,), (0, 0, 1))), ("x[1:, i]", A("int32", (2,),
                                                                            (2, 2))),
                    ("x.at[i].set(0.5)", A("int32", (2,), (1, 1))),
                    ("x.at[i].mul(x[0])", A("int32", (2,), (1, 0))),
                    ("x.at[i].max(1.0)", A("int32", (2,), (0, 2))),
                    ("x[::-1].reshape(-1)[i]", A("int32", (2,), (0, 5)))):
    out.append(Case("grad.index", _grad_index(expr), [A(f, (3, 2), "any"), idx],
                    label=f"grad {expr}"))
  for d in ("int32", "bool", "complex64"):
    out.append(Case("grad.errors", _grad_of("numpy.sin", 1), [A(d, ())]))
  out.append(Case("grad.errors", _grad_of("numpy.sin", 1), [A(f, (3,))]))
  out.append(Case("grad.hessian", lambda ns, x: ns.jax.hessian(
      lambda t: ns.jnp.sum(ns.jnp.sin(t) * t ** 3))(x), [A(f, (3,))]))
  out.append(Case("grad.hessian", lambda ns, x: ns.jax.jacfwd(ns.jax.jacrev(
      lambda t: ns.jnp.tanh(t) * ns.jnp.sum(t)))(x), [A(f, (3,))]))
  return out


def _grad_reduction(path, kw):
  def program(ns, x):
    fn = resolve_path(ns, path)
    return ns.jax.grad(lambda t: ns.jnp.sum(ns.jnp.sin(fn(t, **kw))))(x)
  program.__name__ = f"grad({path}, {kw})"
  return program


def _grad_index(expr):
  code = compile(expr, f"<grad {expr}>", "eval")

  def program(ns, x, i):
    return ns.jax.grad(lambda t: ns.jnp.sum(
        ns.jnp.sin(eval(code, {"x": t, "i": i, "jnp": ns.jnp}))))(x)
  program.__name__ = expr
  return program


# ----------------------------------------------------------------------------- the rest

def _p(fn):
  """Name a program by its source line, so case ids read as what they run."""
  return fn


def _gather(ns, x, i):
  dn = ns.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                     start_index_map=(0,))
  return ns.lax.gather(x, i[:, None], dn, slice_sizes=(1, 3), mode="clip")


def _scatter(op):
  def program(ns, x, i, u):
    dn = ns.lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    fn = getattr(ns.lax, op)
    return fn(x, i[:, None], u, dn, mode="clip")
  program.__name__ = op
  return program


def _scatter_apply(ns, x, i):
  dn = ns.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
  return ns.lax.scatter_apply(x, i[:, None], ns.jnp.exp, dn, mode="clip")


def _collective(name):
  def program(ns, x):
    lax = ns.lax
    body = {"psum": lambda t: lax.psum(t, "i"), "pmean": lambda t: lax.pmean(t, "i"),
            "pmax": lambda t: lax.pmax(t, "i"), "pmin": lambda t: lax.pmin(t, "i"),
            "axis_index": lambda t: t + lax.axis_index("i"),
            "axis_size": lambda t: t * lax.axis_size("i"),
            "all_gather": lambda t: lax.all_gather(t, "i"),
            "all_to_all": lambda t: lax.all_to_all(t, "i", 0, 0),
            "ppermute": lambda t: lax.ppermute(t, "i", [(0, 1), (1, 2), (2, 0)]),
            "pshuffle": lambda t: lax.pshuffle(t, "i", [2, 0, 1]),
            "psum_scatter": lambda t: lax.psum_scatter(t, "i"),
            "pswapaxes": lambda t: lax.pswapaxes(t, "i", 0)}[name]
    return ns.jax.vmap(body, axis_name="i")(x)
  program.__name__ = name
  return program


def _control(name):
  def program(ns, x):
    lax, jnp = ns.lax, ns.jnp
    if name == "cond":
      return lax.cond(jnp.sum(x) > 0, jnp.sin, jnp.cos, x)
    if name == "switch":
      return lax.switch(jnp.argmax(x) % 3, [jnp.sin, jnp.cos, jnp.negative], x)
    if name == "while_loop":
      return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))
    if name == "fori_loop":
      return lax.fori_loop(0, 4, lambda i, c: c + i * c, x)
    if name == "scan":
      return lax.scan(lambda c, t: (c + t, c * t), jnp.zeros_like(x[0]), x)
    if name == "map":
      return lax.map(lambda t: jnp.sum(t * t), x)
    if name == "associative_scan":
      return lax.associative_scan(jnp.add, x, axis=1)
    if name == "stop_gradient":
      return ns.jax.grad(lambda t: jnp.sum(t * lax.stop_gradient(t)))(x)
    if name == "custom_root":
      return lax.custom_root(lambda t: t * t - 2.0, x, lambda f, t0: t0 - f(t0) / 2.0,
                             lambda g, y: y / 2.0)
    if name == "custom_linear_solve":
      return lax.custom_linear_solve(lambda t: 2.0 * t, x, lambda f, b: b / 2.0,
                                     symmetric=True)
    raise KeyError(name)
  program.__name__ = name
  return program


MISC = [
    ("lax.gather", _gather, [A("float32", (4, 3)), A("int32", (2,), "index")]),
    ("lax.scatter_apply", _scatter_apply, [A("float32", (4,)), A("int32", (2,), "index")]),
    ("lax.betainc", "lax.betainc", [A("float32", fill="pos"), A("float32", fill="pos"),
                                    A("float32", fill="prob")]),
    ("lax.igamma_grad_a", "lax.igamma_grad_a", [A("float32", fill="pos"),
                                                A("float32", fill="pos")]),
    ("lax.random_gamma_grad", "lax.random_gamma_grad", [A("float32", fill="pos"),
                                                        A("float32", fill="pos")]),
    ("lax.mulhi", "lax.mulhi", [A("uint32"), A("uint32")]),
    ("lax.mulhi", "lax.mulhi", [A("int32"), A("int32")]),
    ("lax.approx_max_k", "lax.approx_max_k", [A("float32", (2, 6)), 2]),
    ("lax.approx_min_k", "lax.approx_min_k", [A("float32", (2, 6)), 2]),
    ("lax.broadcast_like", "lax.broadcast_like", [A("float32", (3,)), A("float32", (2, 3))]),
    ("lax.index_take", "lax.index_take", [A("float32", (4, 3)), A("int32", (2,), "small"),
                                          (0,)]),
    ("lax.optimization_barrier", "lax.optimization_barrier", [A("float32")]),
    ("lax.conv_with_general_padding", "lax.conv_with_general_padding",
     [A("float32", (1, 2, 5, 5)), A("float32", (3, 2, 2, 2)), (1, 1), ((1, 0), (0, 1)),
      None, None]),
    ("lax.conv_general_dilated_patches", "lax.conv_general_dilated_patches",
     [A("float32", (1, 2, 4, 4)), (2, 2), (1, 1), "VALID"]),
    ("lax.conv_general_dilated_local", "lax.conv_general_dilated_local",
     [A("float32", (1, 2, 4, 4)), A("float32", (9, 8, 3)), (1, 1), "VALID", (2, 2)]),
    ("lax.ragged_dot", "lax.ragged_dot", [A("float32", (5, 3)), A("float32", (2, 3, 4)),
                                          A("int32", (2,), (2, 3))]),
    ("lax.reduce", lambda ns, x: ns.lax.reduce(x, 0.0, ns.lax.add, (1,)), [A("float32")]),
    ("lax.reduce", lambda ns, x: ns.lax.reduce(x, -ns.jnp.inf, ns.lax.max, (0,)),
     [A("float32")]),
    ("lax.reduce", lambda ns, x, y: ns.lax.reduce(
        (x, y), (ns.jnp.float32(-1e9), ns.jnp.int32(0)),
        lambda a, b: (ns.lax.max(a[0], b[0]),
                      ns.lax.select(a[0] >= b[0], a[1], b[1])), (1,)),
     [A("float32"), A("int32")]),
    ("numpy.broadcast_shapes", lambda ns: ns.jnp.broadcast_shapes((2, 1), (3,)), []),
    ("numpy.unravel_index", "numpy.unravel_index", [A("int32", (4,), "small"), (2, 3)]),
    ("numpy.ravel_multi_index", "numpy.ravel_multi_index",
     [(A("int32", (3,), "small"), A("int32", (3,), "small")), (3, 4)]),
    ("numpy.polydiv", "numpy.polydiv", [A("float32", (4,)), A("float32", (2,), "pos")]),
    ("numpy.polyfit", "numpy.polyfit", [A("float32", (6,), (0., 1., 2., 3., 4., 5.)),
                                        A("float32", (6,)), 2]),
    ("numpy.roots", "numpy.roots", [A("float32", (3,), (1.0, -3.0, 2.0))]),
    ("numpy.piecewise", lambda ns, x: ns.jnp.piecewise(x, [x < 0, x >= 1],
                                                        [ns.jnp.sin, 2.0, 0.5]),
     [A("float32")]),
    ("numpy.vectorize", lambda ns, x, y: ns.jnp.vectorize(
        lambda a, b: a * b + 1)(x, y), [A("float32"), A("float32", (3,))]),
    ("numpy.vectorize", lambda ns, x: ns.jnp.vectorize(
        lambda v: ns.jnp.sum(v) * v, signature="(n)->(n)")(x), [A("float32")]),
    ("numpy.apply_along_axis", lambda ns, x: ns.jnp.apply_along_axis(ns.jnp.cumsum, 1, x),
     [A("float32")]),
    ("numpy.apply_over_axes", lambda ns, x: ns.jnp.apply_over_axes(ns.jnp.sum, x, [0, 1]),
     [A("float32")]),
    ("numpy.fromfunction", lambda ns: ns.jnp.fromfunction(lambda i, j: i + 2 * j, (2, 3)),
     []),
    ("numpy.frombuffer", lambda ns: ns.jnp.frombuffer(bytes(range(8)), dtype="uint8"), []),
    ("numpy.mask_indices", lambda ns: ns.jnp.mask_indices(3, ns.jnp.triu), []),
    ("numpy.histogram2d", "numpy.histogram2d", [A("float32", (8,)), A("float32", (8,)), 3]),
    ("numpy.histogramdd", "numpy.histogramdd", [A("float32", (8, 2)), 2]),
    ("lax.platform_dependent", lambda ns, x: ns.lax.platform_dependent(
        x, cpu=ns.jnp.sin, default=ns.jnp.cos), [A("float32")]),
    ("nn.scaled_matmul", "nn.scaled_matmul", [A("float32", (1, 2, 32)),
                                              A("float32", (1, 3, 32)),
                                              A("float32", (1, 2, 1), "pos"),
                                              A("float32", (1, 3, 1), "pos")]),
    ("nn.dot_product_attention", "nn.dot_product_attention",
     [A("float32", (1, 3, 2, 4)), A("float32", (1, 5, 2, 4)), A("float32", (1, 5, 2, 4))]),
    ("nn.dot_product_attention", lambda ns, q, k, v: ns.nn.dot_product_attention(
        q, k, v, is_causal=True, scale=0.5), [A("float32", (1, 3, 2, 4)),
                                              A("float32", (1, 3, 2, 4)),
                                              A("float32", (1, 3, 2, 4))]),
]


METHOD_EXPRS = """x.sum() x.sum(axis=1) x.prod(axis=0) x.max() x.min(axis=1,keepdims=True)
x.mean() x.var(ddof=1) x.std() x.any() x.all(axis=0) x.argmax() x.argmin(axis=1) x.ptp()
x.cumsum() x.cumprod(axis=1) x.astype('float16') x.astype(int) x.astype(float)
x.reshape(3,2) x.reshape((3,2)) x.reshape(-1) x.T x.mT x.ravel() x.flatten()
x[None].squeeze() x.squeeze(0) x.transpose() x.transpose(1,0) x.swapaxes(0,1)
x.clip(0,1) x.clip(max=1) x.round() x.round(1) x.conj() x.conjugate() x.real x.imag
x.dot(y.T) x.nonzero() x.repeat(2) x.sort() x.argsort() x.trace() x.diagonal()
x.take(1) x.take(2,axis=1) x.tolist() x.item(1) x.copy() x.view('uint8') x.nbytes
x.itemsize x.size x.ndim x.shape x.dtype len(x) x.searchsorted(y) x.compress([True,False])
x+y x-y x*y x/y x//y x%y x**y x@y.T x&y x|y x^y x<<y x>>y ~x -x +x abs(x) x<y x<=y x==y
x!=y x>y x>=y divmod(x,y) x+1 1+x x-1.5 1.5-x x*2 2*x x/2 2/x x//2 2//x x%3 3%x x**2 2**x
x&1 1&x x|True x^1 x<<1 1<<x x>>1 x<1 1<x x==1 1==x x!=0.5 x+1j x*True x.at[0].get()
bool(x[0,0]) int(x[0,0]) float(x[0,0]) complex(x[0,0]) x[0,0].__index__()
x.__array__().dtype.name""".split()


def _method(expr):
  code = compile(expr, f"<method {expr}>", "eval")

  def program(ns, x, y):
    return eval(code, {"x": x, "y": y})
  program.__name__ = expr
  return program


def misc_cases(x64):
  out = []
  for group, fn, args in MISC:
    out.append(Case(group, fn, args, label=None if isinstance(fn, str) else
                    f"{group} {[repr(a) for a in args]} #{len(out)}"))
  for op in ("scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
             "scatter_max"):
    for d in ("float32", "int32", "bool"):
      out.append(Case(f"lax.{op}", _scatter(op), [A(d, (4, 3)), A("int32", (3,), (0, 2, 0)),
                                                  A(d, (3, 3))]))
  for name in ("psum", "pmean", "pmax", "pmin", "axis_index", "axis_size", "all_gather",
               "all_to_all", "ppermute", "pshuffle", "psum_scatter", "pswapaxes"):
    for d in ("float32", "int32"):
      out.append(Case(f"lax.{name}", _collective(name), [A(d, (3, 3))], vmap=False))
  for expr in METHOD_EXPRS:
    for d in ("float32", "int32", "bool", "uint8", "complex64", "bfloat16"):
      fill = "pos" if d in ("int32", "uint8") else "any"
      out.append(Case("methods", _method(expr), [A(d, (2, 3), fill), A(d, (2, 3), fill)],
                      label=f"{d} {expr}", vmap="[" not in expr and "len" not in expr))
  for name in ("cond", "switch", "while_loop", "fori_loop", "scan", "map",
               "associative_scan", "stop_gradient", "custom_root", "custom_linear_solve"):
    for d in ("float32", "int32"):
      if (f"lax.{name}", d) not in _JAX_LOWERING_BUG:
        out.append(Case(f"lax.{name}", _control(name), [A(d, (3, 2), "pos")]))
  return out


# ----------------------------------------------------------------------------- all

def all_cases(x64: bool):
  cases = (elementwise_cases(x64) + reduction_cases(x64) + shape_cases(x64) +
           lax_cases(x64) + index_cases(x64) + grad_cases(x64) + misc_cases(x64))
  seen = set()
  unique = []
  for c in cases:
    if c.id not in seen:
      seen.add(c.id)
      unique.append(c)
  return unique


def covered_names(cases):
  """The public names (``numpy.sin``, ``lax.add``, ...) that ``cases`` call directly."""
  names = set()
  for c in cases:
    if isinstance(c.fn, str):
      names.add(c.fn.replace("scipy.special.", "special."))
    names.add(c.group.replace("grad.", "").replace("scipy.special.", "special."))
  return names


# Public functions the tables do not call, each with the reason.
_IO = "reads or writes files or buffers of another library; tested in test_numpy_extra"
_PRINT = "printing and print options; tested in test_array"
_NOT_JAX = "not part of JAX 0.10's public lax (kept for compatibility)"
_SHARDED = "only meaningful with sharding or inside shard_map"
NOT_REPLAYED = {
    "numpy.load": _IO, "numpy.save": _IO, "numpy.savez": _IO, "numpy.fromfile": _IO,
    "numpy.fromiter": _IO, "numpy.fromstring": _IO, "numpy.from_dlpack": _IO,
    "numpy.array_repr": _PRINT, "numpy.array_str": _PRINT, "numpy.get_printoptions": _PRINT,
    "numpy.set_printoptions": _PRINT, "numpy.printoptions": _PRINT,
    "numpy.iterable": "a pure-Python predicate on Python objects",
    "numpy.einsum_path": "returns a contraction path and a report string, not arrays",
    "numpy.frompyfunc": "returns a ufunc object; its calls are what numpy.vectorize replays",
    "lax.reduce_window_max": _NOT_JAX, "lax.reduce_window_min": _NOT_JAX,
    "lax.reduce_window_sum": _NOT_JAX,
    "lax.reduce_window_shape_tuple": "a shape helper on Python tuples",
    "lax.conv_dimension_numbers": "a helper returning dimension-number tuples",
    "lax.conv_general_permutations": "a helper returning permutation tuples",
    "lax.conv_general_shape_tuple": "a shape helper on Python tuples",
    "lax.conv_shape_tuple": "a shape helper on Python tuples",
    "lax.conv_transpose_shape_tuple": "a shape helper on Python tuples",
    "lax.padtype_to_pads": "a helper on Python tuples",
    "lax.broadcast_shapes": "a shape helper on Python tuples",
    "lax.dtype": "returns a NumPy dtype; numpy.result_type cases cover the rules",
    "lax.empty": _SHARDED, "lax.pbroadcast": _SHARDED, "lax.pcast": _SHARDED,
    "lax.with_sharding_constraint": _SHARDED, "lax.shape_as_value": _SHARDED,
    "lax.composite": "a decorator naming a decomposition; tested in test_properties",
    "lax.stage": "an identity marking a staging boundary",
    "lax.fft": "FFTs are compared with numpy.fft in test_fft_conv",
    "lax.scaled_dot": "block-scaled float8 types; tested in test_api_extras",
    "nn.scaled_dot_general": "dot_general without configs, block-scaled configs refused as "
                             "JAX's CPU does; tested in test_api_surface_gaps",
    "nn.get_scaled_dot_general_config": "returns a config object, not arrays; tested in "
                                        "test_api_surface_gaps",
    "lax.ragged_dot_general": "lax.ragged_dot replays its common case",
}


# Who works on what: the groups of each area of the library (report.py --area NAME).
_REDUCTION_GROUPS = {f"numpy.{n}" for n in REDUCTIONS + CUMULATIVE + [
    "quantile", "percentile", "nanquantile", "nanpercentile"]}
AREAS = {
    "elementwise": lambda g: g in {f"numpy.{n}" for n in JNP_UNARY + JNP_BINARY},
    "lax_special_nn": lambda g: (g.startswith(("lax.", "special.", "nn."))
                                 and g not in {"lax.gather", "lax.scatter", "lax.scatter_add",
                                               "lax.scatter_sub", "lax.scatter_mul",
                                               "lax.scatter_min", "lax.scatter_max",
                                               "lax.scatter_apply"}
                                 and not g.startswith(("lax.reduce", "lax.cum", "lax.arg"))),
    "reductions": lambda g: g in _REDUCTION_GROUPS or g.startswith(
        ("lax.reduce", "lax.cum", "lax.arg")),
    "shapes": lambda g: g == "methods" or (
        g.startswith("numpy.") and g not in _REDUCTION_GROUPS
        and g not in {f"numpy.{n}" for n in JNP_UNARY + JNP_BINARY}),
    "indexing": lambda g: g in ("index", "at", "grad.index") or g.startswith(
        ("lax.gather", "lax.scatter")),
    "grad": lambda g: g.startswith("grad.") and g != "grad.index",
}
