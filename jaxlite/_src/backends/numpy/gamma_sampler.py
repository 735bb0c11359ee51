"""JAX's gamma sampler (jax.random.gamma / loggamma) in NumPy, bit for bit with XLA CPU.

JAX lowers random_gamma_p on CPU to vmap(_gamma_one) over one key per element: a batched
(masked) Marsaglia-Tsang rejection loop. Per lane the masked loop gives the same numbers as running
that lane alone, so here every lane runs the same sequence of float32 operations that XLA's compiled
kernels run, only on the lanes still active. What XLA does, and what is reproduced:

* c = (1/3) / sqrt(d) is rewritten by XLA's algebraic simplifier to (1/3) * rsqrt(d), and
  XLA CPU lowers rsqrt to the hardware estimate vrsqrtps plus two Newton-Raphson steps
  y += (-y/2) * fma(d*y, y, -1). vrsqrtps (Intel's legacy 12-bit estimate) depends only on
  the exponent's parity and the top 10 mantissa bits; its 2048 results are tabulated below (taken
  from this host's CPU: an AMD CPU gives other estimates, hence other samples).
* v = 1 + x * c is contracted into one FMA; 1 - 0.0331 * (X*X) too.
* the normal draw is XLA's erf_inv polynomial (FMA per Horner step) on w = -log1p(-u*u) with
  XLA's inline log1p; logs are XLA's inline polynomial, except that for 1-D arrays of fewer than
  16 elements whose size mod 8 is 3, 5, 6 or 7 XLA calls glibc's logf (ported here).
* pow is glibc's powf (xla_math.pow).
"""
import base64
import zlib

import numpy as np

from jaxlite._src.random import threefry2x32_numpy
from jaxlite._src.backends.numpy import xla_math
from jaxlite._src.backends.numpy.xla_math import fma, _POW_INVC_HI, _POW_INVC_LO, _hex

F32, F64, U32 = np.float32, np.float64, np.uint32

