"""The differentiation API: jvp, linearize, vjp, grad, value_and_grad, and the Jacobians
(jacfwd, jacrev, hessian: vmap of jvp and vjp).

Argument handling only (argnums, has_aux, pytrees, checks with JAX's messages); the
transformations themselves live in ``transforms/ad.py``.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from jaxlite._src.base import api_util
from jaxlite._src.core.state.types import Ref
from jaxlite._src.core import core
from jaxlite._src.core import literals
from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import ShapedArray
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import solves
from jaxlite._src.lax import ad_checkpoint as lax_ad_checkpoint
from jaxlite._src.lax import bits as lax_bits
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax.custom_derivatives import stop_gradient
from jaxlite._src.libraries.numpy.util import as_operand
from jaxlite._src.transforms import ad
from jaxlite._src.vmap_api import vmap
from jaxlite._src.base import traceback_util


def _tree_of_operands(x):
  return tree.tree_map(as_operand, x)


@traceback_util.api_boundary
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
  # the leaves stay as given (JAX returns an output that is an input unchanged); the
  # conversions only check that they are JAX values
  for p, t in zip(p_leaves, t_leaves):
    p_aval = core.get_aval(as_operand(p))
    t_dtype = t.dtype if ad.is_float0(t) else core.get_aval(as_operand(t)).dtype
    expected = ad.tangent_aval(p_aval)
    if np.dtype(t_dtype) != expected.dtype:
      raise TypeError(
          "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in "
          "case of int/bool primal dtype the tangent dtype must be float0. Got primal dtype "
          f"{p_aval.dtype.name} and so expected tangent dtype "
          f"{expected.dtype.name}, but got tangent dtype {np.dtype(t_dtype).name} instead.")
    if tuple(np.shape(t)) != expected.shape:
      raise ValueError(f"jvp called with different primal and tangent shapes: primal "
                       f"{p_aval.str_short()}, tangent shape {np.shape(t)}.")
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


@traceback_util.api_boundary
def linearize(fun, *primals, has_aux=False):
  """Evaluate ``fun`` and return its JVP as a linear function of the tangents.

  Returns ``(primals_out, f_jvp)`` (and ``aux`` if ``has_aux``); ``f_jvp`` is backed by a
  jaxpr that ``make_jaxpr`` can show.
  """
  p_leaves, p_tree, out_p, linear, out_tree, aux = _linearize(fun, primals, has_aux,
                                                               "linearize")
  # a pytree whose leaves are the residuals (as JAX's): jit and vmap can return it
  f_jvp = tree.Partial(functools.partial(_lift_linearized, linear.jaxpr, p_tree, out_tree),
                       list(linear.consts))
  result = tree.tree_unflatten(out_tree, out_p), f_jvp
  return result + (aux,) if has_aux else result


def _lift_linearized(jaxpr, p_tree, out_tree, consts, *tangents):
  """The function ``linearize`` returns, with its residuals ``consts`` bound."""
  t_leaves, t_tree = tree.tree_flatten(tangents)
  if t_tree != p_tree:
    raise TypeError(f"linearized function called on tangent values inconsistent with the "
                    f"original primal values: expected {p_tree}, got {t_tree}.")
  outs = core.eval_jaxpr(jaxpr, consts, *t_leaves)
  # a tangent known to be zero is a literal of the jaxpr: an Array, as JAX instantiates it
  outs = [as_operand(o) if type(o) in literals.typed_types else o for o in outs]
  return tree.tree_unflatten(out_tree, outs)


def _linearize(fun, primals, has_aux, name):
  """Flatten ``primals``, linearize ``fun`` there; the shared first half of linearize / vjp."""
  given, p_tree = tree.tree_flatten(tuple(primals))
  p_leaves = [_primal(p) for p in given]
  aux_box = []

  def fun_main(*args):
    out, aux = _split_aux(fun(*args), has_aux, name)
    aux_box.append(aux)
    return out
  flat_fun, out_tree = api_util.flatten_fun(fun_main, p_tree, with_kwargs=False)
  out_p, linear = ad.linearize_flat(flat_fun, p_leaves)
  # an output that is an input, unchanged, is the value given, as JAX returns it (a
  # Python float stays one; vjp's in the canonical dtype, as its bind gives it)
  as_given = {id(x): g if name == "linearize" else core.canonical_operand(g)
              for x, g in zip(p_leaves, given)}
  out_p = [as_given.get(id(o), o) for o in out_p]
  aux = _primal_aux(aux_box[0]) if has_aux else None
  return p_leaves, p_tree, out_p, linear, out_tree(), aux


def _primal(p):
  """An input to linearize: an array, except that integers and booleans stay as given
  (they have no tangent, so no tracer holds them: a function may hash one, as in JAX)."""
  x = as_operand(p)
  return x if dtypes.is_inexact(core.get_aval(x).dtype) else p


@traceback_util.api_boundary
def vjp(fun, *primals, has_aux=False, reduce_axes=()):
  """Evaluate ``fun`` and return the function mapping output cotangents to input ones.

  Returns ``(primals_out, f_vjp)`` (and ``aux`` if ``has_aux``); ``f_vjp(ct)`` returns a
  tuple with one cotangent per positional primal. ``reduce_axes`` is deprecated in JAX:
  only its default, ``()``, is accepted.
  """
  if reduce_axes:
    raise NotImplementedError("reduce_axes argument to vjp is deprecated")
  p_leaves, p_tree, out_p, linear, out_tree, aux = _linearize(fun, primals, has_aux, "vjp")
  p_avals = [core.get_aval(p) for p in p_leaves]
  out_avals = [core.get_aval(o) for o in out_p]
  f_vjp = VJP(functools.partial(_vjp_callable, linear.jaxpr, p_avals, out_avals,
                                api_util.fun_name(fun)),
              p_tree, out_tree, [], list(linear.consts))
  result = tree.tree_unflatten(out_tree, out_p), f_vjp
  return result + (aux,) if has_aux else result


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
  """The forward and backward passes of ``fun`` as two functions (``jax.fwd_and_bwd``).

  ``fwd(*args)`` gives ``(fun(*args), residuals)`` (with ``aux`` last when ``has_aux``),
  as ``vjp`` of ``fun`` in the arguments ``argnums`` does: ``residuals`` is its ``VJP``,
  a pytree, so it can leave a jit and enter another. ``bwd(residuals, cotangent)`` gives
  the cotangents of those arguments: a tuple, or one array when ``argnums`` is an int.
  With ``jitted`` (the default) both are jitted, so the backward pass compiles once
  however many forward passes feed it.
  """
  from jaxlite._src.jit import jit   # (jit sits beside this module, not below it)
  single = isinstance(argnums, (int, np.integer))
  try:
    nums = (int(argnums),) if single else tuple(operator.index(i) for i in argnums)
  except TypeError:
    raise TypeError(f"argnums must be an int or a sequence of ints, got {argnums!r}") from None

  def fwd(*args):
    for i in nums:
      if not -len(args) <= i < len(args):
        raise ValueError(f"argnums {argnums} out of range for {len(args)} positional "
                         "arguments")

    def of_chosen(*chosen):
      full = list(args)
      for i, value in zip(nums, chosen):
        full[i] = value
      return fun(*full)
    return vjp(of_chosen, *(args[i] for i in nums), has_aux=has_aux)

  def bwd(residuals, cotangent):
    cotangents = residuals(cotangent)
    return cotangents[0] if single else cotangents

  return (jit(fwd), jit(bwd)) if jitted else (fwd, bwd)


class VJP:
  """The function ``vjp`` returns: ``f_vjp(ct)`` gives one cotangent per primal.

  A pytree, as JAX's, whose leaves are the residuals (``args_res``, the primal arguments
  it keeps, and ``opaque_residuals``; jaxlite keeps them all in the latter), so that jit
  and vmap can return it.
  """
  __slots__ = ("fun", "in_tree", "out_tree", "args_res", "opaque_residuals")

  def __init__(self, fun, in_tree, out_tree, args_res, opaque_residuals):
    self.fun, self.in_tree, self.out_tree = fun, in_tree, out_tree
    self.args_res, self.opaque_residuals = args_res, opaque_residuals

  jaxpr = property(lambda self: self.fun.args[0])

  def __call__(self, out_ct, *extra_args):
    if extra_args:
      raise TypeError(_VJP_TOO_MANY_ARGS.format(self.fun.args[3], len(extra_args) + 1))
    return self.fun(self.in_tree, self.out_tree, self.args_res, self.opaque_residuals,
                    out_ct)

  def with_refs(self, *maybe_ct_refs):
    """The backward function, with each primal leaf's cotangent chosen by the leaf of
    ``maybe_ct_refs`` in its place: ``GradValue()`` returns it, ``DontWant()`` returns
    ``DidntWant()`` instead, and a ``Ref`` has it added to its value and returns
    ``GradRef()`` (``jax.vjp(...)[1].with_refs``). With no arguments, every leaf is a
    ``GradValue()``."""
    if maybe_ct_refs:
      wants, wants_tree = tree.tree_flatten(maybe_ct_refs)
      if wants_tree != self.in_tree:
        raise ValueError(f"with_refs: the cotangent choices' structure {wants_tree} does not "
                         f"match the primals' {self.in_tree}.")
    else:
      wants = [GradValue()] * self.in_tree.num_leaves
    return tree.Partial(functools.partial(_deliver_cotangents, self, tuple(wants)))

  def __repr__(self):
    return (f"VJP(fun={self.fun!r}, in_tree={self.in_tree!r}, out_tree={self.out_tree!r}, "
            f"args_res={self.args_res!r}, opaque_residuals={self.opaque_residuals!r})")


def _deliver_cotangents(f_vjp, wants, cotangent):
  cts, ct_tree = tree.tree_flatten(f_vjp(cotangent))
  out = []
  for ct, want in zip(cts, wants):
    if isinstance(want, DontWant):
      out.append(DidntWant())
    elif isinstance(want, Ref):
      want[...] = want[...] + ct
      out.append(GradRef())
    else:
      out.append(ct)
  return tree.tree_unflatten(ct_tree, out)


class _Marker:
  """A value of ``jax.ad`` that says, or reports, how an argument's cotangent is wanted."""
  __slots__ = ()

  def __eq__(self, other):
    return type(other) is type(self)

  def __hash__(self):
    return hash(type(self))

  def __repr__(self):
    return f"{type(self).__name__}()"


