"""float32 transcendental functions that give XLA's CPU results bit for bit.

XLA's CPU backend does not call NumPy's (or any one library's) float32 math: it inlines its
own polynomial approximations for ``exp``, ``log``, ``log1p``, ``tanh`` and ``expm1``, and
LLVM contracts most of their multiply-adds into fused multiply-adds (FMA) on x86-64 hosts with
FMA. ``tan``, ``sin``, ``cos`` and ``pow`` are calls to the host C library (``tanf``, ``sinf``,
``cosf``, ``powf``); the ones reproduced here are glibc 2.36's (Debian 12), whose float
functions are partly computed in double precision. NumPy's own float32 functions differ from
all of these in the last bit for 14-70% of inputs, which is enough to make samplers built
on them (``jaxlite.random.gamma``, ``cauchy``, ...) drift from JAX.

Every function below re-runs the same sequence of float32 operations, with each FMA
rounded once (``fma``: float64 arithmetic, with the rare float32 ties redone exactly). XLA
runs with denormals flushed to zero; the functions reproduce that where it shows in the
results.

Caveat, measured with JAX 0.10.2: XLA swaps in its polynomials only for vectors of 1, 2, 4, 8
or 16 lanes. A 1-D array of fewer than 16 elements whose size mod 8 is 3, 5, 6 or 7 leaves
that many elements to the C library's ``expf``/``logf`` (glibc's, correctly rounded in most
but not all cases), which ``exp`` and ``log`` here do not reproduce; log1p is always inline.
Inside larger fused computations (the samplers), LLVM may also contract across op boundaries.

The functions take and return float32 arrays (0-d included) and never warn.
"""
import sys

import numpy as np

from jaxlite._src import dtypes

F32 = np.float32
F64 = np.float64
_TINY = F32(1.17549435e-38)     # smallest normal float32


def fma(a, b, c, out=None, dtype=F32):
  """``a * b + c`` rounded once to ``dtype`` (float32 or narrower), as an FMA instruction.

  The product of two such values is exact in float64, so the float64 sum is the only other
  rounding; it changes the final result only where the sum lands exactly halfway between
  two neighbours in ``dtype``. Those rare elements are redone with the sum rounded to odd,
  which makes the last rounding correct. (Below ``dtype``'s normal range the neighbours are
  coarser and this test misses ties; XLA flushes such results to zero anyway.) Writes into
  ``out`` when given.
  """
  s = np.asarray(np.add(np.multiply(a, b, dtype=F64), c, dtype=F64))
  low = 52 - int(dtypes.finfo(dtype).nmant)    # float64 fraction bits that ``dtype`` drops
  halfway = np.equal(np.bitwise_and(_low_word(s) if low <= 32 else s.view(np.int64),
                                    (1 << low) - 1), 1 << (low - 1)).reshape(s.shape)
  if halfway.any():   # (before writing: ``out`` may be one of the operands)
    a, b, c = (np.broadcast_to(np.asarray(v), s.shape)[halfway] for v in (a, b, c))
    s[halfway] = _sum_rounded_to_odd(np.multiply(a, b, dtype=F64), c.astype(F64))
  if out is None:
    return s.astype(dtype)
  np.copyto(out, s, casting="unsafe")
  return out


def _low_word(s):
  """The low 32 bits of each float64 of ``s`` (contiguous), a view: half the memory
  traffic of testing them as int64."""
  words = s.reshape(-1).view(np.uint32)
  return words[0::2] if sys.byteorder == "little" else words[1::2]


def _sum_rounded_to_odd(p, c):
  """``p + c`` in float64 with round-to-odd: nudged one ulp toward the rounding error when
  inexact and even, so that rounding it again to 51 bits or fewer rounds as once."""
  s = p + c
  t = s - p
  err = (p - (s - t)) + (c - t)
  fix = (err != 0) & np.isfinite(s) & ((s.view(np.int64) & 1) == 0)
  return np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)