# ---- vrsqrtps ---------------------------------------------------------------------------------
# result for x in [1, 4) is 0x3f000000 | (m << 11), m indexed by the top 11 bits of x (exponent
# parity, 10 mantissa bits)
_RSQRT_M = np.frombuffer(zlib.decompress(base64.b64decode(
    "eNoFwQVgUOUWAOBz/s576S7phgkSk3BIt4AgIOHo7kmXdDc8ukO6u1twdA4m7YhJSE/gfd/n8GP4NnwV/hM+CR+F98L48GZ4NbwYxoZnwpPh0fBguDfcGW4NN4Zrw1Xh8nBxOD+cE84Ip4QTwrHhyHBYOCjsF8aEPcOuYcewbdgqbBE2DRuFDcK6Yc2walgpjArLhqXDEuHXYeGwQJgnzBFmCzOF6cLUYfLQhyYUIQm/BEnBu+B18CJIDB4HD4N7QXwQF1wLLgXng7PB6eB4cCQ4EOwJdgZbg03BumBNsCJYGiwM5gWzgxnBlGBiMDYYFQwPhgQDgr5Bn6BH0DXoGLQLWgUtg2ZB46BhUC+oE9QMqgaVgqigXPBtUDIoHkQEhYL8Qe4gR5AtyBSkD9IEKYIwcIEOeECCLz7Jv/dv/Ev/j3/qE/wDf9fH+zh/zV/2F3ys/8Of9Mf8YX/A7/E7/Ta/2W/wv/tVfrlf4hf6eX62n+Gn+kl+vB/jR/hhfrAf4Pv6Pr6n7+Y7+fa+jY/2LfzPvrFv6Ov7ur6Wr+Yr++/9d76sj/QlfXEf4Qv7Aj6vz+Wz+6w+k0/v0/iUPpn33njpmUf/2SW59+6Ne+Weu2fusXvk7rs77raLc9fdFXfRnXNn3Wl3wh11h9x+t8ftctvdFrfRrXNr3Eq3zC1xC908N8fNdNPcZDfRjXOj3Qg3zA12A10/F+N6ue6uq+vk2rs2Ltq1dM1cE9fINXD1XB1X01VzVVxFF+XKuTKutCvhirkIV9gVcHldbpfDZXNZXEaXzqV2KV0y5511ynFHHbhPNsm+t2/sv/aFTbRPbYJ9aO/bO/a2jbPX7RV7yZ63sfaMPWVP2KP2kD1g99rddofdajfbDXadXWNX2eV2iV1k59u5dradaafZyXaiHWfH2JH2NzvUDrYDbD8bY3vZHrar7Ww72Ha2tY22LWwz28T+ZH+09W1dW9vWsNVsZVvRRtnytqyNtKXsN7aYLWoL2wI2n81tc9rsNqvNbDPYdDa1TWmT28A6q6203BIL9pNJMh/MW/PavDTPTaJ5YhLMQ3Pf3DXx5pa5aa6ZK+aSOW9izRlz2pw0x8wRc8jsN3vNbrPDbDNbzEaz3qw1q81Ks9wsNYvMAjPPzDGzzAwz1Uw2E814M8aMMiPMcDPEDDIDTF8TY3qbnqab6WI6mQ6mrWltok1L08w0NY1NI/OjqWfqmtqmpqlmqphK5nsTZcqZMibSlDIlTDETYYqYQqaAyWtym5wmu8lmMpuMJr1Ja1KblCaZCYwzxigjDDNovuhPOkl/0O/0G/1Kv9D/6Gf6iU7Qj/QDfVf/pW/rOH1DX9NX9CV9Qcfqs/oPfUqf0Mf0EX1IH9D79B69U2/XW/VmvVGv12v1Gr1Kr9DL9BK9SC/Q8/T/9Gw9Q0/TU/QkPUGP02P0KD1CD9dD9WA9UPfXfXWM7q176u66q+6sO+r2uq1uraN1S91c/6yb6J90Q91A19N1dW1dU1fXVXVlXVFX0N/pcrqMjtSldEn9jS6mI3QRXUgX0Pl0Hp1L59Bf6aw6s86o0+u0Oo1OpVPoZDrQThuttNBMEw36i/qkktQH9U69Uf+ql+q5SlTP1BOVoB6pB+qeuqPi1S0Vp26oa+qKuqQuqHMqVp1Vf6hT6oQ6po6ow+qg2q/2qt1qp9qutqktapPaoNap39UatUqtUMvUErVILVTz1Vw1R81SM9V0NVVNVhPVBDVOjVGj1Aj1mxqmhqhBaoDqr/qqGNVb9VQ9VDfVRXVSHVV71Va1VtHqF9VCNVNNVRP1k2qoGqj66gdVR9VSNVV1VVVVVpXU9ypKlVflVBkVqUqpkuobVUxFqKKqsCqoCqh8Ko/KpXKq7Cqbyqoyq4wqvUqn0qhUKqVKrkLllVNGKSUVV1QRBeqz/CST5Af5Tr6Vr+Ur+VI+l4nymXwiE+Tf8qG8L+/JOzJe3pZx8oa8Lq/Ky/KSvCDPy1h5Vp6Rp+VJeUIek0fkYXlQHpD75B65W+6U2+U2uUVukhvlerlO/i5Xy1VyhVwul8rFcpFcIOfJuXKOnC1nyulympwiJ8uJcrwcJ8fI0XKkHCGHy6FyiBwkB8r+sq/8VfaRvWVP2UN2k11kZ9lRdpDtZFvZWkbLX2QL2Vz+LJvKxvIn2VA2kPXlD7KurC1ryRqyuqwqq8hKsqKsIL+T5WVZWUZGytKypCwhi8tiMkIWlYVlIVlA5pd5ZR6ZS+aQ2WU2mVVmlplkBpleppVpZCqZUiaXyWQgvbTSSCWl5JJJKlGC/Cw+iSTxUbwX78Qb8Vq8Ei/Fc/GPeCaeisciQTwSD8UDcU/cFX+JeHFLxIkb4rq4Kq6IS+KiuCDOiVhxVpwRp8UpcUIcF8fEEXFYHBQHxD6xV+wRu8ROsV1sE1vEZrFJbBDrxVrxu1gtVomVYrlYJpaIRWK+mCtmixliqpgkJoixYpT4TQwVg8UA0Vf0Eb1Ed9FFdBTtRBsRLVqIZqKJaCQaiHqijqgpqosqoqKIEuVFGVFalBTFRYQoIgqKfCKPyCm+EllFJpFepBWpRAoRCieMkIILIr7wT/wjf8/f8Ff8BU/kT3kCf8Tv8zs8nsfxG/wqv8wv8HP8LP+Dn+TH+BF+kO/ne/guvp1v5Zv4Br6Wr+Gr+HK+lC/iC/hcPofP5NP5FD6Jj+dj+Wg+gg/nQ/gg3p/35TG8F+/Bu/LOvCNvx9vwaN6SN+dNeWPeiDfg9XgdXovX4FV5ZV6RR/HyvCyP5KV4CV6MR/AivCDPz/PyXDwH/4pn4Zl4Bp6Op+YpeXIecMcNV5xzypF/Yf+xj+w9e8v+ZS/Zc5bInrAE9og9YHfZX+w2i2M32FV2mV1k51ksO8NOs5PsODvKDrEDbB/bw3axHWwr28w2svVsLVvDVrLlbClbzBay+Wwum81msulsKpvMJrLxbCwbxUaw4WwoG8wGsv6sL4thvVkP1o11YZ1YB9aOtWGt2C+sBWvGmrLGrBH7kdVjdVltVpNVZ1VZZVaRVWDfsXKsDItkpVgJVpx9zYqywqwgy8/ystwsJ8vOsrEsLBPLwNKxNCwVS8GSsYA5ZphigjFGGLDP9BNNoh/oO/qG/ktf0uc0kT6lj+nf9CG9T+/SOzSe3qI36XV6lV6mF+l5GkvP0jP0ND1Jj9Oj9DA9SPfTfXQP3UV30G10C91EN9D1dC1dQ1fRFXQZXUIX04V0Pp1L59BZdCadTqfSyXQiHU/H0TF0FB1Bh9NhdAgdRAfQfrQvjaG9aU/anXajXWgn2oG2o21paxpNW9LmtBltShvTRrQhbUDr0bq0Dq1Fa9BqtCqtTCvSCjSKlqdl6bc0kpaiJWhxWoxG0CK0MC1I89O8NA/NRXPQ7DQbzUIz0Yw0PU1L09BUNAVNTkPqqaWGKioop5QiBfqZ/EeSyAfyjrwlr8kr8pI8J4nkGXlCEsjf5CG5T+6RO+QvcpvEkZvkOrlKrpBL5AI5T2LJn+QMOU1OkRPkODlKDpND5ADZR/aS3WQX2UG2ka1kM9lENpB1ZC1ZQ1aTlWQFWUaWkMVkIVlA5pG5ZA6ZRWaS6WQamUImk4lkPBlHxpDRZCQZQYaTYWQIGUwGkv6kH/mVxJDepBfpQbqTrqQL6UQ6kvakHWlDWpFo0pK0IM3Iz6QJaUwakYakAalPfiB1SW1Si9Qg1UlVUoVUIhVJBRJFypNypCz5lkSSUqQk+YYUJ1+TCFKEFCYFSQGSj+QluUkukpNkJ1+RrCQLyUQykvQkHUlDUpNUJAVJTkISEEcsMUQRSThhhBAkQD7jJ0zCj/ge3+FbfI3/4kt8gc8xEZ/hE3yMCfgIH+J9vId38S+Mx1sYhzfxOl7DK3gZL+EFPI/n8E88i3/gaTyFJ/A4HsMjeBgP4gHcj3txD+7GnbgDt+NW3IKbcCNuwHW4Fn/H1bgKV+JyXIZLcTEuwoU4H+fhXJyDs3EWzsDpOA2n4GSchBNwPI7DMTgaR+FI/A2H4zAcgoNxEA7A/tgPf8UY7IO9sSf2wO7YFbtgZ+yEHbA9tsM22BpbYTS2xBbYHH/GptgEG2MjbIg/Yn2shz9gXayNtbAm1sBqWBWrYGWsiN9jBYzC8lgOy2IZjMTSWApL4jdYHIvh11gUi2BhLIQFMD/mw7yYG3NhTsyB2TEbZsUsmBkzYgZMj+kwLabGVJgSU2AyDDFAjw4NalQoUSBDigQRAT/DJ/gPkuAjvId38BbewGt4BS/hBTyHfyARnsITeAwJ8Dc8hAdwH+7BXbgD8XAbbkEc3IQbcA2uwhW4DJfgIpyHcxALf8JZOAOn4RSchBNwHI7BUTgMh+AgHID9sA/2wm7YBTthB2yHbbAVNsMm2AgbYD2sg7WwBlbDKlgJK2A5LIOlsBgWwUJYAPNhHsyF/8EcmAUzYQZMh2kwFabAZJgEE2A8jIOxMAZGwygYCSNgOAyDoTAEBsMgGAgDoD/0g74QA32gN/SCntADukM36ApdoDN0gg7QHtpBW2gDraEVRMMv0BJaQHNoBk2hCTSGn6ARNIQfoQHUh3rwA9SFOlAbakFNqA7VoCpUgcpQCSrC91ABouA7KA/loCyUgW8hEkpDKSgJJaA4FIOvIQKKQhEoDIWgIBSA/JAP8kIeyA25ICfkgOzwFWSDrJAFMkMmyAgZID2kg7SQBlJDKkgJKSA5JIMQAvDgwIIBDQokCODAgAIBhP8DeGYfRw==")), "<u2").astype(np.int64)
