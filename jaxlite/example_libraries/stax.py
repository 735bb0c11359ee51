"""A tiny neural-network library in the style of ``jax.example_libraries.stax``.

A layer is a pair ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape)`` returns
``(output_shape, params)`` and ``apply_fun(params, inputs, **kwargs)`` the outputs.
Shapes may use -1 for the batch size. Combinators (``serial``, ``parallel``) build
layers from layers.

Examples
--------
>>> import jaxlite as jax, jaxlite.numpy as jnp
>>> from jaxlite.example_libraries import stax
>>> init_fun, apply_fun = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(2))
>>> out_shape, params = init_fun(jax.random.PRNGKey(0), (-1, 4))
>>> out_shape, apply_fun(params, jnp.ones((3, 4))).shape
((-1, 2), (3, 2))
"""
from __future__ import annotations

import functools
import math

import jaxlite.numpy as jnp
from jaxlite._src.libraries import random
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.libraries.nn import functions as nn
from jaxlite._src.libraries.nn.initializers import glorot_normal, normal, ones, zeros


# -- layers with parameters

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
  """A fully connected layer ``inputs @ W + b``."""
  def init_fun(rng, input_shape):
    output_shape = input_shape[:-1] + (out_dim,)
    k1, k2 = random.split(rng)
    return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

  def apply_fun(params, inputs, **kwargs):
    W, b = params
    return jnp.dot(inputs, W) + b
  return init_fun, apply_fun


def _conv_output_shape(lhs_shape, rhs_shape, strides, padding, dimension_numbers):
  # Worked out here rather than by tracing, so that a -1 batch size passes through.
  from jaxlite._src.lax.convolution import padtype_to_pads
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  lhs_spatial = [i for i, c in enumerate(lhs_spec) if c not in "NC"]
  rhs_spatial = [i for i, c in enumerate(rhs_spec) if c not in "OI"]
  in_sizes = [lhs_shape[i] for i in lhs_spatial]
  k_sizes = [rhs_shape[i] for i in rhs_spatial]
  pads = padtype_to_pads(in_sizes, k_sizes, strides, padding) if isinstance(padding, str) \
      else padding
  spatial = iter((n + lo + hi - k) // s + 1
                 for n, k, s, (lo, hi) in zip(in_sizes, k_sizes, strides, pads))
  sizes = {"N": lhs_shape[lhs_spec.index("N")], "C": rhs_shape[rhs_spec.index("O")]}
  return tuple(sizes[c] if c in "NC" else next(spatial) for c in out_spec)


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
  """A convolution with the given ``(lhs, rhs, out)`` layout specs, e.g. NHWC/HWIO/NHWC."""
  from jaxlite._src.lax.convolution import conv_general_dilated
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  one = (1,) * len(filter_shape)
  strides = strides or one
  W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

  def init_fun(rng, input_shape):
    filter_iter = iter(filter_shape)
    kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                    else next(filter_iter) for c in rhs_spec]
    output_shape = _conv_output_shape(input_shape, kernel_shape, strides, padding,
                                      dimension_numbers)
    bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
    k1, k2 = random.split(rng)
    return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

  def apply_fun(params, inputs, **kwargs):
    W, b = params
    return conv_general_dilated(inputs, W, strides, padding, one, one,
                                dimension_numbers=dimension_numbers) + b
  return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
  """Normalise over ``axis`` with the batch's statistics, then scale and shift."""
  axis = (axis,) if jnp.isscalar(axis) else tuple(axis)

  def init_fun(rng, input_shape):
    shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
    k1, k2 = random.split(rng)
    beta = beta_init(k1, shape) if center else ()
    gamma = gamma_init(k2, shape) if scale else ()
    return input_shape, (beta, gamma)

  def apply_fun(params, x, **kwargs):
    beta, gamma = params
    ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
    z = nn.standardize(x, axis, epsilon=epsilon)
    if center and scale:
      return gamma[ed] * z + beta[ed]
    if center:
      return z + beta[ed]
    if scale:
      return gamma[ed] * z
    return z
  return init_fun, apply_fun


# -- parameter-free layers

def elementwise(fun, **fun_kwargs):
  """A layer applying ``fun(inputs, **fun_kwargs)``."""
  init_fun = lambda rng, input_shape: (input_shape, ())
  apply_fun = lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)
  return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(nn.relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(nn.log_softmax, axis=-1)
Softmax = elementwise(nn.softmax, axis=-1)
Softplus = elementwise(nn.softplus)
Sigmoid = elementwise(nn.sigmoid)
Elu = elementwise(nn.elu)
LeakyRelu = elementwise(nn.leaky_relu)
Selu = elementwise(nn.selu)
Gelu = elementwise(nn.gelu)


def _pooling_layer(reducer, init_val, rescaler=None):
  def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
    from jaxlite._src.lax.convolution import padtype_to_pads
    from jaxlite._src.lax.windowed import reduce_window
    strides = strides or (1,) * len(window_shape)
    rescale = rescaler(window_shape, strides, padding) if rescaler else None
    non_spatial = (0, len(window_shape) + 1) if spec is None else (
        spec.index("N"), spec.index("C"))
    dims, strd = tuple(window_shape), tuple(strides)
    for i in sorted(non_spatial):
      dims, strd = dims[:i] + (1,) + dims[i:], strd[:i] + (1,) + strd[i:]

    def init_fun(rng, input_shape):
      pads = padtype_to_pads(input_shape, dims, strd, padding)
      out = tuple(n if n == -1 else (n + lo + hi - k) // s + 1
                  for n, k, s, (lo, hi) in zip(input_shape, dims, strd, pads))
      return out, ()

    def apply_fun(params, inputs, **kwargs):
      out = reduce_window(inputs, init_val, reducer, dims, strd, padding)
      return rescale(out, inputs, spec) if rescale else out
    return init_fun, apply_fun
  return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.)