def _horner(x, coeffs, out):
  """``out = (...(c0 * x + c1) * x + ...) + cn`` with one FMA per step."""
  np.copyto(out, coeffs[0])
  for c in coeffs[1:]:
    fma(out, x, c, out)
  return out


def _elementwise(f):
  """Give ``f`` float32 arrays of at least one dimension (NumPy turns 0-d results into
  scalars, which cannot be assigned into) and silence floating-point warnings."""
  def wrapped(*args):
    args = np.broadcast_arrays(*(np.asarray(a, F32) for a in args))
    shape = args[0].shape
    with np.errstate(all="ignore"):
      out = f(*(a.reshape(1) if a.ndim == 0 else a for a in args))
    return out.reshape(shape)
  wrapped.__name__ = wrapped.__qualname__ = f.__name__
  wrapped.__doc__ = f.__doc__
  return wrapped


def _f32(*cs):
  return tuple(F32(c) for c in cs)


# ---- exp: Cephes expf, Cody-Waite reduction by ln 2 ------------------------------------------

_EXP_P = _f32(1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
              1.6666665459e-1, 5.0000001201e-1)
_LN2_HI, _LN2_LO = F32(0.693359375), F32(-2.12194440e-4)
_LOG2E = F32(1.44269504088896341)


@_elementwise
def exp(x):
  # clamp first (NaN passes); n = floor(x log2e + 1/2), itself clamped to [-127, 127]
  x = np.minimum(np.maximum(x, F32(-87.8)), F32(88.8))
  n = np.empty_like(x)
  np.floor(fma(x, _LOG2E, F32(0.5), n), out=n)
  np.clip(n, F32(-127), F32(127), out=n)
  # r = x - n ln2 in two FMAs; both are exact in float64 before their one rounding
  r = np.empty_like(x)
  np.subtract(x, np.multiply(n, _LN2_HI, dtype=F64), out=r, dtype=F64, casting="unsafe")
  np.subtract(r, np.multiply(n, _LN2_LO, dtype=F64), out=r, dtype=F64, casting="unsafe")
  y = _horner(r, _EXP_P, np.empty_like(x))
  fma(y, r * r, r, y)
  y += F32(1)
  # 2**n built from its bits: n = -127 gives the bit pattern of +0, so exp underflows to 0
  scale = ((n.astype(np.int32) + 127) << 23).view(F32)
  y *= scale
  y[y < _TINY] = 0        # results below the normal range are flushed to zero
  return y


# ---- log: Cephes logf on the mantissa in [sqrt(1/2), sqrt(2)) ---------------------------------

_LOG_P = _f32(7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
              1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
              3.3333331174e-1)
_SQRT_HALF = F32(0.707106781186547524)


def _log_reduce(x):
  """Split positive normal ``x`` into ``e`` and ``t = m - 1``, ``x = (1 + t) 2**e``."""
  m, e = np.frexp(np.maximum(x, _TINY))   # m in [1/2, 1); subnormals count as the smallest normal
  m = m.astype(F32)
  below = m < _SQRT_HALF
  e = e.astype(F32)
  e -= below
  t = m - F32(1)
  t += np.where(below, m, F32(0))          # 2m - 1 when m < sqrt(1/2)
  return t, e


def _log_poly(t, e):
  """log(1 + t) + e ln2: the Cephes polynomial as three interleaved Horner chains, every
  multiply-add fused as XLA's compiled code has it."""
  t2 = t * t
  t3 = t2 * t
  y0, y1, y2 = (np.empty_like(t) for _ in range(3))
  fma(t, _LOG_P[0], _LOG_P[1], y0)
  fma(t, _LOG_P[3], _LOG_P[4], y1)
  fma(t, _LOG_P[6], _LOG_P[7], y2)
  fma(y0, t, _LOG_P[2], y0)
  fma(y1, t, _LOG_P[5], y1)
  fma(y2, t, _LOG_P[8], y2)
  fma(fma(y0, t3, y1, y0), t3, y2, y0)
  fma(y0, t3, e * _LN2_LO, y0)
  # t - t2/2 and e * ln2_hi are exact products, so fused or not they round the same
  y = t - t2 * F32(0.5)
  y += y0
  y += e * _LN2_HI
  return y


