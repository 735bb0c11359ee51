"""The differentiation API: jvp, linearize, vjp, grad, value_and_grad.

Argument handling only (argnums, has_aux, pytrees, checks with JAX's messages); the
transformations themselves live in ``transforms/ad.py``.
"""
from __future__ import annotations

import functools

import numpy as np

from jaxlite._src import api_util
from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src import tree
from jaxlite._src.array import Array
from jaxlite._src.core import ShapedArray
from jaxlite._src.lax import extra as lax_extra
from jaxlite._src.lax.custom_derivatives import stop_gradient
from jaxlite._src.numpy.util import as_operand
from jaxlite._src.transforms import ad


def _tree_of_operands(x):
  return tree.tree_map(as_operand, x)


def jvp(fun, primals, tangents, has_aux=False):
  """Forward-mode derivative: ``(fun(*primals), J(primals) @ tangents)``.

  Parameters
  ----------
  fun : callable
    Function of pytrees of arrays.
  primals, tangents : tuple or list
    Positional arguments and matching tangents (same structure, shapes and dtypes).
  """
  if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
    raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                    f"{type(primals).__name__} and {type(tangents).__name__}.")
  if tree.tree_structure(primals) != tree.tree_structure(tangents):
    raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                    f"structure; primals have tree structure {tree.tree_structure(primals)} "
                    f"whereas tangents have tree structure {tree.tree_structure(tangents)}.")
  p_leaves, p_tree = tree.tree_flatten(tuple(primals))
  t_leaves = tree.tree_leaves(tuple(tangents))
  p_leaves = [as_operand(p) for p in p_leaves]
  t_leaves = [as_operand(t) if not (isinstance(t, np.ndarray) and t.dtype == dtypes.float0)
              else t for t in t_leaves]
  for p, t in zip(p_leaves, t_leaves):
    expected = ad.tangent_aval(core.get_aval(p))
    if np.dtype(t.dtype) != expected.dtype:
      raise TypeError(
          "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in "
          "case of int/bool primal dtype the tangent dtype must be float0. Got primal dtype "
          f"{core.get_aval(p).dtype.name} and so expected tangent dtype "
          f"{expected.dtype.name}, but got tangent dtype {np.dtype(t.dtype).name} instead.")
    if tuple(np.shape(t)) != expected.shape:
      raise ValueError(f"jvp called with different primal and tangent shapes: primal "
                       f"{core.get_aval(p).str_short()}, tangent shape {np.shape(t)}.")
  flat_fun, out_tree = api_util.flatten_fun(fun, p_tree, with_kwargs=False)
  out_p, out_t = ad.jvp_flat(flat_fun, p_leaves, t_leaves)
  out_tree = out_tree()
  primals_out = tree.tree_unflatten(out_tree, out_p)
  tangents_out = tree.tree_unflatten(out_tree, out_t)
  if has_aux:
    (primal, aux), (tangent, _) = primals_out, tangents_out
    return primal, tangent, aux
  return primals_out, tangents_out


def _split_aux(out, has_aux, name):
  if not has_aux:
    return out, None
  if not (isinstance(out, (tuple, list)) and len(out) == 2):
    raise TypeError(f"{name} with has_aux=True requires the function to return a pair "
                    f"(output, auxiliary data), got {type(out).__name__}.")
  return out[0], out[1]


def _primal_aux(aux):
  # Aux data was computed inside the (now finished) linearize trace: hand back its
  # primal values, as JAX does, rather than tracers of a trace that no longer exists.
  return tree.tree_map(lambda a: a.primal if isinstance(a, ad.JVPTracer)
                       and not a._trace.is_valid else a, aux)


def linearize(fun, *primals, has_aux=False):
  """Evaluate ``fun`` and return its JVP as a linear function of the tangents.

  Returns ``(primals_out, f_jvp)`` (and ``aux`` if ``has_aux``); ``f_jvp`` is backed by a
  jaxpr that ``make_jaxpr`` can show.
  """
  p_leaves, p_tree, out_p, linear, out_tree, aux = _linearize(fun, primals, has_aux,
                                                               "linearize")

  def f_jvp(*tangents):
    t_leaves, t_tree = tree.tree_flatten(tangents)
    if t_tree != p_tree:
      raise TypeError(f"linearized function called on tangent values inconsistent with the "
                      f"original primal values: expected structure {p_tree}, got {t_tree}.")
    outs = core.eval_jaxpr(linear.jaxpr, linear.consts, *t_leaves)
    return tree.tree_unflatten(out_tree, outs)

  result = tree.tree_unflatten(out_tree, out_p), f_jvp
  return result + (aux,) if has_aux else result