class GradValue(_Marker):
  """Return this argument's cotangent (the default of ``VJP.with_refs``)."""
  __slots__ = ()


class DontWant(_Marker):
  """No cotangent is wanted for this argument: ``DidntWant()`` stands in its place."""
  __slots__ = ()


class DidntWant(_Marker):
  """In place of a cotangent that ``DontWant()`` said was not wanted (an empty pytree)."""
  __slots__ = ()


class GradRef(_Marker):
  """In place of a cotangent that was added into a ``Ref`` (an empty pytree)."""
  __slots__ = ()


tree.register_pytree_node(DidntWant, lambda _: ((), ()), lambda _, __: DidntWant())
tree.register_pytree_node(GradRef, lambda _: ((), ()), lambda _, __: GradRef())


_VJP_TOO_MANY_ARGS = """
The function returned by `jax.vjp` applied to {} was called with {} arguments,
but functions returned by `jax.vjp` must be called with a single argument
corresponding to the single value returned by the function being differentiated
(even if that returned value is a tuple or other container).

For example, if we have:

  def f(x):
    return (x, x)
  _, f_vjp = jax.vjp(f, 1.0)

the function `f` returns a single tuple as output, and so we call `f_vjp` with a
single tuple as its argument:

  x_bar, = f_vjp((2.0, 2.0))

If we instead call `f_vjp(2.0, 2.0)`, with the values 'splatted out' as
arguments rather than in a tuple, this error can arise."""