def _log_special(x, y):
  """Patch what the polynomial cannot give: -inf at 0 (and subnormals, read as 0), inf at
  inf, NaN below 0."""
  zero = np.abs(x) < _TINY
  y[zero] = -np.inf
  y[x == np.inf] = np.inf
  y[~((x >= 0) | zero)] = np.nan
  return y


@_elementwise
def log(x):
  return _log_special(x, _log_poly(*_log_reduce(x)))


# ---- log1p: a rational approximation for |x| < sqrt(2) - 1, else log(1 + x) --------------------

_LOG1P_P = _f32(4.527e-05, 0.49854103, 6.5787325, 29.911919, 60.94967, 57.112965, 20.039553)
_LOG1P_Q = _f32(1.0, 15.062909, 83.04757, 221.7624, 309.09872, 216.42789, 60.11866)
_SQRT2_M1 = F32(0.41421357)


@_elementwise
def log1p(x):
  small = np.abs(x) < _SQRT2_M1
  # near 0: x - x^2/2 + x^3 P(x)/Q(x), every step rounded to float32
  x2 = x * x
  r = _horner(x, _LOG1P_P, np.empty_like(x))
  r /= _horner(x, _LOG1P_Q, np.empty_like(x))
  r *= x * x2
  r -= x2 * F32(0.5)
  r += x
  r[np.abs(x) < _TINY] *= 0          # subnormal x is read as (signed) zero
  if small.all():
    return r
  x1 = x + F32(1)
  y = _log_special(x1, _log_poly(*_log_reduce(x1)))
  return np.where(small, r, y)


# ---- pow: glibc's powf, exp2(y log2 x) in double precision ------------------------------------
# XLA calls the C library's powf; glibc's (2.28 and later) evaluates log2|x| from a 16-entry
# table and a degree-5 polynomial, and 2**(y log2|x|) from a 32-entry table and a cubic, all in
# float64, rounding to float32 once at the end. Ported here with its tables (the numbers are
# the glibc/ARM optimized-routines ones).

def _hex(*s):
  return np.array([float.fromhex(v) for v in s])


_POW_INVC = _hex("0x1.661ec79f8f3bep+0", "0x1.571ed4aaf883dp+0", "0x1.49539f0f010bp+0",
                 "0x1.3c995b0b80385p+0", "0x1.30d190c8864a5p+0", "0x1.25e227b0b8eap+0",
                 "0x1.1bb4a4a1a343fp+0", "0x1.12358f08ae5bap+0", "0x1.0953f419900a7p+0", "0x1p+0",
                 "0x1.e608cfd9a47acp-1", "0x1.ca4b31f026aap-1", "0x1.b2036576afce6p-1",
                 "0x1.9c2d163a1aa2dp-1", "0x1.886e6037841edp-1", "0x1.767dcf5534862p-1")
_POW_LOGC = _hex("-0x1.efec65b963019p-2", "-0x1.b0b6832d4fca4p-2", "-0x1.7418b0a1fb77bp-2",
                 "-0x1.39de91a6dcf7bp-2", "-0x1.01d9bf3f2b631p-2", "-0x1.97c1d1b3b7afp-3",
                 "-0x1.2f9e393af3c9fp-3", "-0x1.960cbbf788d5cp-4", "-0x1.a6f9db6475fcep-5", "0x0p+0",
                 "0x1.338ca9f24f53dp-4", "0x1.476a9543891bap-3", "0x1.e840b4ac4e4d2p-3",
                 "0x1.40645f0c6651cp-2", "0x1.88e9c2c1b9ff8p-2", "0x1.ce0a44eb17bccp-2")