def _normalize_by_window_size(dims, strides, padding):
  def rescale(outputs, inputs, spec):
    from jaxlite._src.lax.windowed import reduce_window
    non_spatial = (0, inputs.ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))
    spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim) if i not in non_spatial)
    # each output divided by the number of real (unpadded) inputs in its window
    sizes = reduce_window(jnp.ones(spatial_shape, inputs.dtype), 0., lax.add, dims, strides,
                          padding)
    for i in sorted(non_spatial):
      sizes = jnp.expand_dims(sizes, i)
    return outputs / sizes
  return rescale


AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)


def Flatten():
  """Flatten all but the leading (batch) dimension."""
  def init_fun(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()

  def apply_fun(params, inputs, **kwargs):
    return jnp.reshape(inputs, (inputs.shape[0], -1))
  return init_fun, apply_fun


Flatten = Flatten()


def Identity():
  """The identity layer."""
  return (lambda rng, input_shape: (input_shape, ()),
          lambda params, inputs, **kwargs: inputs)


Identity = Identity()


def FanOut(num):
  """Copy the input ``num`` times (into a list, for ``parallel``)."""
  return (lambda rng, input_shape: ([input_shape] * num, ()),
          lambda params, inputs, **kwargs: [inputs] * num)


def FanInSum():
  """Sum a list of inputs."""
  return (lambda rng, input_shape: (input_shape[0], ()),
          lambda params, inputs, **kwargs: sum(inputs))


FanInSum = FanInSum()


def FanInConcat(axis=-1):
  """Concatenate a list of inputs along ``axis``."""
  def init_fun(rng, input_shape):
    ax = axis % len(input_shape[0])
    size = sum(shape[ax] for shape in input_shape)
    return input_shape[0][:ax] + (size,) + input_shape[0][ax + 1:], ()

  def apply_fun(params, inputs, **kwargs):
    return jnp.concatenate(inputs, axis)
  return init_fun, apply_fun


def Dropout(rate, mode="train"):
  """Keep each input with probability ``rate`` (scaled by ``1 / rate``) in train mode.

  As in JAX's stax, ``rate`` is the probability of *keeping* a unit, and the apply
  function needs an ``rng`` keyword argument.
  """
  def init_fun(rng, input_shape):
    return input_shape, ()

  def apply_fun(params, inputs, **kwargs):
    rng = kwargs.get("rng", None)
    if rng is None:
      raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                       "argument. That is, instead of `apply_fun(params, inputs)`, call "
                       "it like `apply_fun(params, inputs, rng)` where `rng` is a PRNG "
                       "key (e.g. from `jax.random.key`).")
    if mode == "train":
      keep = random.bernoulli(rng, rate, inputs.shape)
      return jnp.where(keep, inputs / rate, 0)
    return inputs
  return init_fun, apply_fun


# -- combinators

def serial(*layers):
  """Compose layers in sequence; an ``rng`` keyword is split among them."""
  nlayers = len(layers)
  init_funs, apply_funs = zip(*layers)

  def init_fun(rng, input_shape):
    params = []
    for init in init_funs:
      rng, layer_rng = random.split(rng)
      input_shape, param = init(layer_rng, input_shape)
      params.append(param)
    return input_shape, params

  def apply_fun(params, inputs, **kwargs):
    rng = kwargs.pop("rng", None)
    rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
    for fun, param, r in zip(apply_funs, params, rngs):
      inputs = fun(param, inputs, rng=r, **kwargs)
    return inputs
  return init_fun, apply_fun


def parallel(*layers):
  """Apply layers side by side to a list of inputs (one input per layer)."""
  nlayers = len(layers)
  init_funs, apply_funs = zip(*layers)

  def init_fun(rng, input_shape):
    rngs = random.split(rng, nlayers)
    return tuple(zip(*[init(r, shape) for init, r, shape
                       in zip(init_funs, rngs, input_shape)]))

  def apply_fun(params, inputs, **kwargs):
    rng = kwargs.pop("rng", None)
    rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
    return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
  return init_fun, apply_fun


def shape_dependent(make_layer):
  """A layer chosen from the input shape: ``make_layer(input_shape)`` gives the layer."""
  def init_fun(rng, input_shape):
    return make_layer(input_shape)[0](rng, input_shape)

  def apply_fun(params, inputs, **kwargs):
    return make_layer(inputs.shape)[1](params, inputs, **kwargs)
  return init_fun, apply_fun