tree.register_pytree_node(
    VJP, lambda v: ((v.args_res, v.opaque_residuals), (v.fun, v.in_tree, v.out_tree)),
    lambda meta, res: VJP(*meta, *res))


def _vjp_callable(jaxpr, p_avals, out_avals, name, p_tree, out_tree, args_res, consts,
                  cotangent):
  """The cotangents of ``jaxpr``'s inputs (a linearization with residuals ``consts``)."""
  ct_leaves, ct_tree = tree.tree_flatten(cotangent)
  if ct_tree != out_tree:
    raise ValueError(f"unexpected tree structure.\n\nThe argument to a VJP function "
                     f"returned by `jax.vjp` must match the pytree structure of the "
                     f"differentiated function's output {out_tree}, but got {ct_tree}.")
  for ct, aval in zip(ct_leaves, out_avals):
    _check_cotangent(ct, aval)
  converted = [as_operand(c) if not ad.is_float0(c) else ad.Zero(a)
               for c, a in zip(ct_leaves, out_avals)]
  cts = ad.backward_pass(jaxpr, consts, [ad.UndefinedPrimal(v.aval) for v in jaxpr.invars],
                         converted)
  # a cotangent passed back unchanged is the value given, as JAX's is (a NumPy float64
  # stays one)
  as_given = {id(x): c for x, c in zip(converted, ct_leaves) if type(x) is not ad.Zero}
  cts = [_materialize(as_given.get(id(ct), ct), aval) for ct, aval in zip(cts, p_avals)]
  return tree.tree_unflatten(p_tree, cts)