_POW_A = _hex("0x1.27616c9496e0bp-2", "-0x1.71969a075c67ap-2", "0x1.ec70a6ca7baddp-2",
              "-0x1.7154748bef6c8p-1", "0x1.71547652ab82bp0")
# 2**(i/32) as float64 bits, less i << 47 so that adding k << 47 gives 2**(k/32)
_EXP2_TAB = np.array([
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540], np.uint64)
_EXP2_C = _hex("0x1.c6af84b912394p-5", "0x1.ebfce50fac4f3p-3", "0x1.62e42ff0c52d6p-1")
_EXP2_SHIFT = float.fromhex("0x1.8p+52") / 32


def _split(c):
  """``c = hi + lo`` with ``hi`` on 26 bits, so a float32 times ``hi`` is exact in float64."""
  hi = (c.view(np.uint64) & ~np.uint64(2**27 - 1)).view(F64)
  return hi, c - hi


_POW_INVC_HI, _POW_INVC_LO = _split(_POW_INVC)


def _log2_table(ix):
  """log2 of the positive normal float32 whose bits are ``ix`` (uint32), in float64."""
  tmp = ix - np.uint32(0x3f330000)
  i = (tmp >> 19) & 15
  top = tmp & np.uint32(0xff800000)
  z = (ix - top).view(F32).astype(F64)          # x = 2**k z, z in [0x3f330000, 2*0x3f330000)
  k = top.view(np.int32) >> 23
  # r = z / c - 1, as the FMA z * invc - 1 gives it: z * invc_hi is exact, so is its
  # difference from 1; z * invc_lo is below 2**-50 and rounds only there
  r = z * _POW_INVC_HI[i] - 1
  r += z * _POW_INVC_LO[i]
  a = _POW_A
  r2 = r * r
  y = a[0] * r + a[1]
  p = a[2] * r + a[3]
  q = a[4] * r + (_POW_LOGC[i] + k)
  q += p * r2
  y *= r2 * r2
  y += q
  return y


def _exp2_table(xd, negate):
  """float32(+-2**xd) for float64 ``xd`` in (-150, 128]."""
  kd = xd + _EXP2_SHIFT                          # rounds xd to a multiple of 1/32
  ki = kd.view(np.uint64)
  r = xd - (kd - _EXP2_SHIFT)
  t = _EXP2_TAB[ki & np.uint64(31)] + ((ki + (negate.astype(np.uint64) << np.uint64(16))) << np.uint64(47))
  c = _EXP2_C
  y = c[0] * r + c[1]
  y *= r * r
  y += c[2] * r + 1
  y *= t.view(F64)
  return y.astype(F32)


def _int_kind(y):
  """1 where float32 ``y`` is an odd integer, 2 where even (0 and huge included), else 0."""
  whole = np.floor(y) == y
  odd = whole & (np.abs(y) < F32(2**24)) & (np.fmod(y, F32(2)) != 0)
  return np.where(odd, 1, np.where(whole, 2, 0))


@_elementwise
def pow(x, y):
  ax = np.abs(x)
  yk = _int_kind(y)
  negate = np.signbit(x) & (yk == 1)
  # glibc renormalises a subnormal x, but XLA runs it with denormals read as zero, which
  # turns the scaled bits into those of 2**-150
  ix = np.where(ax < _TINY, np.uint32(0xf4800000), ax.view(np.uint32))
  ylogx = y.astype(F64) * _log2_table(ix)
  out = _exp2_table(np.clip(ylogx, -151.0, 129.0), negate)
  out[np.abs(out) < _TINY] *= 0      # and with subnormal results flushed to zero
  over = ylogx > float.fromhex("0x1.fffffffd1d571p+6")
  under = ylogx <= -150
  out[over] = np.inf
  out[under] = 0
  np.negative(out, out=out, where=negate & (over | under))
  # the cases the C function takes first, in reverse order of precedence
  out[(x < 0) & (yk == 0)] = np.nan
  x2 = ax * ax
  x2 = np.where(y < 0, F32(1) / x2, x2)
  edge = (ax == 0) | (ax == np.inf)
  out[edge] = np.where(negate, -x2, x2)[edge]
  yinf = np.abs(y) == np.inf
  out[yinf] = np.where((ax < 1) == (y > 0), F32(0), F32(np.inf))[yinf]
  out[yinf & (ax == 1)] = 1
  out[np.isnan(x) | np.isnan(y)] = np.nan
  out[(y == 0) | (x == 1)] = 1
  return out