_RSQRT_BITS = (0x3f000000 | (_RSQRT_M << 11))


def _vrsqrtps(x):
  """Intel's vrsqrtps on positive normal float32 x (other inputs: see _rsqrt)."""
  b = x.view(U32).astype(np.int64)
  e = (b >> 23) - 127
  par = e & 1
  idx = (par << 10) | ((b & 0x7fffff) >> 13)
  half = (e - par) // 2
  return (_RSQRT_BITS[idx] - (half << 23)).astype(U32).view(F32)


def _rsqrt(d):
  """XLA CPU's rsqrt: hardware estimate refined by two Newton steps, one FMA each."""
  normal = (d >= F32(1.17549435e-38)) & (d < F32(np.inf))
  dn = np.where(normal, d, F32(1))
  y = _vrsqrtps(dn)
  t = np.empty_like(dn)
  for _ in range(2):
    h = y * F32(-0.5)
    fma(dn * y, y, F32(-1), t)
    y = fma(h, t, y, np.empty_like(dn))
  # what the hardware estimate gives outside the positive normals (denormals read as 0)
  special = np.where(d > F32(1.17549435e-38), F32(0), np.where(d >= 0, F32(np.inf), F32(np.nan)))
  return np.where(normal, y, special).astype(F32)


# ---- glibc logf ---------------------------------------------------------------------------------
_LOGF_LOGC = _hex("-0x1.57bf7808caadep-2", "-0x1.2bef0a7c06ddbp-2", "-0x1.01eae7f513a67p-2",
                  "-0x1.b31d8a68224e9p-3", "-0x1.6574f0ac07758p-3", "-0x1.1aa2bc79c81p-3",
                  "-0x1.a4e76ce8c0e5ep-4", "-0x1.1973c5a611cccp-4", "-0x1.252f438e10c1ep-5",
                  "0x0p+0", "0x1.aa5aa5df25984p-5", "0x1.c5e53aa362eb4p-4",
                  "0x1.526e57720db08p-3", "0x1.bc2860d22477p-3", "0x1.1058bc8a07ee1p-2",
                  "0x1.4043057b6ee09p-2")