def _check_cotangent(ct, aval):
  """A cotangent must have its output's shape and tangent dtype (any dtype where that is
  float0, as JAX allows), else ValueError as in JAX."""
  expected = ad.tangent_aval(aval)
  dtype = ct.dtype if ad.is_float0(ct) else core.get_aval(as_operand(ct)).dtype
  if tuple(np.shape(ct)) != expected.shape or (
      expected.dtype != dtypes.float0 and dtype != expected.dtype):
    got = ShapedArray(tuple(np.shape(ct)), dtype).str_short()
    raise ValueError(f"unexpected JAX type (e.g. shape/dtype) for argument to VJP function: "
                     f"got {got}, but expected {expected.str_short()} because the "
                     f"corresponding output of the differentiated function had JAX type "
                     f"{aval.str_short()}")


def _materialize(ct, aval):
  if not dtypes.is_inexact(aval.dtype):
    return np.zeros(aval.shape, dtypes.float0)
  return ad.instantiate(ct) if type(ct) is ad.Zero else ct


def _check_no_refs(leaves, name):
  # JAX's error (its class; its message names the types only) for the first float ref
  refs = sorted((x for x in leaves if isinstance(x, Ref)),
                key=lambda r: not dtypes.is_inexact(r.dtype))
  if refs:
    aval = refs[0].aval
    raise ValueError(f"Expected cotangent type {aval} but got "
                     f"{aval.inner_aval.str_short()}: {name} cannot differentiate with "
                     "respect to a mutable array reference. Differentiate with respect to "
                     "its value (ref[...]), or pass the ref in an argument not in argnums.")


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

  @traceback_util.api_boundary
  @api_util.wraps(fun)
  def value_and_grad_f(*args, **kwargs):
    nums = api_util.diff_argnums(argnums, len(args), fun)
    diff_args = tuple(args[i] for i in nums)
    _check_no_refs(tree.tree_leaves(diff_args), "grad")
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

  @traceback_util.api_boundary
  @api_util.wraps(fun)
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
  correction = solves._tree_sub(step, stop_gradient(step))
  out = solves._tree_sub(root, correction)
  return (out, aux) if has_aux else out


# ----------------------------------------------------------------------------- Jacobians