# ---- tan: glibc 2.36's tanf: reduction by pi/2 in double, then fdlibm's float kernel -----------
# Unlike sinf/cosf/powf, glibc has no FMA build of tanf, so its float kernel is plain float32
# arithmetic that NumPy repeats op for op. (glibc 2.41 replaced it with a correctly rounded
# tanf; a host with that glibc gives other results for about 1 input in 10^5.)

_TAN_T = _f32(3.3333334327e-01, 1.3333334029e-01, 5.3968254477e-02, 2.1869488060e-02,
              8.8632395491e-03, 3.5920790397e-03, 1.4562094584e-03, 5.8804126456e-04,
              2.4646313977e-04, 7.8179444245e-05, 7.1407252108e-05, -1.8558637748e-05,
              2.5907305826e-05)
_PIO4, _PIO4_LO = F32(7.8539812565e-01), F32(3.7748947079e-08)
_HPI_INV = float.fromhex("0x1.45F306DC9C883p+23")   # 2/pi, scaled by 2**24
_HPI = float.fromhex("0x1.921FB54442D18p0")


# 4/pi to 192 bits, 8 new bits per entry (glibc's __inv_pio4)
_INV_PIO4 = np.array([
    0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
    0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd,
    0xf534ddc0, 0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43,
    0x993c4390, 0x3c439041], np.uint64)


def _reduce_large(x):
  """(x mod pi/2 in [-pi/4, pi/4] as float64, quadrant) for |x| >= 120, by a fixed-point
  product of the mantissa with 4/pi: glibc's integer reduction, in 64-bit NumPy ints."""
  u64 = np.uint64
  xi = x.view(np.uint32).astype(u64)
  j = (xi >> u64(26)) & u64(15)
  m = (((xi & u64(0xffffff)) | u64(0x800000)) << ((xi >> u64(23)) & u64(7))) & u64(0xffffffff)
  lo = (m * _INV_PIO4[j]) & u64(0xffffffff)     # a 32-bit product in C
  res = ((m * _INV_PIO4[j + 8]) >> u64(32)) | (lo << u64(32))
  res += m * _INV_PIO4[j + 4]
  n = (res + u64(1 << 61)) >> u64(62)
  res -= n << u64(62)
  dx = res.view(np.int64).astype(F64) * float.fromhex("0x1.921FB54442D18p-62")
  return np.where(x < 0, -dx, dx), n.astype(np.int32)


def _chop(v):
  """``v`` with its 12 low mantissa bits cleared."""
  return (v.view(np.int32) & np.int32(-4096)).view(F32)


