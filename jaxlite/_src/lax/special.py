"""Special-function primitives: error functions, log-gamma, digamma, polygamma, Hurwitz
zeta, incomplete gamma, scaled Bessel functions. All take and return one floating dtype, elementwise.

Derivatives are written in terms of these primitives and the elementwise ones, so they
trace and nest like any other rule.

Composed from them: the regularized incomplete beta function ``betainc``, and the
derivative of a gamma sample in its shape, ``random_gamma_grad``, beside the gamma
sampler's primitive ``random_gamma_p`` whose derivative it is.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.lax import control_flow as cf
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.lax import reductions
from jaxlite._src.lax import shapes
from jaxlite._src.lax.shapes import _fill
from jaxlite._src.lax.elementwise import _const, _float, family_naryop as naryop
from jaxlite._src.transforms import ad


erf_p = naryop("erf", _float)
erfc_p = naryop("erfc", _float)
erf_inv_p = naryop("erf_inv", _float)
lgamma_p = naryop("lgamma", _float)
digamma_p = naryop("digamma", _float)
polygamma_p = naryop("polygamma", _float)
zeta_p = naryop("zeta", _float)
igamma_p = naryop("igamma", _float)
igammac_p = naryop("igammac", _float)
igamma_grad_a_p = naryop("igamma_grad_a", _float)
bessel_i0e_p = naryop("bessel_i0e", _float)
bessel_i1e_p = naryop("bessel_i1e", _float)


def erf(x):
  """The error function ``2/sqrt(pi) * integral(exp(-t**2), 0, x)``, elementwise."""
  return erf_p.bind(x)


def erfc(x):
  """The complementary error function ``1 - erf(x)``, accurate for large ``x``."""
  return erfc_p.bind(x)


def erf_inv(x):
  """The inverse of ``erf`` on ``(-1, 1)``; ``+-inf`` at ``+-1``, NaN outside."""
  return erf_inv_p.bind(x)


def lgamma(x):
  """``log(abs(gamma(x)))``, elementwise."""
  return lgamma_p.bind(x)


def digamma(x):
  """The digamma function ``d/dx lgamma(x)``; NaN at the non-positive integers."""
  return digamma_p.bind(x)


def polygamma(m, x):
  """The ``m``-th derivative of ``digamma`` (``m`` a non-negative integer-valued float)."""
  return polygamma_p.bind(m, x)


def zeta(x, q):
  """The Hurwitz zeta function ``sum((q + k) ** -x for k >= 0)``, elementwise, for two
  float arrays of one dtype: ``inf`` at ``x == 1``, NaN for ``x < 1``; at the poles
  ``q = 0, -1, ...`` ``inf`` for even integer ``x``, else NaN."""
  return zeta_p.bind(x, q)


def igamma(a, x):
  """The regularized lower incomplete gamma function ``P(a, x)``."""
  return igamma_p.bind(a, x)


def igammac(a, x):
  """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
  return igammac_p.bind(a, x)


def igamma_grad_a(a, x):
  """``d/da igamma(a, x)``."""
  return igamma_grad_a_p.bind(a, x)


def bessel_i0e(x):
  """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``."""
  return bessel_i0e_p.bind(x)


def bessel_i1e(x):
  """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``."""
  return bessel_i1e_p.bind(x)


# -- derivatives
_two_over_sqrt_pi = 2 / np.sqrt(np.pi)


def _erf_slope(x):
  return mul_c(ew.exp(ew.neg(ew.square(x))), x, _two_over_sqrt_pi)


def mul_c(y, x, c):
  return ew.mul(y, _const(x, c))


def _igamma_dx(a, x):
  # x**(a-1) exp(-x) / gamma(a), in logs so that it neither overflows nor underflows
  log_density = ew.sub(ew.sub(ew.mul(ew.sub(a, _const(a, 1)), ew.log(x)), x), lgamma(a))
  return ew.exp(log_density)