def _linearize(fun, primals, has_aux, name):
  """Flatten ``primals``, linearize ``fun`` there; the shared first half of linearize / vjp."""
  p_leaves, p_tree = tree.tree_flatten(tuple(primals))
  p_leaves = [as_operand(p) for p in p_leaves]
  aux_box = []

  def fun_main(*args):
    out, aux = _split_aux(fun(*args), has_aux, name)
    aux_box.append(aux)
    return out
  flat_fun, out_tree = api_util.flatten_fun(fun_main, p_tree, with_kwargs=False)
  out_p, linear = ad.linearize_flat(flat_fun, p_leaves)
  aux = _primal_aux(aux_box[0]) if has_aux else None
  return p_leaves, p_tree, out_p, linear, out_tree(), aux


def vjp(fun, *primals, has_aux=False):
  """Evaluate ``fun`` and return the function mapping output cotangents to input ones.

  Returns ``(primals_out, f_vjp)`` (and ``aux`` if ``has_aux``); ``f_vjp(ct)`` returns a
  tuple with one cotangent per positional primal.
  """
  p_leaves, p_tree, out_p, linear, out_tree, aux = _linearize(fun, primals, has_aux, "vjp")
  p_avals = [core.get_aval(p) for p in p_leaves]
  out_avals = [core.get_aval(o) for o in out_p]

  def f_vjp(cotangent):
    ct_leaves, ct_tree = tree.tree_flatten(cotangent)
    if ct_tree != out_tree:
      raise ValueError(f"unexpected tree structure.\n\nThe argument to a VJP function "
                       f"returned by `jax.vjp` must match the pytree structure of the "
                       f"differentiated function's output {out_tree}, but got {ct_tree}.")
    for ct, aval in zip(ct_leaves, out_avals):
      _check_cotangent(ct, aval)
    cts = ad.backward_pass(linear.jaxpr, linear.consts,
                           [ad.UndefinedPrimal(v.aval) for v in linear.jaxpr.invars],
                           [as_operand(c) if not _is_float0(c) else ad.Zero(a)
                            for c, a in zip(ct_leaves, out_avals)])
    cts = [_materialize(ct, aval) for ct, aval in zip(cts, p_avals)]
    return tree.tree_unflatten(p_tree, cts)

  result = tree.tree_unflatten(out_tree, out_p), f_vjp
  return result + (aux,) if has_aux else result


def _check_cotangent(ct, aval):
  """A cotangent must have its output's shape and tangent dtype (any dtype where that is
  float0, as JAX allows), else ValueError as in JAX."""
  expected = ad.tangent_aval(aval)
  dtype = ct.dtype if _is_float0(ct) else core.get_aval(as_operand(ct)).dtype
  if tuple(np.shape(ct)) != expected.shape or (
      expected.dtype != dtypes.float0 and dtype != expected.dtype):
    got = ShapedArray(tuple(np.shape(ct)), dtype).str_short()
    raise ValueError(f"unexpected JAX type (e.g. shape/dtype) for argument to VJP function: "
                     f"got {got}, but expected {expected.str_short()} because the "
                     f"corresponding output of the differentiated function had JAX type "
                     f"{aval.str_short()}")


def _is_float0(x):
  return isinstance(x, np.ndarray) and x.dtype == dtypes.float0


def _materialize(ct, aval):
  if not dtypes.is_inexact(aval.dtype):
    return np.zeros(aval.shape, dtypes.float0)
  return ad.instantiate(ct) if type(ct) is ad.Zero else ct


def _check_input_dtype(x, holomorphic, allow_int, name):
  dtype = core.get_aval(x).dtype
  if holomorphic:
    if not dtypes.is_complex(dtype):
      raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                      f"but got {dtype.name}.")
  elif not dtypes.is_inexact(dtype) and not allow_int:
    raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is a "
                    f"sub-dtype of np.inexact), but got {dtype.name}. If you want to use "
                    "Boolean- or integer-valued inputs, use vjp or set allow_int to True.")


