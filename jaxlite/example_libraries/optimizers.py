"""First-order optimizers in the style of ``jax.example_libraries.optimizers``.

An optimizer is a triple ``(init_fun, update_fun, get_params)``:

- ``init_fun(params)`` makes an ``OptimizerState`` for a pytree of parameters;
- ``update_fun(step, grads, opt_state)`` applies one step and returns the new state;
- ``get_params(opt_state)`` gives back the parameters.

Each optimizer is written for one array (``init``, ``update``, ``get_params`` on an
array's state) and lifted to pytrees by the ``optimizer`` decorator, so states are
pytrees too and pass through ``jit``.

Examples
--------
>>> import jaxlite as jax, jaxlite.numpy as jnp
>>> from jaxlite.example_libraries import optimizers
>>> opt_init, opt_update, get_params = optimizers.sgd(0.1)
>>> state = opt_init(jnp.array(1.0))
>>> state = opt_update(0, jax.grad(lambda x: x ** 2)(get_params(state)), state)
>>> round(float(get_params(state)), 6)
0.8
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Callable, NamedTuple

import jaxlite.numpy as jnp
from jaxlite._src.base import tree as tree_util
from jaxlite._src.base.tree import tree_flatten, tree_unflatten, tree_map, tree_leaves

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
# The state's arrays are its leaves; the tree structures ride along as static data.
tree_util.register_pytree_node(
    OptimizerState,
    lambda xs: ((xs.packed_state,), (xs.tree_def, xs.subtree_defs)),
    lambda data, xs: OptimizerState(xs[0], data[0], data[1]))


class Optimizer(NamedTuple):
  init_fn: Callable
  update_fn: Callable
  params_fn: Callable


Schedule = Callable[[int], float]


def optimizer(opt_maker):
  """Lift an optimizer written for one array to pytrees of arrays.

  ``opt_maker(*args)`` returns ``(init, update, get_params)`` on single arrays, where a
  state may be any pytree; the result returns the same triple on pytrees of parameters.
  """
  @functools.wraps(opt_maker)
  def tree_opt_maker(*args, **kwargs):
    init, update, get_params = opt_maker(*args, **kwargs)

    @functools.wraps(init)
    def tree_init(x0_tree):
      x0_flat, tree = tree_flatten(x0_tree)
      flat = [tree_flatten(init(x0)) for x0 in x0_flat]
      return OptimizerState([f[0] for f in flat], tree, [f[1] for f in flat])

    @functools.wraps(update)
    def tree_update(i, grad_tree, opt_state):
      states_flat, tree, subtrees = opt_state
      grad_flat, tree2 = tree_flatten(grad_tree)
      if tree2 != tree:
        raise TypeError("optimizer update function was passed a gradient tree that did "
                        "not match the parameter tree structure with which it was "
                        f"initialized: parameter tree {tree} and grad tree {tree2}.")
      states = map(tree_unflatten, subtrees, states_flat)
      new = [tree_flatten(update(i, g, s)) for g, s in zip(grad_flat, states)]
      for subtree, (_, subtree2) in zip(subtrees, new):
        if subtree2 != subtree:
          raise TypeError("optimizer update function produced an output structure that "
                          "did not match its input structure: input "
                          f"{subtree} and output {subtree2}.")
      return OptimizerState([n[0] for n in new], tree, subtrees)

    @functools.wraps(get_params)
    def tree_get_params(opt_state):
      states_flat, tree, subtrees = opt_state
      states = map(tree_unflatten, subtrees, states_flat)
      return tree_unflatten(tree, [get_params(s) for s in states])

    return Optimizer(tree_init, tree_update, tree_get_params)
  return tree_opt_maker


# -- optimizers on one array

@optimizer
def sgd(step_size):
  """Stochastic gradient descent: ``x - step_size(i) * g``."""
  step_size = make_schedule(step_size)
  return (lambda x0: x0,
          lambda i, g, x: x - step_size(i) * g,
          lambda x: x)


@optimizer
def momentum(step_size, mass):
  """Gradient descent with momentum: ``v = mass * v + g; x -= step_size(i) * v``."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0)

  def update(i, g, state):
    x, velocity = state
    velocity = mass * velocity + g
    return x - step_size(i) * velocity, velocity
  return init, update, lambda state: state[0]


@optimizer
def nesterov(step_size, mass):
  """Nesterov's accelerated gradient: steps along ``mass * v + g``."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0)

  def update(i, g, state):
    x, velocity = state
    velocity = mass * velocity + g
    return x - step_size(i) * (mass * velocity + g), velocity
  return init, update, lambda state: state[0]


@optimizer
def adagrad(step_size, momentum=0.9):
  """Adagrad (Duchi et al. 2011) with momentum on the rescaled gradient."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

  def update(i, g, state):
    x, g_sq, m = state
    g_sq = g_sq + jnp.square(g)
    g_sq_inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
    m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
    return x - step_size(i) * m, g_sq, m
  return init, update, lambda state: state[0]


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
  """RMSProp: divide the step by a running root mean square of the gradients."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0)

  def update(i, g, state):
    x, avg_sq_grad = state
    avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
    return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad
  return init, update, lambda state: state[0]


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
  """RMSProp with momentum on the rescaled step."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

  def update(i, g, state):
    x, avg_sq_grad, mom = state
    avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
    mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
    return x - mom, avg_sq_grad, mom
  return init, update, lambda state: state[0]


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
  """Adam (Kingma and Ba 2014): bias-corrected first and second moment estimates."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

  def update(i, g, state):
    x, m, v = state
    m = (1 - b1) * g + b1 * m
    v = (1 - b2) * jnp.square(g) + b2 * v
    mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
    vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
    return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v
  return init, update, lambda state: state[0]


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
  """AdaMax: Adam with the infinity norm in place of the second moment."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

  def update(i, g, state):
    x, m, u = state
    m = (1 - b1) * g + b1 * m
    u = jnp.maximum(b2 * u, jnp.abs(g))
    step = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
    return x - step * m / (u + eps), m, u
  return init, update, lambda state: state[0]