def _i1e_slope(g, ans, x):
  # i1e'(x) = i0e(x) - i1e(x) (sign(x) + 1/x); its limit at x = 0 is 1/2
  is_zero = ew.eq(x, _const(x, 0))
  safe_x = ew.select(is_zero, ew.broadcast_like(_const(x, 1), x), x)
  slope = ew.sub(bessel_i0e(x), ew.mul(ans, ew.add(ew.sign(x), ew.div(_const(x, 1), safe_x))))
  return ew.mul(g, ew.select(is_zero, ew.broadcast_like(_const(x, 0.5), x), slope))


def _polygamma_dm(g, m, x):
  raise ValueError("polygamma is not differentiable with respect to its order `m`.")


def _zeta_dx(g, x, q):
  raise ValueError("lax.zeta is not differentiable with respect to x (JAX's is not "
                   "either); jax.scipy.special.zeta is.")


ad.defjvp(erf_p, lambda g, x: ew.mul(g, _erf_slope(x)))
ad.defjvp(erfc_p, lambda g, x: ew.neg(ew.mul(g, _erf_slope(x))))
ad.defjvp2(erf_inv_p, lambda g, ans, x: ew.mul(g, mul_c(ew.exp(ew.square(ans)), x,
                                                        np.sqrt(np.pi) / 2)))
ad.defjvp(lgamma_p, lambda g, x: ew.mul(g, digamma(x)))
ad.defjvp(digamma_p, lambda g, x: ew.mul(g, polygamma(ew.broadcast_like(_const(x, 1), x),
                                                      x)))
ad.defjvp(polygamma_p, _polygamma_dm,
          lambda g, m, x: ew.mul(g, polygamma(ew.add(m, _const(m, 1)), x)))
ad.defjvp(zeta_p, _zeta_dx,
          lambda g, x, q: ew.neg(ew.mul(g, ew.mul(x, zeta(ew.add(x, _const(x, 1)), q)))))
ad.defjvp(igamma_p, lambda g, a, x: ew.mul(g, igamma_grad_a(a, x)),
          lambda g, a, x: ew.mul(g, _igamma_dx(a, x)))
ad.defjvp(igammac_p, lambda g, a, x: ew.neg(ew.mul(g, igamma_grad_a(a, x))),
          lambda g, a, x: ew.neg(ew.mul(g, _igamma_dx(a, x))))
ad.defjvp2(bessel_i0e_p, lambda g, ans, x: ew.mul(
    g, ew.sub(bessel_i1e(x), ew.mul(ew.sign(x), ans))))
ad.defjvp2(bessel_i1e_p, _i1e_slope)
# igamma_grad_a is evaluated numerically by the backends; its own derivative is not
# provided (JAX's neither differentiates it), so higher-order grads in `a` are zero.
ad.defzero(igamma_grad_a_p)

# Batching: naryop registered nothing for primitives created after elementwise.py ran.
from jaxlite._src.transforms import batching  # noqa: E402

for _p in (erf_p, erfc_p, erf_inv_p, lgamma_p, digamma_p, bessel_i0e_p, bessel_i1e_p):
  batching.defvectorized(_p)
for _p in (polygamma_p, zeta_p, igamma_p, igammac_p, igamma_grad_a_p):
  batching.defbroadcasting(_p)


# -- the incomplete gamma functions as both tiers compute them: JAX's algorithm (Cephes'
# igam / igamc: a power series where x < max(1, a), else a continued fraction for the
# complement, each a loop over the whole array until every element has converged), in
# float32 for half floats
def igamma_value(a, x):
  """``igamma(a, x)`` composed of other primitives: the backends' implementation."""
  return _in_wide_float(_igamma_value, a, x)


def igammac_value(a, x):
  """``igammac(a, x)`` composed of other primitives: the backends' implementation."""
  return _in_wide_float(_igammac_value, a, x)