_LOGF_LN2 = float.fromhex("0x1.62e42fefa39efp-1")
_LOGF_A = _hex("-0x1.00ea348b88334p-2", "0x1.5575b0be00b6ap-2", "-0x1.ffffef20a4123p-2")


def glibc_logf(x):
  """glibc 2.28+ logf (ARM optimized-routines), in float64 as it computes; positive normal
  inputs go through the table, the rest are patched."""
  x = np.asarray(x, F32)
  with np.errstate(all="ignore"):
    ix = np.where(x >= F32(1.17549435e-38), x, F32(1)).view(U32)
    tmp = ix - U32(0x3f330000)
    i = (tmp >> U32(19)) & U32(15)
    k = tmp.view(np.int32) >> 23
    z = (ix - (tmp & U32(0xff800000))).view(F32).astype(F64)
    r = z * _POW_INVC_HI[i] - 1          # fma(z, invc, -1), exact as in xla_math.pow
    r += z * _POW_INVC_LO[i]
    y0 = _LOGF_LOGC[i] + k.astype(F64) * _LOGF_LN2
    r2 = r * r
    y = _LOGF_A[1] * r + _LOGF_A[2]
    y = _LOGF_A[0] * r2 + y
    y = y * r2 + (y0 + r)
    out = y.astype(F32)
    out = np.where(x == 1, F32(0), out)
    out = np.where(np.abs(x) < F32(1.17549435e-38), F32(-np.inf), out)  # DAZ: subnormals are 0
    out = np.where(x == np.inf, F32(np.inf), out)
    out = np.where((x < 0) & (np.abs(x) >= F32(1.17549435e-38)) | np.isnan(x), F32(np.nan), out)
  return out


# ---- PRNG pieces ----------------------------------------------------------------------------------

def _split(k0, k1, i):
  """Key i of split(key, n) for keys given as word arrays (partitionable threefry)."""
  return threefry2x32_numpy(k0, k1, U32(0), U32(i))


def _bits(k0, k1):
  b0, b1 = threefry2x32_numpy(k0, k1, U32(0), U32(0))
  return b0 ^ b1