def _tan_kernel(x, y, odd):
  """tan(x + y) for |x + y| <= pi/4, or -1/tan(x + y) where ``odd``; all float32."""
  f = F32
  hx = x.view(np.int32)
  ix = hx & np.int32(0x7fffffff)
  big = ix >= 0x3f2ca140                        # |x| >= 0.6744: use tan(pi/4 - |x|)
  neg = hx < 0
  sign = np.where(big & neg, f(-1), f(1))
  x = np.where(big, (_PIO4 - x * sign) + (_PIO4_LO - y * sign), x)
  y = np.where(big, f(0), y)
  iy = np.where(odd, f(-1), f(1))
  t = _TAN_T
  z = x * x
  w = z * z
  r = t[11] * w
  for c in (t[9], t[7], t[5], t[3]):
    r = (c + r) * w
  r = t[1] + r
  v = t[12] * w
  for c in (t[10], t[8], t[6], t[4]):
    v = (c + v) * w
  v = z * (t[2] + v)
  s = z * x
  r = y + z * (s * (r + v) + y)
  r = r + t[0] * s
  w = x + r
  out_big = sign * (iy - f(2) * (x - (w * w / (w + iy) - r)))
  # -1/(x + r) to full accuracy, with the high halves of w and -1/w
  zh = _chop(w)
  v = r - (zh - x)
  a = f(-1) / w
  th = _chop(a)
  out_odd = th + a * ((f(1) + th * zh) + th * v)
  out = np.where(big, out_big, np.where(odd, out_odd, w))
  # near pi/4 after the reflection, and for tiny arguments, the kernel has shortcuts
  tiny_big = big & (np.abs(x) < f(2**-13))
  out = np.where(tiny_big, sign * iy * (f(1) - f(2) * iy * x), out)
  tiny = ix < 0x39000000
  tiny_out = np.where(odd, np.where(ix == 0, f(1) / np.abs(x), f(-1) / x), x)
  return np.where(tiny, tiny_out, out)


@_elementwise
def tan(x):
  xd = x.astype(F64)
  n = ((xd * _HPI_INV).astype(np.int32) + np.int32(0x800000)) >> 24
  dx = xd - n * _HPI
  large = np.abs(x) >= F32(120)
  if large.any():
    dxl, nl = _reduce_large(np.where(large, x, F32(0)))
    dx = np.where(large, dxl, dx)
    n = np.where(large, nl, n)
  hi = dx.astype(F32)
  lo = (dx - hi).astype(F32)
  small = np.abs(x) <= F32(0.785398125648498535)   # bits 0x3f490fda: no reduction
  hi = np.where(small, x, hi)
  lo = np.where(small, F32(0), lo)
  odd = (n & 1).astype(bool) & ~small
  out = _tan_kernel(hi, lo, odd)
  out[~np.isfinite(x)] = np.nan
  return out


# ---- erf: Eigen's rational approximation, which XLA inlines ----------------------------------

_ERF_P = _f32(0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861,
              0.18520832239976145, 1.128379143519084)
_ERF_Q = _f32(-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885,
              0.014070470171167667, 0.11098505178285362, 0.49746925110067538, 1.0)
_ERF_SATURATES = F32(3.832506856900711)   # erf rounds to +-1 from here on


@_elementwise
def erf(x):
  # x P(x^2) / Q(x^2), each Horner step one fused multiply-add; subnormals read as zero
  x = np.where(np.abs(x) < _TINY, x * F32(0), x)
  x2 = x * x
  p = _horner(x2, _ERF_P, np.empty_like(x))
  p *= x
  p /= _horner(x2, _ERF_Q, np.empty_like(x))
  return np.where(np.abs(x) >= _ERF_SATURATES, np.sign(x), p).astype(F32)


# ---- erf_inv: Giles' single-precision polynomials on XLA's log1p ----------------------------

_ERF_INV_W_LT_5 = _f32(2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                       0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_W_GE_5 = _f32(-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                       0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


@_elementwise
def erf_inv(x):
  # w = -log1p(-x^2) with XLA's log1p; one polynomial below w = 5, another in sqrt(w) above
  w = -log1p(-(x * x))
  p = _horner(w - F32(2.5), _ERF_INV_W_LT_5, np.empty_like(w))
  tail = ~(w < F32(5))   # |x| > 0.9966, rare: the other polynomial, on those only
  if tail.any():
    wt = np.sqrt(w[tail]) - F32(3)
    p[tail] = _horner(wt, _ERF_INV_W_GE_5, np.empty_like(wt))
  return np.where(np.abs(x) == 1, x * F32(np.inf), p * x).astype(F32)