def _argnums_partial(fun, argnums, args, kwargs):
  """``fun`` as a function of ``args[argnums]`` only, and those arguments (a tuple)."""
  nums = api_util.diff_argnums(argnums, len(args), fun)

  def partial_fun(*dyn):
    full = list(args)
    for i, a in zip(nums, dyn):
      full[i] = a
    return fun(*full, **kwargs)
  return partial_fun, tuple(tree.tree_map(as_operand, args[i]) for i in nums)


def _std_basis(pytree):
  """The identity matrix, its columns shaped like the leaves of ``pytree``."""
  leaves = tree.tree_leaves(pytree)
  total = sum(core.get_aval(x).size for x in leaves)
  dtype = dtypes.result_type(*leaves) if leaves else dtypes.default_float_dtype()
  eye = Array(np.eye(total, dtype=dtype))
  return _unravel(pytree, 1, None, eye)


def _unravel(pytree, axis, example, arr):
  """Split ``arr`` along ``axis`` into pieces shaped like the leaves of ``pytree`` there,
  each cast to the dtype of ``example`` (or of its own leaf when ``example`` is None)."""
  leaves, treedef = tree.tree_flatten(pytree)
  shape = core.get_aval(arr).shape if not ad.is_float0(arr) else arr.shape
  axis %= len(shape)
  pieces, start = [], 0
  for leaf in leaves:
    leaf_aval = core.get_aval(leaf)
    out_shape = shape[:axis] + leaf_aval.shape + shape[axis + 1:]
    like = leaf if example is None else example
    if ad.is_float0(arr):  # the Jacobian of an integer input (allow_int) is zero
      like_aval = core.get_aval(like)
      pieces.append(Array(np.zeros(out_shape, like_aval.dtype), like_aval.weak_type))
    else:
      piece = arr if len(leaves) == 1 else lax_shapes.slice_in_dim(
          arr, start, start + leaf_aval.size, axis=axis)
      pieces.append(_cast_like(lax_shapes.reshape(piece, out_shape), like))
    start += leaf_aval.size
  return tree.tree_unflatten(treedef, pieces)


def _cast_like(x, example):
  # (a complex value cast to a real dtype keeps its real part, as JAX's downcast does)
  aval = core.get_aval(example)
  return lax_ew._convert_element_type(x, aval.dtype, aval.weak_type)


def _check_input_dtype_jacfwd(holomorphic, x):
  dtype = core.get_aval(x).dtype
  if holomorphic:
    if not dtypes.is_complex(dtype):
      raise TypeError("jacfwd with holomorphic=True requires inputs with complex dtype, "
                      f"but got {dtype.name}.")
  elif not dtypes.is_floating(dtype):
    raise TypeError("jacfwd requires real-valued inputs (input dtype that is a sub-dtype "
                    f"of np.floating), but got {dtype.name}. For holomorphic "
                    "differentiation, pass holomorphic=True. For differentiation of "
                    "non-holomorphic functions involving complex inputs or integer inputs, "
                    "use jax.jvp directly.")


def _check_output_dtype_jacfwd(holomorphic, x):
  dtype = core.get_aval(x).dtype
  if holomorphic and not dtypes.is_complex(dtype):
    raise TypeError("jacfwd with holomorphic=True requires outputs with complex dtype, but "
                    f"got {dtype.name}.")


def _check_input_dtype_jacrev(holomorphic, allow_int, x):
  dtype = core.get_aval(x).dtype
  if holomorphic and not dtypes.is_complex(dtype):
    raise TypeError("jacrev with holomorphic=True requires inputs with complex dtype, but "
                    f"got {dtype.name}.")
  if dtypes.is_integer(dtype) or dtype == np.bool_:
    if not allow_int:
      raise TypeError("jacrev requires real- or complex-valued inputs (input dtype that is "
                      f"a sub-dtype of np.inexact), but got {dtype.name}. If you want to "
                      "use Boolean- or integer-valued inputs, use vjp or set allow_int to "
                      "True.")
  elif not dtypes.is_inexact(dtype):
    raise TypeError("jacrev requires numerical-valued inputs (input dtype that is a "
                    f"sub-dtype of np.bool_ or np.number), but got {dtype.name}.")