def _in_wide_float(fn, a, x):
  shape = ew.broadcast_shapes("igamma", [core.get_aval(v).shape for v in (a, x)])
  a, x = (shapes.broadcast_in_dim(v, shape, tuple(range(core.get_aval(v).ndim)))
          for v in (a, x))
  dtype = core.get_aval(a).dtype
  if dtype.itemsize >= 4:
    return fn(a, x)
  wide = np.dtype(np.float32)
  out = fn(ew.convert_element_type(a, wide), ew.convert_element_type(x, wide))
  return ew.convert_element_type(out, dtype)


def _full(x, value):
  return ew.broadcast_like(_const(x, value), x)


def _any(x):
  return reductions.reduce_or(x, tuple(range(core.get_aval(x).ndim)))


def _or(*preds):
  out = preds[0]
  for p in preds[1:]:
    out = ew.bitwise_or(out, p)
  return out


def _is_nan(x):
  # where the prefactor is NaN (a = x = float max: inf - inf) the answer is NaN whatever
  # the loop sums, so those elements leave it at once; JAX's loop runs them 1 / eps times
  # (8 million steps in float32), which costs tier 0 minutes and changes nothing
  return ew.ne(x, x)


def _log_prefactor(a, x):
  """``x**a e**-x / Gamma(a)``, and whether its logarithm underflows."""
  log_ax = ew.sub(ew.sub(ew.mul(a, ew.log(x)), x), lgamma(a))
  underflow = ew.lt(log_ax, _const(x, -np.log(np.finfo(_dtype(x)).max)))
  # XLA's CPU code flushes a subnormal result to zero, which decides the tiny-a edges
  ax = ew.exp(log_ax)
  ax = ew.select(ew.lt(ew.abs(ax), _const(ax, np.finfo(_dtype(x)).tiny)), _full(ax, 0), ax)
  return ax, underflow


def _dtype(x):
  return core.get_aval(x).dtype


def _igamma_series(ax, x, a, enabled):
  eps = _const(x, np.finfo(_dtype(x)).eps)

  def body(vals):
    enabled, r, c, ans = vals
    r2 = ew.add(r, _const(r, 1))
    c2 = ew.mul(c, ew.div(x, r2))
    ans2 = ew.add(ans, c2)
    keep = lambda new, old: ew.select(enabled, new, old)
    return (ew.bitwise_and(enabled, ew.gt(ew.div(c2, ans2), eps)), keep(r2, r), keep(c2, c),
            keep(ans2, ans))

  _, _, _, ans = cf.while_loop(lambda vals: _any(vals[0]), body,
                               (enabled, a, _full(a, 1), _full(a, 1)))
  return ew.div(ew.mul(ans, ax), a)


def _igammac_continued_fraction(ax, x, a, enabled):
  eps = _const(x, np.finfo(_dtype(x)).eps)
  one = lambda v: _const(v, 1)

  def cond(vals):
    return ew.bitwise_and(ew.lt(vals[5], _const(vals[5], 2000)), _any(vals[0]))

  def body(vals):
    enabled, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2 = vals
    c = ew.add(c, one(c))
    y2, z2 = ew.add(y, one(y)), ew.add(z, _const(z, 2))
    yc = ew.mul(y2, c)
    pk = ew.sub(ew.mul(pkm1, z2), ew.mul(pkm2, yc))
    qk = ew.sub(ew.mul(qkm1, z2), ew.mul(qkm2, yc))
    nonzero = ew.ne(qk, _const(qk, 0))
    r = ew.div(pk, qk)
    t2 = ew.select(nonzero, ew.abs(ew.div(ew.sub(ans, r), r)), _full(r, 1))
    ans2 = ew.select(nonzero, r, ans)
    rescale = ew.gt(ew.abs(pk), ew.div(one(eps), eps))
    scaled = lambda v: ew.select(rescale, ew.mul(v, eps), v)
    new = [scaled(pkm1), scaled(qkm1), scaled(pk), scaled(qk)]   # pkm2, qkm2, pkm1, qkm1
    keep = lambda n, o: ew.select(enabled, n, o)
    return (ew.bitwise_and(enabled, ew.gt(t2, eps)), keep(ans2, ans), keep(t2, t),
            keep(y2, y), keep(z2, z), c, keep(new[2], pkm1), keep(new[3], qkm1),
            keep(new[0], pkm2), keep(new[1], qkm2))

  y = ew.sub(one(a), a)
  z = ew.add(ew.add(x, y), one(x))
  pkm1, qkm1 = ew.add(x, one(x)), ew.mul(z, x)
  init = (enabled, ew.div(pkm1, qkm1), _full(x, 1), y, z, _const(x, 0), pkm1, qkm1,
          _full(x, 1), x)
  ans = cf.while_loop(cond, body, init)[1]
  return ew.mul(ans, ax)