@optimizer
def sm3(step_size, momentum=0.9):
  """SM3 (Anil et al. 2019): memory-efficient adaptive steps, one accumulator per axis."""
  step_size = make_schedule(step_size)

  def along(ndim, v, axis):
    # v, a vector, as an array of rank ndim that varies only along axis
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return v.reshape(shape)

  def init(x0):
    x_shape = x0.shape
    x0 = jnp.atleast_1d(x0)
    vs = [jnp.zeros(d, dtype=x0.dtype) for d in x0.shape]
    return x0, jnp.zeros_like(x0), vs, _Static(x_shape)

  def update(i, g, state):
    x, m, vs, x_shape = state
    g = jnp.reshape(g, x.shape)
    accum = functools.reduce(jnp.minimum, [along(x.ndim, v, j) for j, v in enumerate(vs)])
    accum = accum + jnp.square(g)
    accum_inv_sqrt = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0.)
    m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
    x = x - step_size(i) * m
    vs = [jnp.max(accum, axis=tuple(a for a in range(x.ndim) if a != j))
          for j in range(x.ndim)]
    return x, m, vs, x_shape

  return init, update, lambda state: state[0].reshape(state[3].value)


class _Static:
  """A pytree node with no leaves, holding a value (a shape) as static data; JAX keeps
  sm3's shape as int leaves, which cannot pass through jit as shapes."""

  def __init__(self, value):
    self.value = value


tree_util.register_pytree_node(_Static, lambda s: ((), s.value), lambda v, _: _Static(v))


# -- learning-rate schedules: step number -> step size

def constant(step_size) -> Schedule:
  """A schedule that is always ``step_size``."""
  return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
  """``step_size * decay_rate ** (i / decay_steps)``."""
  return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
  """``step_size / (1 + decay_rate * i / decay_steps)`` (``floor``-ed with staircase)."""
  if staircase:
    return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
  return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
  """From ``step_size`` to ``final_step_size`` over ``decay_steps`` as ``(1 - t) ** power``."""
  def schedule(step_num):
    step_num = jnp.minimum(step_num, decay_steps)
    step_mult = (1 - step_num / decay_steps) ** power
    return step_mult * (step_size - final_step_size) + final_step_size
  return schedule


def piecewise_constant(boundaries, values) -> Schedule:
  """``values[k]`` for steps after ``boundaries[k-1]`` and up to ``boundaries[k]``."""
  boundaries, values = jnp.array(boundaries), jnp.array(values)
  if not boundaries.ndim == values.ndim == 1:
    raise ValueError("boundaries and values must be sequences")
  if not boundaries.shape[0] == values.shape[0] - 1:
    raise ValueError("boundaries length must be one shorter than values length")
  return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule) -> Schedule:
  """A schedule from a schedule (returned as is) or a scalar (a constant schedule)."""
  if callable(scalar_or_schedule):
    return scalar_or_schedule
  if jnp.ndim(scalar_or_schedule) == 0:
    return constant(scalar_or_schedule)
  raise TypeError(type(scalar_or_schedule))


# -- utilities

def l2_norm(tree):
  """The l2 norm of all the leaves of a pytree, taken together."""
  leaves = tree_leaves(tree)
  return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
  """Scale a gradient pytree down so that its l2 norm is at most ``max_norm``."""
  norm = l2_norm(grad_tree)
  normalize = lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm))
  return tree_map(normalize, grad_tree)


class JoinPoint:
  """Marks where a subtree (one parameter's optimizer state) was spliced in."""

  def __init__(self, subtree):
    self.subtree = subtree

  def __iter__(self):  # to unpack as (packed_state, subtree_def), as JAX's
    yield self.subtree


def unpack_optimizer_state(opt_state):
  """An ``OptimizerState`` as a pytree of ``JoinPoint``s, e.g. to save it to disk."""
  states_flat, tree_def, subtree_defs = opt_state
  subtrees = map(tree_unflatten, subtree_defs, states_flat)
  return tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
  """The inverse of ``unpack_optimizer_state``."""
  sentinels, tree_def = tree_flatten(marked_pytree,
                                     is_leaf=lambda x: isinstance(x, JoinPoint))
  if not all(isinstance(s, JoinPoint) for s in sentinels):
    raise TypeError("pack_optimizer_state expects a pytree of JoinPoints")
  flat = [tree_flatten(s.subtree) for s in sentinels]
  return OptimizerState([f[0] for f in flat], tree_def, [f[1] for f in flat])