def _check_output_dtype_jacrev(holomorphic, x):
  dtype = core.get_aval(x).dtype
  if holomorphic:
    if not dtypes.is_complex(dtype):
      raise TypeError("jacrev with holomorphic=True requires outputs with complex dtype, "
                      f"but got {dtype.name}.")
  elif dtypes.is_complex(dtype):
    raise TypeError("jacrev requires real-valued outputs (output dtype that is a sub-dtype "
                    f"of np.floating), but got {dtype.name}. For holomorphic "
                    "differentiation, pass holomorphic=True. For differentiation of "
                    "non-holomorphic functions involving complex outputs, use jax.vjp "
                    "directly.")
  elif not dtypes.is_floating(dtype):
    raise TypeError("jacrev requires real-valued outputs (output dtype that is a sub-dtype "
                    f"of np.floating), but got {dtype.name}. For differentiation of "
                    "functions with integer outputs, use jax.vjp directly.")


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
  """The Jacobian of ``fun``, column by column with forward mode (vmap of jvp).

  Parameters
  ----------
  fun : callable
    Function of pytrees of arrays returning a pytree of arrays (or ``(out, aux)`` with
    ``has_aux``).
  argnums : int or tuple of int
    The positional arguments to differentiate with respect to.
  has_aux : bool
    Whether ``fun`` returns auxiliary data; the result is then ``(jacobian, aux)``.
  holomorphic : bool
    Whether ``fun`` is holomorphic (complex inputs and outputs).

  Returns
  -------
  callable
    For each output leaf of shape ``out`` and input leaf of shape ``in``, an array of
    shape ``out + in``, in the output's structure with the input's structure inside.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.jacfwd(lambda x: x ** 2)(jnp.array([1., 2.]))
  Array([[2., 0.],
         [0., 4.]], dtype=float32)
  """
  api_util.check_callable(fun)

  @api_util.wraps(fun)
  def jacfun(*args, **kwargs):
    f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
    tree.tree_map(functools.partial(_check_input_dtype_jacfwd, holomorphic), dyn_args)
    pushfwd = functools.partial(jvp, f_partial, dyn_args, has_aux=has_aux)
    if has_aux:
      y, jac, aux = vmap(pushfwd, out_axes=(None, -1, None))(_std_basis(dyn_args))
    else:
      y, jac = vmap(pushfwd, out_axes=(None, -1))(_std_basis(dyn_args))
    tree.tree_map(functools.partial(_check_output_dtype_jacfwd, holomorphic), y)
    example_args = dyn_args[0] if isinstance(argnums, int) else dyn_args
    jac_tree = tree.tree_map(lambda y_leaf, j: _unravel(example_args, -1, y_leaf, j), y, jac)
    return (jac_tree, aux) if has_aux else jac_tree

  return jacfun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
  """The Jacobian of ``fun``, row by row with reverse mode (vmap of vjp).

  Parameters
  ----------
  fun : callable
    Function of pytrees of arrays returning a pytree of arrays (or ``(out, aux)`` with
    ``has_aux``).
  argnums : int or tuple of int
    The positional arguments to differentiate with respect to.
  has_aux : bool
    Whether ``fun`` returns auxiliary data; the result is then ``(jacobian, aux)``.
  holomorphic : bool
    Whether ``fun`` is holomorphic (complex inputs and outputs).
  allow_int : bool
    Allow integer inputs; their Jacobian blocks have dtype float0.

  Returns
  -------
  callable
    Structured as ``jacfwd``'s result.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.jacrev(lambda x: jnp.sin(x[0]) * x)(jnp.array([0., 2.]))
  Array([[0., 0.],
         [2., 0.]], dtype=float32)
  """
  api_util.check_callable(fun)

  @api_util.wraps(fun)
  def jacfun(*args, **kwargs):
    f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
    tree.tree_map(functools.partial(_check_input_dtype_jacrev, holomorphic, allow_int),
                  dyn_args)
    y, pullback, *aux = vjp(f_partial, *dyn_args, has_aux=has_aux)
    tree.tree_map(functools.partial(_check_output_dtype_jacrev, holomorphic), y)
    jac = vmap(pullback)(_std_basis(y))
    jac = jac[0] if isinstance(argnums, int) else jac
    example_args = dyn_args[0] if isinstance(argnums, int) else dyn_args
    jac_tree = tree.tree_map(lambda x_leaf, j: _unravel(y, 0, x_leaf, j), example_args, jac)
    jac_tree = tree.tree_transpose(tree.tree_structure(example_args), tree.tree_structure(y),
                                   jac_tree)
    return (jac_tree, *aux) if has_aux else jac_tree

  return jacfun


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
  """The Hessian of ``fun`` as a dense array (``jacfwd(jacrev(fun))``).

  For an input leaf of shape ``in`` and an output leaf of shape ``out`` the block has
  shape ``out + in + in``; pytrees nest as in ``jacfwd``.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.hessian(lambda x: jnp.sum(x ** 3))(jnp.array([1., 2.]))
  Array([[ 6.,  0.],
         [ 0., 12.]], dtype=float32)
  """
  return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                has_aux=has_aux, holomorphic=holomorphic)


