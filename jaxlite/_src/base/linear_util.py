"""JAX's ``linear_util``: a function wrapped with the transformations to apply to it.

Libraries that trace functions with JAX's internal entry points (flax's ``lazy_init`` and
``nn.scan``: ``pe.trace_to_jaxpr_nounits(flatten_fun_nokwargs(wrap_init(f), tree), ...)``)
hand such a ``WrappedFun`` around. jaxlite's own transformations take plain callables;
this is the small part of the API that libraries use, written after JAX's: a
``WrappedFun`` is ``f`` with keyword ``params`` and a stack of generator-style
transformations, called by ``call_wrapped``; a transformation ``with_aux`` also writes an
auxiliary output (an output tree, say) into a ``Store`` read through a thunk.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable

from jaxlite._src.base import tree


class StoreException(Exception):
  pass


_EMPTY = object()


class Store:
  """A value written once (an auxiliary output), read after the call."""
  __slots__ = ("_val",)

  def __init__(self):
    self._val = _EMPTY

  def store(self, val):
    if self._val is not _EMPTY:
      raise StoreException("Store occupied")
    self._val = val

  def reset(self):
    self._val = _EMPTY

  @property
  def val(self):
    if self._val is _EMPTY:
      raise StoreException("Store empty")
    return self._val

  def __bool__(self):
    return self._val is not _EMPTY


class EqualStore(Store):
  """A Store that may be written again with an equal value."""
  __slots__ = ()

  def store(self, val):
    if self._val is not _EMPTY:
      try:
        same = bool(self._val == val)
      except Exception:
        same = False
      if not same:
        raise StoreException("Store occupied with not-equal value")
      return
    self._val = val


class WrappedFun:
  """``f`` with the transformations to apply to it (JAX's ``lu.WrappedFun``).

  ``transforms`` are ``(gen, gen_static_args)`` pairs, outermost first; ``stores`` their
  auxiliary-output stores (None where a transformation has none); ``params`` the keyword
  arguments ``f`` is called with.
  """
  __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "in_type",
               "debug_info")

  def __init__(self, f, f_transformed, transforms, stores, params, in_type, debug_info):
    self.f = f
    self.f_transformed = f_transformed
    self.transforms = transforms
    self.stores = stores
    self.params = params
    self.in_type = in_type
    self.debug_info = debug_info

  @property
  def __name__(self):
    return getattr(self.f, "__name__", type(self.f).__name__)

  def wrap(self, gen, gen_static_args, out_store) -> WrappedFun:
    """This function with one more transformation ``gen(f, [store,] *static, *args)``."""
    inner = (functools.partial(gen, self.f_transformed, *gen_static_args) if out_store is None
             else functools.partial(gen, self.f_transformed, out_store, *gen_static_args))
    return WrappedFun(self.f, inner, ((gen, gen_static_args),) + self.transforms,
                      (out_store,) + self.stores, self.params, None, self.debug_info)

  def populate_stores(self, stores):
    for mine, other in zip(self.stores, stores):
      if mine is not None:
        mine.store(other.val)

  def call_wrapped(self, *args, **kwargs):
    """Call ``f`` through its transformations."""
    return self.f_transformed(*args, **kwargs)

  def replace_debug_info(self, debug_info) -> WrappedFun:
    return WrappedFun(self.f, self.f_transformed, self.transforms, self.stores,
                      self.params, self.in_type, debug_info)

  def with_unknown_names(self) -> WrappedFun:
    return self

  def __repr__(self):
    stack = "".join(f"{i}   : {getattr(g, '__name__', g)}   {a}\n"
                    for i, (g, a) in enumerate(self.transforms))
    return f"Wrapped function:\n{stack}Core: {self.__name__}\n"

  def __hash__(self):
    return hash((self.f, self.transforms, self.params, self.in_type))

  def __eq__(self, other):
    return (isinstance(other, WrappedFun) and self.f == other.f
            and self.transforms == other.transforms and self.params == other.params
            and self.in_type == other.in_type)


def wrap_init(f: Callable, params=None, *, debug_info=None) -> WrappedFun:
  """``f`` as a WrappedFun with no transformation; ``params`` are keyword arguments."""
  params_dict = {} if params is None else dict(params)
  items = tuple(sorted(params_dict.items()))
  return WrappedFun(f, functools.partial(f, **params_dict), (), (), items, None, debug_info)


def _curry(f):
  return functools.partial(functools.partial, f)


@_curry
def transformation2(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
  """Add the transformation ``gen(f, *static_args, *args, **kwargs)`` to ``fun``."""
  return fun.wrap(gen, gen_static_args, None)


@_curry
def transformation_with_aux2(gen, fun: WrappedFun, *gen_static_args,
                             use_eq_store: bool = False, unk_names: bool = False):
  """Add ``gen(f, store, *static_args, *args, **kwargs)``; returns ``(fun, aux_thunk)``."""
  out_store = EqualStore() if use_eq_store else Store()
  return fun.wrap(gen, gen_static_args, out_store), lambda: out_store.val


@_curry
def transformation(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
  """The older generator style: ``gen(*static_args, *args)`` yields ``(args, kwargs)``
  for ``f``, receives its result and yields the transformed one."""
  def gen2(f, *args, **kwargs):
    inst = gen(*args, **kwargs)
    args_, kwargs_ = next(inst)
    return inst.send(f(*args_, **kwargs_))
  return transformation2(gen2, fun, *gen_static_args)()


@_curry
def transformation_with_aux(gen, fun: WrappedFun, *gen_static_args):
  """As ``transformation``, the generator's last yield being ``(result, aux)``."""
  def gen2(f, store, *args, **kwargs):
    inst = gen(*args, **kwargs)
    args_, kwargs_ = next(inst)
    ans, aux = inst.send(f(*args_, **kwargs_))
    store.store(aux)
    return ans
  return transformation_with_aux2(gen2, fun, *gen_static_args)()


def cache(call: Callable, *, explain=None):
  """Memoize ``call(fun: WrappedFun, *args)`` on the function, its transformations and
  params, and ``args``; a hit fills ``fun``'s stores as the first call did."""
  caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

  def memoized(fun: WrappedFun, *args):
    try:
      table = caches.setdefault(fun.f, {})
    except TypeError:   # not weakly referenceable: no cache
      return call(fun, *args)
    key = (fun.transforms, fun.params, fun.in_type, args)
    hit = table.get(key)
    if hit is not None:
      ans, stores = hit
      fun.populate_stores(stores)
      return ans
    ans = call(fun, *args)
    table[key] = (ans, fun.stores)
    return ans

  memoized.cache_clear = caches.clear
  memoized.evict_function = lambda f: caches.pop(f, None)
  return memoized


def merge_linear_aux(aux1, aux2):
  """``(True, aux1())`` or ``(False, aux2())``, whichever store was written (one only)."""
  try:
    out1 = aux1()
  except StoreException:
    try:
      return False, aux2()
    except StoreException:
      raise StoreException("neither store occupied") from None
  try:
    aux2()
  except StoreException:
    return True, out1
  raise StoreException("both stores occupied")


# -- flattening (JAX's api_util.flatten_fun): flat leaves in and out, trees in stores

def _flatten_fun(f, store, in_tree, *args_flat):
  args, kwargs = tree.tree_unflatten(in_tree, args_flat)
  ans = f(*args, **kwargs)
  leaves, out_tree = tree.tree_flatten(ans)
  store.store(out_tree)
  return leaves


def _flatten_fun_nokwargs(f, store, in_tree, *args_flat):
  args = tree.tree_unflatten(in_tree, args_flat)
  ans = f(*args)
  leaves, out_tree = tree.tree_flatten(ans)
  store.store(out_tree)
  return leaves


def flatten_fun(fun: WrappedFun, in_tree) -> tuple[WrappedFun, Callable[[], Any]]:
  """``fun`` taking the leaves of ``(args, kwargs)`` (structure ``in_tree``) and returning
  the leaves of its result, with a thunk giving the result's tree after a call."""
  return transformation_with_aux2(_flatten_fun)(fun, in_tree)


def flatten_fun_nokwargs(fun: WrappedFun, in_tree) -> tuple[WrappedFun, Callable[[], Any]]:
  """As ``flatten_fun``, with ``in_tree`` the structure of the positional args alone."""
  return transformation_with_aux2(_flatten_fun_nokwargs)(fun, in_tree)