def _igamma_edges(a, x):
  is_nan = ew.bitwise_or(ew.ne(a, a), ew.ne(x, x))
  a_zero, x_zero = ew.eq(a, _const(a, 0)), ew.eq(x, _const(x, 0))
  x_inf = ew.eq(x, _const(x, np.inf))
  domain_error = _or(ew.lt(x, _const(x, 0)), ew.lt(a, _const(a, 0)),
                     ew.bitwise_and(a_zero, x_zero), is_nan)
  return a_zero, x_zero, x_inf, domain_error


def _igamma_value(a, x):
  a_zero, x_zero, x_inf, domain_error = _igamma_edges(a, x)
  use_cf = ew.bitwise_and(ew.ge(x, _const(x, 1)), ew.gt(x, a))
  ax, underflow = _log_prefactor(a, x)
  enabled = ew.bitwise_not(_or(x_zero, domain_error, underflow, x_inf, _is_nan(ax)))
  out = ew.select(
      use_cf,
      ew.sub(_const(a, 1), _igammac_continued_fraction(
          ax, x, a, ew.bitwise_and(enabled, use_cf))),
      _igamma_series(ax, x, a, ew.bitwise_and(enabled, ew.bitwise_not(use_cf))))
  out = ew.select(x_zero, _full(out, 0), out)
  out = ew.select(x_inf, _full(out, 1), out)
  return ew.select(domain_error, _full(out, np.nan), out)


def _igammac_value(a, x):
  a_zero, x_zero, x_inf, domain_error = _igamma_edges(a, x)
  use_series = ew.bitwise_or(ew.lt(x, _const(x, 1)), ew.lt(x, a))
  ax, underflow = _log_prefactor(a, x)
  enabled = ew.bitwise_not(_or(domain_error, underflow, x_inf, a_zero, _is_nan(ax)))
  out = ew.select(
      use_series,
      ew.sub(_const(a, 1), _igamma_series(ax, x, a, ew.bitwise_and(enabled, use_series))),
      _igammac_continued_fraction(ax, x, a,
                                  ew.bitwise_and(enabled, ew.bitwise_not(use_series))))
  out = ew.select(ew.bitwise_or(x_inf, a_zero), _full(out, 0), out)
  return ew.select(domain_error, _full(out, np.nan), out)


# -- the regularized incomplete beta function, by its continued fraction
def _same_float(*xs, keep_weak=False):
  """``xs`` broadcast to one float dtype; with ``keep_weak`` the result stays weakly typed
  when every input is, as for a JAX elementwise primitive."""
  xs = [_operand(x) for x in xs]
  avals = [core.get_aval(x) for x in xs]
  weak = keep_weak and all(getattr(a, "weak_type", False) for a in avals)
  strong = [a.dtype for a in avals if not getattr(a, "weak_type", False)]
  want = dtypes.result_type(*[a.dtype for a in avals]) if not strong else \
      dtypes.result_type(*strong)
  if not dtypes.issubdtype(want, np.floating):
    want = dtypes.canonicalize_dtype(np.float64)
  want = dtypes.canonicalize_dtype(want)
  shape = shapes.broadcast_shapes(*[a.shape for a in avals])
  return [shapes._broadcast_to(ew._convert_element_type(x, want, weak), shape) for x in xs]