def _check_scalar_output(out, name, has_aux, holomorphic=False):
  try:
    aval = core.get_aval(out)
  except TypeError:
    aval = None
  if aval is None or aval.shape:
    if aval is not None:
      detail = f"Output had shape: {aval.shape}."
    elif isinstance(out, (tuple, list)):
      kinds = ", ".join(_describe_leaf(o) for o in out)
      detail = f"Output was a {type(out).__name__} of {len(out)} values: ({kinds})."
    else:
      detail = f"Output was {out!r}."
    hint = ("" if has_aux or not isinstance(out, (tuple, list)) else
            " If the function returns (loss, auxiliary data), use has_aux=True.")
    raise TypeError(f"Gradient only defined for scalar-output functions. {detail}{hint}")
  if holomorphic and not dtypes.is_complex(aval.dtype):
    raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, but "
                    f"got {aval.dtype.name}.")
  if not holomorphic and not dtypes.is_floating(aval.dtype):
    advice = (" For holomorphic differentiation, pass holomorphic=True. For differentiating "
              "non-holomorphic functions involving complex outputs, use jax.vjp directly."
              if dtypes.is_complex(aval.dtype) else "")
    raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype "
                    f"of np.floating), but got {aval.dtype.name}.{advice}")


def _describe_leaf(x):
  try:
    return core.get_aval(x).str_short()
  except TypeError:
    return type(x).__name__


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
  """A function returning ``(fun(*args), grad of fun w.r.t. args[argnums])``.

  ``fun`` must return a scalar (or ``(scalar, aux)`` with ``has_aux=True``, in which case
  the result is ``((value, aux), grad)``).
  """
  name = "value_and_grad"

  @functools.wraps(fun)
  def value_and_grad_f(*args, **kwargs):
    nums = api_util.diff_argnums(argnums, len(args), fun)
    diff_args = tuple(args[i] for i in nums)
    for leaf in tree.tree_leaves(diff_args):
      _check_input_dtype(leaf, holomorphic, allow_int, "grad")

    def partial_fun(*dargs):
      full = list(args)
      for i, a in zip(nums, dargs):
        full[i] = a
      out = fun(*full, **kwargs)
      value, aux = _split_aux(out, has_aux, "grad")
      _check_scalar_output(value, "grad", has_aux, holomorphic)
      return (value, aux) if has_aux else value

    if has_aux:
      value, f_vjp, aux = vjp(partial_fun, *diff_args, has_aux=True)
    else:
      value, f_vjp = vjp(partial_fun, *diff_args)
    # the seed keeps the output's weak type, as JAX's full_like(value, 1) does
    out_aval = core.get_aval(value)
    one = Array(np.ones((), out_aval.dtype), out_aval.weak_type)
    grads = f_vjp(one)
    g = grads[0] if isinstance(argnums, int) else tuple(grads)
    return ((value, aux), g) if has_aux else (value, g)

  return value_and_grad_f


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
  """The gradient of scalar-valued ``fun`` with respect to ``args[argnums]``.

  Parameters
  ----------
  fun : callable
    Returns a scalar float (or ``(scalar, aux)`` with ``has_aux=True``).
  argnums : int or tuple of int
    Which positional arguments to differentiate; a tuple gives a tuple of gradients.
  has_aux : bool
    Whether ``fun`` returns auxiliary data; the result is then ``(grad, aux)``.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.grad(lambda x: jnp.sum(x ** 2))(jnp.asarray([1., 2., 3., 4.]))
  Array([2., 4., 6., 8.], dtype=float32)
  """
  value_and_grad_f = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

  @functools.wraps(fun)
  def grad_f(*args, **kwargs):
    if has_aux:
      (_, aux), g = value_and_grad_f(*args, **kwargs)
      return g, aux
    return value_and_grad_f(*args, **kwargs)[1]

  return grad_f


# -- implicit differentiation (``jax.lax.custom_root``: a lax function that needs jvp)

def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
  """``solve(f, initial_guess)``, a root of ``f``, differentiated implicitly: the
  derivative with respect to anything ``f`` closes over is ``-J^-1 df``, with ``J`` the
  Jacobian of ``f`` at the root applied through ``tangent_solve(g, y)`` (which solves the
  linear ``g(x) = y``). ``solve`` itself is never differentiated."""
  found = solve(f, initial_guess)
  root, aux = found if has_aux else (found, None)
  root = stop_gradient(root)
  residual = f(root)
  lin = lambda v: jvp(f, (root,), (v,))[1]
  step = tangent_solve(lin, residual)
  # value: exactly root; derivative: -(J^-1 d residual), since d root is cut off above
  correction = lax_extra._tree_sub(step, stop_gradient(step))
  out = lax_extra._tree_sub(root, correction)
  return (out, aux) if has_aux else out