def saved_residuals(fun, *args, **kwargs):
  """What ``vjp`` of ``fun`` at ``args`` keeps for the backward pass: a list of
  ``(aval, description)``, one per residual (JAX's ``saved_residuals``)."""
  from jaxlite._src.api import make_jaxpr   # (api sits beside this module, not below it)
  leaves, in_tree = tree.tree_flatten((args, kwargs))

  def flat(*leaves):
    a, k = tree.tree_unflatten(in_tree, leaves)
    return fun(*a, **k)

  closed, shape = make_jaxpr(lambda *leaves: vjp(flat, *leaves), return_shape=True)(*leaves)
  jaxpr = closed.jaxpr
  n_res = tree.tree_structure(shape[1]).num_leaves
  outs = jaxpr.outvars[len(jaxpr.outvars) - n_res:]
  names = api_util.debug_info("saved_residuals", fun, args, kwargs).arg_names
  # as JAX's: reduce_precision is looked through, to the value it rounds
  through = {e.outvars[0]: e.invars[0] for e in jaxpr.eqns
             if e.primitive is lax_bits.reduce_precision_p}
  res_vars = {through.get(v, v) for v in outs if type(v) is core.Var}
  results = [(v.aval, "from a literal") for v in outs if type(v) is not core.Var]
  results += [(v.aval, "from a constant") for v in jaxpr.constvars if v in res_vars]
  results += [(v.aval, f"from the argument {name}" if name else
               f"from the argument at flattened index {i}")
              for i, (v, name) in enumerate(zip(jaxpr.invars, names)) if v in res_vars]
  for eqn in jaxpr.eqns:
    # (jaxlite keeps no source lines: JAX's descriptions end "from file:line (fun)")
    for v in eqn.outvars:
      if v not in res_vars:
        continue
      if eqn.primitive is lax_ad_checkpoint.name_p:
        results.append((v.aval, f"named '{eqn.params['name']}'"))
      elif eqn.primitive.name == "jit":
        results.append((v.aval, f"output of jitted function '{eqn.params['name']}'"))
      else:
        results.append((v.aval, f"output of {eqn.primitive.name}"))
  return results


def print_saved_residuals(f, *args, **kwargs):
  """Print what ``vjp`` of ``f`` at ``args`` keeps for the backward pass, one residual a
  line: its type and where it comes from (an argument, a named value, an equation).

  Examples
  --------
  >>> import jaxlite as jax
  >>> import jaxlite.numpy as jnp
  >>> from jaxlite.ad_checkpoint import print_saved_residuals
  >>> print_saved_residuals(jax.checkpoint(jnp.sin), 1.)
  f32[] from the argument x
  """
  for aval, src in saved_residuals(f, *args, **kwargs):
    print(f"{aval.str_short(short_dtypes=True)} {src}")