def _betainc_cf(a, b, x, iters):
  # Lentz's method for the continued fraction of I_x(a, b) (Numerical Recipes' betacf).
  # An element stops once both half steps of an iteration change it by less than eps:
  # the fixed number of steps would otherwise let rounding drift it (8 ulps in float32
  # after 120 steps). One half step alone can be exactly 1 (at m == b for an integer b)
  # while later ones still carry the derivative in b.
  c = lambda v: _const(x, v)
  tiny = c(np.finfo(core.get_aval(x).dtype).tiny * 1e3)
  eps = c(np.finfo(core.get_aval(x).dtype).eps)

  def step(h, done, d, cc):
    delta = ew.mul(d, cc)
    return (ew.select(done, h, ew.mul(h, delta)),
            ew.lt(ew.abs(ew.sub(delta, c(1.0))), eps))

  def clamp_tiny(v):
    return ew.select(ew.lt(ew.abs(v), tiny),
                     _fill(v, np.finfo(core.get_aval(v).dtype).tiny * 1e3), v)

  qab, qap, qam = ew.add(a, b), ew.add(a, c(1.0)), ew.sub(a, c(1.0))
  cc = _fill(x, 1.0)
  d = clamp_tiny(ew.sub(c(1.0), ew.div(ew.mul(qab, x), qap)))
  d = ew.div(c(1.0), d)
  h = d

  def body(m, carry):
    cc, d, h, done = carry
    m = ew.convert_element_type(m, core.get_aval(x).dtype)
    m2 = ew.mul(c(2.0), m)
    aa = ew.div(ew.mul(ew.mul(m, ew.sub(b, m)), x),
                ew.mul(ew.add(qam, m2), ew.add(a, m2)))
    d = ew.div(c(1.0), clamp_tiny(ew.add(c(1.0), ew.mul(aa, d))))
    cc = clamp_tiny(ew.add(c(1.0), ew.div(aa, cc)))
    h, small = step(h, done, d, cc)
    aa = ew.neg(ew.div(ew.mul(ew.mul(ew.add(a, m), ew.add(qab, m)), x),
                       ew.mul(ew.add(a, m2), ew.add(qap, m2))))
    d = ew.div(c(1.0), clamp_tiny(ew.add(c(1.0), ew.mul(aa, d))))
    cc = clamp_tiny(ew.add(c(1.0), ew.div(aa, cc)))
    h, small_too = step(h, done, d, cc)
    return cc, d, h, _or(done, ew.bitwise_and(small, small_too))

  done = ew.lt(x, c(-np.inf))  # all False, in x's shape
  _, _, h, _ = cf.fori_loop(1, iters + 1, body, (cc, d, h, done))
  return h