def _unit(k0, k1):
  """float32 in [1, 2) from the key's 32 random bits, minus 1 (exact)."""
  return ((_bits(k0, k1) >> U32(9)) | U32(0x3f800000)).view(F32) - F32(1)


_LO = F32(-0.99999994)


def _normal(k0, k1):
  """jax.random.normal(key, ()) as XLA computes it inside the gamma loop."""
  u = np.maximum(_LO, _unit(k0, k1) * F32(2) + _LO)
  return xla_math.erf_inv(u) * F32(1.41421354)


# ---- the sampler ------------------------------------------------------------------------------------

def _uses_glibc_log(n):
  return n < 16 and n % 8 in (3, 5, 6, 7)


def _accept_test(X, V, U, d, log):
  """Second half of JAX's loop condition (true: reject and draw again)."""
  return log(U) >= X * F32(0.5) + d * ((F32(1) - V) + log(V))


def gamma(key_data, alphas, log_space=False):
  """jax.random.gamma (loggamma with ``log_space``): uint32 keys (*batch, 2), each split
  into one key per element of the matching slice of float32 ``alphas`` (*batch, ...)."""
  key_data = np.asarray(key_data, U32).reshape(-1, 2)
  alphas = np.asarray(alphas, F32)
  shape, n = alphas.shape, alphas.size
  if n == 0:
    return np.zeros(shape, F32)
  log = glibc_logf if _uses_glibc_log(n) else xla_math.log
  a = alphas.reshape(-1)
  with np.errstate(all="ignore"):
    # XLA runs every key's elements as one vector of n lanes
    count = np.arange(n // key_data.shape[0], dtype=U32)
    k0, k1 = (w.reshape(-1) for w in _split(key_data[:, :1], key_data[:, 1:], count))
    boost = a >= F32(1)
    d = np.where(boost, a, a + F32(1)) + F32(-1 / 3)
    c = F32(1 / 3) * _rsqrt(d)
    sub0, sub1 = _split(k0, k1, 1)
    k0, k1 = _split(k0, k1, 0)
    X = np.zeros(n, F32)
    V = np.ones(n, F32)
    U = np.full(n, F32(2))
    active = np.arange(n)
    while active.size:
      kk0, kk1, dd, cc = k0[active], k1[active], d[active], c[active]
      xk0, xk1 = _split(kk0, kk1, 1)
      uk0, uk1 = _split(kk0, kk1, 2)
      k0[active], k1[active] = _split(kk0, kk1, 0)
      # inner loop: normal draws until v = 1 + x c > 0
      m = active.size
      x = np.zeros(m, F32)
      v = np.full(m, F32(-1))
      inner = np.arange(m)
      while inner.size:
        a0, a1 = xk0[inner], xk1[inner]
        s0, s1 = _split(a0, a1, 1)
        xk0[inner], xk1[inner] = _split(a0, a1, 0)
        xi = _normal(s0, s1)
        x[inner] = xi
        v[inner] = fma(xi, cc[inner], F32(1), np.empty_like(xi))
        inner = inner[v[inner] <= 0]
      Xa = x * x
      Va = (v * v) * v
      Ua = np.maximum(F32(0), _unit(uk0, uk1))
      X[active], V[active], U[active] = Xa, Va, Ua
      # keep the lanes whose sample is rejected
      c1 = Ua >= fma(-(Xa * Xa), F32(0.0331), F32(1), np.empty_like(Xa))
      again = c1 & _accept_test(Xa, Va, Ua, dd, log)
      if log is not xla_math.log:
        # the loop's own condition (any lane still rejecting) is a fusion with XLA's inline
        # log; the per-lane masks in the body use the glibc logf kernel: stop when the former
        # says every lane is done, whatever the latter says
        if not (c1 & _accept_test(Xa, Va, Ua, dd, xla_math.log)).any():
          break
      active = active[again]
    if log_space:
      ls = xla_math.log1p(-np.maximum(F32(0), _unit(sub0, sub1)))
      lb = np.where(boost | (ls == 0), F32(0), ls * (F32(1) / a))
      out = (xla_math.log(d) + xla_math.log(V)) + lb   # inline logs in the final fusion
    else:
      samples = F32(1) - np.maximum(F32(0), _unit(sub0, sub1))
      b = np.where(boost, F32(1), xla_math.pow(samples, F32(1) / a))
      out = (V * d) * b
      out[np.abs(out) < F32(1.17549435e-38)] *= 0    # XLA flushes subnormal results to zero
  return out.astype(F32).reshape(shape)