def betainc(a, b, x):
  """The regularized incomplete beta function ``I_x(a, b)``, by its continued fraction
  (Lentz's method, a fixed number of terms) on whichever of ``x`` and ``1 - x`` makes it
  converge fast. Its edges are JAX's: ``a == 0`` (or ``b == inf``) puts all the mass at
  0 and ``b == 0`` (or ``a == inf``) at 1; NaN for ``a < 0``, ``b < 0``, ``a == b == 0``,
  a NaN input and ``x`` outside ``[0, 1]``."""
  a, b, x = _same_float(a, b, x, keep_weak=True)
  c = lambda v: _const(x, v)
  iters = 300 if core.get_aval(x).dtype == np.float64 else 120
  swap = ew.gt(x, ew.div(ew.add(a, c(1.0)), ew.add(ew.add(a, b), c(2.0))))
  aa, bb = ew.select(swap, b, a), ew.select(swap, a, b)
  xx = ew.select(swap, ew.sub(c(1.0), x), x)
  # keep the unused branch's arguments harmless, so its NaNs cannot leak into gradients
  safe_x = ew.clamp(c(0.0), xx, c(1.0))
  log_front = ew.sub(ew.add(ew.mul(aa, ew.log(safe_x)), ew.mul(bb, ew.log1p(ew.neg(safe_x)))),
                     ew.add(ew.sub(ew.add(lgamma(aa), lgamma(bb)),
                                   lgamma(ew.add(aa, bb))), ew.log(aa)))
  val = ew.mul(ew.exp(log_front), _betainc_cf(aa, bb, safe_x, iters))
  out = ew.select(swap, ew.sub(c(1.0), val), val)
  x_zero, x_one = ew.eq(x, c(0.0)), ew.eq(x, c(1.0))
  mass_at_0 = ew.bitwise_or(ew.eq(a, c(0.0)), ew.eq(b, c(np.inf)))
  mass_at_1 = ew.bitwise_or(ew.eq(b, c(0.0)), ew.eq(a, c(np.inf)))
  zero = _or(x_zero, ew.bitwise_and(mass_at_1, ew.bitwise_not(x_one)))
  one = _or(x_one, ew.bitwise_and(mass_at_0, ew.bitwise_not(x_zero)))
  out = ew.select(zero, _fill(out, 0.0), ew.select(one, _fill(out, 1.0), out))
  bad = _or(ew.lt(a, c(0.0)), ew.lt(b, c(0.0)), ew.lt(x, c(0.0)), ew.gt(x, c(1.0)),
            ew.bitwise_and(mass_at_0, mass_at_1), _is_nan(a), _is_nan(b), _is_nan(x))
  out = ew.select(bad, _fill(out, np.nan), out)
  # the loop's float counter is strongly typed; the answer is as weak as the inputs
  aval = core.get_aval(x)
  return ew._convert_element_type(out, aval.dtype, getattr(aval, "weak_type", False))


# -- gamma sampling, differentiated through igamma_grad_a
def random_gamma_grad(a, x):
  """``d x / d a`` for a Gamma(``a``, 1) sample ``x`` (implicit reparameterization:
  ``-(dP(a, x)/da) / p(x)`` with ``P`` the regularized lower incomplete gamma)."""
  a, x = _same_float(a, x)
  log_pdf = ew.sub(ew.sub(ew.mul(ew.sub(a, _const(a, 1.0)), ew.log(x)), x), lgamma(a))
  return ew.neg(ew.div(igamma_grad_a(a, x), ew.exp(log_pdf)))


# As in JAX, gamma sampling is one primitive: one equation in a jaxpr, batched by moving
# the batch axes in front, differentiable in ``a`` by implicit reparameterization. Every
# tier runs jax.random's rejection sampler (``random._gamma_impl``) vectorised over the
# elements (a masked while loop), which gives the same numbers as sampling them one at a
# time; the backends register it.
random_gamma_p = core.Primitive("random_gamma")


@random_gamma_p.def_abstract_eval
def _random_gamma_abstract_eval(key, a, *, log_space):
  if key.dtype != np.uint32 or key.shape[-1:] != (2,) or \
      a.shape[:key.ndim - 1] != key.shape[:-1]:
    raise TypeError(f"random_gamma takes uint32 keys (*batch, 2) and alphas (*batch, ...), "
                    f"got {key.str_short()} and {a.str_short()}.")
  return a.strip_weak_type()


def _random_gamma_grad(sample, a, *, log_space):
  """d sample / d a, by implicit reparameterization (``random_gamma_grad``)."""
  if not log_space:
    return random_gamma_grad(a, sample)
  # d log(x) = dx / x; exp(log x) may round to 0, which is replaced by the smallest normal
  x = ew.exp(sample)
  x = ew.select(ew.eq(x, _const(x, 0)),
                _fill(x, dtypes.finfo(core.get_aval(x).dtype).tiny), x)
  return ew.div(random_gamma_grad(a, x), x)


def _random_gamma_batcher(vals, dims, *, log_space):
  size = batching.batch_size(vals, dims)
  key, a = (batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims))
  return random_gamma_p.bind(key, a, log_space=log_space), 0


ad.defjvp2(random_gamma_p, None, lambda g, ans, key, a, *, log_space: ew.mul(
    g, _random_gamma_grad(ans, a, log_space=log_space)))
batching.batching_rules[random_gamma_p] = _random_gamma_batcher
