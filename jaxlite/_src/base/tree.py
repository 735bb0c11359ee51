"""Pytrees: nested containers of leaves, flattened to a list plus a PyTreeDef.

A treedef node is a plain tuple ``(kind, aux, children)``, with ``None`` standing for
a leaf. Nested tuples make structural equality and hashing run in C (tuple compare and
hash), which matters because every jit call flattens its arguments and uses the treedef
as part of its cache key. ``kind`` is a ``_NodeKind``: one object per node type, so it
compares by identity.

This module is the bottom layer: it imports nothing from jaxlite.
"""
import collections
import dataclasses
import difflib
import functools
import operator
import textwrap
import threading
import typing

# ---------------------------------------------------------------------------
# Key entries: the elements of a key path.


class _KeyEntry:
  """Base of the key-path entry classes: immutable, hashable, compared by value."""
  __slots__ = ('_v',)

  def __setattr__(self, name, value):
    raise AttributeError(f"'{type(self).__name__}' object is immutable")

  def __eq__(self, other):
    return type(other) is type(self) and self._v == other._v

  def __hash__(self):
    return hash((type(self).__name__, self._v))

  def __repr__(self):
    return f'{type(self).__name__}({self.__match_args__[0]}={self._v!r})'

  def __reduce__(self):
    return type(self), (self._v,)


# The slot's own setter, which bypasses the immutability guard in __setattr__.
_set_key_value = _KeyEntry._v.__set__


def _key(cls, value):
  # Unchecked constructor for the flatteners, which already know the value's type.
  k = object.__new__(cls)
  _set_key_value(k, value)
  return k


def _checked(cls, value, want):
  # Typed like JAX's constructors, so keystr and matching can rely on the field types.
  if want is int and not isinstance(value, str):
    try:
      return operator.index(value)
    except TypeError:
      pass
  elif want is str and isinstance(value, str):
    return value
  raise TypeError(f'{cls.__name__}({cls.__match_args__[0]}=...) must be '
                  f"{'an int' if want is int else 'a str'}, got {value!r}.")


class SequenceKey(_KeyEntry):
  """Key-path entry for the ``idx``-th element of a tuple or list."""
  __slots__ = ()
  __match_args__ = ('idx',)

  def __init__(self, idx):
    _set_key_value(self, _checked(SequenceKey, idx, int))

  idx = property(lambda self: self._v)

  def __str__(self):
    return f'[{self._v!r}]'


class DictKey(_KeyEntry):
  """Key-path entry for the value stored under ``key`` in a dict-like node."""
  __slots__ = ()
  __match_args__ = ('key',)

  def __init__(self, key):
    _set_key_value(self, key)

  key = property(lambda self: self._v)

  def __str__(self):
    return f'[{self._v!r}]'


class GetAttrKey(_KeyEntry):
  """Key-path entry for attribute ``name`` (namedtuple fields, dataclass fields)."""
  __slots__ = ()
  __match_args__ = ('name',)

  def __init__(self, name):
    _set_key_value(self, _checked(GetAttrKey, name, str))

  name = property(lambda self: self._v)

  def __str__(self):
    return f'.{self._v}'


class FlattenedIndexKey(_KeyEntry):
  """Key-path entry for the ``key``-th child of a custom node registered without keys."""
  __slots__ = ()
  __match_args__ = ('key',)

  def __init__(self, key):
    _set_key_value(self, _checked(FlattenedIndexKey, key, int))

  key = property(lambda self: self._v)

  def __str__(self):
    return f'[<flat index {self._v}>]'


KeyEntry = typing.Any
KeyPath = tuple[KeyEntry, ...]


def keystr(keys, *, simple=False, separator=''):
  """Format a key path as a string.

  Parameters
  ----------
  keys : tuple
    Key entries (``SequenceKey``, ``DictKey``, ...) or any objects with a ``str``.
  simple : bool, optional
    Write each entry as its bare index, key or name (``0``, ``a``, ``x``). Shorter,
    but ambiguous: ``0`` may be a list index or a dict key.
  separator : str, optional
    Placed between entries.

  Returns
  -------
  str

  Examples
  --------
  >>> keystr((SequenceKey(0), DictKey('a'), GetAttrKey('b')))
  "[0]['a'].b"
  >>> keystr((DictKey('a'), SequenceKey(1)), simple=True, separator='/')
  'a/1'
  """
  if simple:
    return separator.join(str(k._v) if isinstance(k, _KeyEntry) else str(k)
                          for k in keys)
  return separator.join(map(str, keys))


# ---------------------------------------------------------------------------
# Node kinds and the registry.


class _NodeKind:
  """How one node type flattens (with or without keys) and unflattens.

  ``label`` selects fast paths and error wording: one of 'tuple', 'list', 'dict',
  'None', 'namedtuple', 'custom', 'dataclass'.
  """
  __slots__ = ('type', 'label', 'flatten', 'unflatten', 'flatten_with_keys')

  def __init__(self, type_, label, flatten, unflatten, flatten_with_keys):
    self.type, self.label = type_, label
    self.flatten, self.unflatten = flatten, unflatten
    self.flatten_with_keys = flatten_with_keys

  def __reduce__(self):
    # Treedefs pickle by type; unpickling finds the one kind object for that type.
    return _kind_for_pickle, (self.type,)

  def __repr__(self):
    return f'_NodeKind({self.type.__name__}, {self.label})'


def _sorted_keys(d):
  try:
    return tuple(sorted(d))
  except Exception as e:
    raise ValueError(
        'Comparator raised exception while sorting pytree dictionary keys.') from e


def _seq_with_keys(xs):
  return [(_key(SequenceKey, i), x) for i, x in enumerate(xs)], None


def _dict_flatten(d):
  keys = _sorted_keys(d)
  return [d[k] for k in keys], keys


def _dict_with_keys(d):
  keys = _sorted_keys(d)
  return [(_key(DictKey, k), d[k]) for k in keys], keys


_TUPLE = _NodeKind(tuple, 'tuple', lambda x: (x, None), lambda _, xs: tuple(xs),
                   _seq_with_keys)
_LIST = _NodeKind(list, 'list', lambda x: (x, None), lambda _, xs: list(xs),
                  _seq_with_keys)
_DICT = _NodeKind(dict, 'dict', _dict_flatten, lambda keys, xs: dict(zip(keys, xs)),
                  _dict_with_keys)
_NONE = _NodeKind(type(None), 'None', lambda x: ((), None), lambda _, xs: None,
                  lambda x: ((), None))
_NONE_NODE = (_NONE, None, ())

# Explicitly registered types (builtins included). Namedtuples are found by shape, not
# registered, and get their kind from `_namedtuples` on first sight.
_registry = {k.type: k for k in (_TUPLE, _LIST, _DICT, _NONE)}
_namedtuples = {}
_registry_lock = threading.Lock()


def _namedtuple_kind(t):
  kind = _namedtuples.get(t)
  if kind is None and issubclass(t, tuple) and hasattr(t, '_fields'):
    fields = t._fields
    kind = _NodeKind(t, 'namedtuple', lambda x: (x, None), lambda _, xs: t(*xs),
                     lambda x: ([(_key(GetAttrKey, f), c) for f, c in zip(fields, x)], None))
    # setdefault is atomic, so racing threads still share one kind per type.
    kind = _namedtuples.setdefault(t, kind)
  return kind


def _kind(t):
  return _registry.get(t) or _namedtuple_kind(t)


def is_registered(t) -> bool:
  """Whether ``t`` is a registered node type (tuple, list, dict, None or a custom one)."""
  return t in _registry


def dict_keys_in_order(d) -> tuple:
  """A dict's keys in the order flattening visits their values (sorted)."""
  return _sorted_keys(d)


def _kind_for_pickle(t):
  kind = _kind(t)
  if kind is None:
    raise ValueError(f'Cannot unpickle a PyTreeDef: {t} is not a registered pytree '
                     'node type in this process.')
  return kind


def _register(kind):
  with _registry_lock:
    if kind.type in _registry:
      what = 'custom dataclass' if kind.label == 'dataclass' else 'custom'
      raise ValueError(
          f'Duplicate {what} PyTreeDef type registration for {kind.type}.')
    _registry[kind.type] = kind


def _indexed_keys(flatten):
  def flatten_with_keys(x):
    children, aux = flatten(x)
    return [(_key(FlattenedIndexKey, i), c) for i, c in enumerate(children)], aux
  return flatten_with_keys


def register_pytree_node(nodetype, flatten_func, unflatten_func,
                         flatten_with_keys_func=None):
  """Make ``nodetype`` a pytree node type instead of a leaf.

  Parameters
  ----------
  nodetype : type
    The exact type to register (subclasses are not covered).
  flatten_func : callable
    ``flatten_func(x) -> (children, aux_data)``: an iterable of children and hashable,
    comparable auxiliary data, which becomes part of the treedef (and so of jit cache
    keys).
  unflatten_func : callable
    ``unflatten_func(aux_data, children) -> x``; ``children`` is a tuple.
  flatten_with_keys_func : callable, optional
    ``(x) -> ([(key, child), ...], aux_data)`` for key paths. Without it, children
    get ``FlattenedIndexKey(i)``.

  Raises
  ------
  ValueError
    If ``nodetype`` is already registered.

  Examples
  --------
  >>> class Pair:
  ...   def __init__(self, a, b): self.a, self.b = a, b
  >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
  ...                      lambda _, ch: Pair(*ch))
  >>> tree_flatten(Pair(1, [2]))
  ([1, 2], PyTreeDef(CustomNode(Pair[None], [*, [*]])))
  """
  _register(_NodeKind(nodetype, 'custom', flatten_func, unflatten_func,
                      flatten_with_keys_func or _indexed_keys(flatten_func)))


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func,
                              flatten_func=None):
  """Register ``nodetype`` with a flatten function that also names each child.

  Parameters
  ----------
  nodetype : type
  flatten_with_keys : callable
    ``(x) -> ([(key, child), ...], aux_data)``.
  unflatten_func : callable
    ``(aux_data, children) -> x``.
  flatten_func : callable, optional
    ``(x) -> (children, aux_data)``, the same children in the same order; only a
    speedup for flattening without paths.
  """
  if flatten_func is None:
    def flatten_func(x):
      pairs, aux = flatten_with_keys(x)
      return [c for _, c in pairs], aux
  register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls):
  """Class decorator: register ``cls`` using its ``tree_flatten`` method and
  ``tree_unflatten`` classmethod. Returns ``cls``."""
  register_pytree_node(cls, operator.methodcaller('tree_flatten'), cls.tree_unflatten)
  return cls


def register_pytree_with_keys_class(cls):
  """Class decorator: register ``cls`` using its ``tree_flatten_with_keys`` method
  (and ``tree_flatten`` when defined) and ``tree_unflatten``. Returns ``cls``."""
  flatten = (operator.methodcaller('tree_flatten') if hasattr(cls, 'tree_flatten')
             else None)
  register_pytree_with_keys(cls, operator.methodcaller('tree_flatten_with_keys'),
                            cls.tree_unflatten, flatten)
  return cls


def register_static(cls):
  """Register ``cls`` as a node with no children: instances live entirely in the
  treedef, so jit treats them as static. Instances must be hashable. Returns ``cls``.
  """
  register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
  return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
  """Register a dataclass-like type whose state is its constructor's keyword arguments.

  Parameters
  ----------
  nodetype : type
  data_fields : sequence of str, optional
    Fields that are children (arrays, pytrees). Inferred for dataclasses: every
    ``init`` field not marked ``field(metadata={'static': True})``.
  meta_fields : sequence of str, optional
    Fields kept in the treedef as static data (must be hashable). Inferred for
    dataclasses from the ``static`` metadata. Give both or neither.
  drop_fields : sequence of str, optional
    Dataclass ``init`` fields to leave out of the pytree.

  Returns
  -------
  type
    ``nodetype``, so this works as a decorator.

  Examples
  --------
  >>> @register_dataclass
  ... @dataclasses.dataclass
  ... class Params:
  ...   w: float
  ...   name: str = dataclasses.field(metadata=dict(static=True))
  >>> tree_flatten(Params(1.0, 'dense'))
  ([1.0], PyTreeDef(CustomNode(Params[('dense',)], [*])))
  """
  if data_fields is None or meta_fields is None:
    if (data_fields is None) != (meta_fields is None):
      raise TypeError('register_dataclass: data_fields and meta_fields must both be '
                      'specified when either is specified. Got '
                      f'{data_fields=} {meta_fields=}.')
    if not dataclasses.is_dataclass(nodetype):
      raise TypeError('register_dataclass: data_fields and meta_fields are required '
                      f'when nodetype is not a dataclass. Got {nodetype=}.')
    fields = dataclasses.fields(nodetype)
    data_fields = [f.name for f in fields if not f.metadata.get('static', False)]
    meta_fields = [f.name for f in fields if f.metadata.get('static', False)]
  # Tuples, so a caller mutating its lists later cannot change the registration.
  data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
  if dataclasses.is_dataclass(nodetype):
    init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
    init_fields.difference_update(drop_fields)
    given = {*meta_fields, *data_fields}
    if given != init_fields:
      msg = ('data_fields and meta_fields must include all dataclass fields with '
             '``init=True`` and only them.')
      if missing := init_fields - given:
        msg += (f' Missing fields: {missing}. Add them to drop_fields to suppress '
                'this error.')
      if unexpected := given - init_fields:
        msg += f' Unexpected fields: {unexpected}.'
      raise ValueError(msg)
  if overlap := set(data_fields) & set(meta_fields):
    raise ValueError('data_fields and meta_fields must not overlap. Overlapping '
                     f'fields: {overlap}.')

  def flatten(x):
    return ([getattr(x, n) for n in data_fields],
            tuple([getattr(x, n) for n in meta_fields]))

  def flatten_with_keys(x):
    return ([(GetAttrKey(n), getattr(x, n)) for n in data_fields],
            tuple([getattr(x, n) for n in meta_fields]))

  def unflatten(meta, data):
    return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

  _register(_NodeKind(nodetype, 'dataclass', flatten, unflatten, flatten_with_keys))
  return nodetype


def static(**kwargs):
  """A ``dataclasses.field`` marked static for ``register_dataclass``; takes the
  same arguments as ``dataclasses.field``."""
  metadata = {'static': True, **(kwargs.pop('metadata', None) or {})}
  return dataclasses.field(metadata=metadata, **kwargs)


def is_tree_node(typ):
  """Whether ``typ`` is a pytree node type (registered, builtin, or a namedtuple)."""
  return _kind(typ) is not None


# ---------------------------------------------------------------------------
# Flattening and unflattening.


def _flatten(x, leaves):
  # The hot path: no is_leaf, no paths. Leaf children are handled inline, which
  # saves a call per leaf.
  kind = _registry.get(type(x)) or _namedtuple_kind(type(x))
  if kind is None:
    leaves.append(x)
    return None
  if kind is _TUPLE or kind is _LIST:
    children, aux = x, None
  elif kind is _DICT:
    aux = _sorted_keys(x)
    children = map(x.__getitem__, aux)
  elif kind is _NONE:
    return _NONE_NODE
  else:
    children, aux = kind.flatten(x)
  nodes = []
  for c in children:
    t = type(c)
    if t in _registry or (issubclass(t, tuple) and hasattr(t, '_fields')):
      nodes.append(_flatten(c, leaves))
    else:
      leaves.append(c)
      nodes.append(None)
  return kind, aux, tuple(nodes)


def _flatten_is_leaf(x, leaves, is_leaf):
  if is_leaf(x):
    leaves.append(x)
    return None
  kind = _kind(type(x))
  if kind is None:
    leaves.append(x)
    return None
  children, aux = kind.flatten(x)
  nodes = []
  for c in children:
    nodes.append(_flatten_is_leaf(c, leaves, is_leaf))
  return kind, aux, tuple(nodes)


def _flatten_with_path(x, pairs, is_leaf, path):
  # Collects (path, leaf) pairs; is_leaf, if given, is called as is_leaf(path, x).
  kind = None if is_leaf is not None and is_leaf(path, x) else _kind(type(x))
  if kind is None:
    pairs.append((path, x))
    return None
  keyed, aux = kind.flatten_with_keys(x)
  nodes = []
  for k, c in keyed:
    nodes.append(_flatten_with_path(c, pairs, is_leaf, (*path, k)))
  return kind, aux, tuple(nodes)


def _unflatten(node, it):
  # Explicit loops rather than comprehensions here and in _flatten: on Python 3.11 a
  # comprehension costs a function call, which dominates on small trees.
  kind, aux, children = node
  vals = []
  for c in children:
    vals.append(next(it) if c is None else _unflatten(c, it))
  if kind is _TUPLE:
    return tuple(vals)
  if kind is _LIST:
    return vals
  if kind is _DICT:
    return dict(zip(aux, vals))
  return kind.unflatten(aux, tuple(vals))


def _aux_equal(a, b):
  try:
    return a is b or bool(a == b)
  except Exception as e:
    raise ValueError(
        'Exception raised while checking equality of metadata fields of pytree. '
        'Make sure that metadata fields are hashable and have simple equality '
        'semantics. (Note: arrays cannot be passed as metadata fields!)') from e


def _flatten_up_to(node, x, out):
  # Messages follow JAX's C++ flatten_up_to, which tree_map users see indirectly.
  if node is None:
    out.append(x)
    return
  kind, aux, children = node
  label = kind.label
  if kind is _TUPLE or kind is _LIST:
    if type(x) is not kind.type:
      raise ValueError(f'Expected {label}, got {x!r}.')
    if len(x) != len(children):
      raise ValueError(f'{label.capitalize()} arity mismatch: {len(x)} != '
                       f'{len(children)}; {label}: {x!r}.')
    values = x
  elif kind is _DICT:
    if type(x) is not dict:
      raise ValueError(f'Expected dict, got {x!r}.')
    keys = _sorted_keys(x)
    if keys != aux:
      raise ValueError(f'Dict key mismatch; expected keys: {list(aux)}; '
                       f'present keys: {list(keys)}.')
    values = map(x.__getitem__, keys)
  elif kind is _NONE:
    if x is not None:
      raise ValueError(
          f'Expected None, got {x!r}.\n\nNone is a pytree node with no children, not '
          'a leaf, so it is a tree prefix only of None. To treat None as a leaf, '
          'you can usually write:\n  jaxlite.tree.map(lambda x, y: None if x is None '
          'else f(x, y), a, b, is_leaf=lambda x: x is None)')
    return
  elif label == 'namedtuple':
    if not (isinstance(x, tuple) and hasattr(type(x), '_fields')):
      raise ValueError(f'Expected named tuple, got {x!r}.')
    if type(x) is not kind.type:
      raise ValueError(f'Named tuple type mismatch: expected type: {kind.type!r}, '
                       f'tuple: {x!r}.')
    values = x
  else:
    what = 'Custom dataclass node' if label == 'dataclass' else 'Custom node'
    if type(x) is not kind.type:
      raise ValueError(f'{what} type mismatch: expected type: {kind.type!r}, '
                       f'value: {x!r}.')
    values, x_aux = kind.flatten(x)
    values = list(values)
    if not _aux_equal(aux, x_aux):
      raise ValueError(f'Mismatch {what.lower()} data: {aux!r} != {x_aux!r}; '
                       f'value: {x!r}.')
    if len(values) != len(children):
      raise ValueError(f'Custom type arity mismatch: {len(values)} != '
                       f'{len(children)}; value: {x!r}.')
  for c, v in zip(children, values):
    if c is None:
      out.append(v)
    else:
      _flatten_up_to(c, v, out)


def _count(node):
  # (leaves, nodes) below and including `node`.
  if node is None:
    return 1, 1
  leaves, nodes = 0, 1
  for c in node[2]:
    l, n = _count(c)
    leaves += l
    nodes += n
  return leaves, nodes


def _strip_aux(node):
  # The shape of a tree without its aux data, to hash trees with unhashable aux.
  return None if node is None else (node[0], tuple(map(_strip_aux, node[2])))


def _node_repr(node):
  if node is None:
    return '*'
  kind, aux, children = node
  parts = [_node_repr(c) for c in children]
  if kind is _TUPLE:
    return f"({', '.join(parts)}{',' if len(parts) == 1 else ''})"
  if kind is _LIST:
    return f"[{', '.join(parts)}]"
  if kind is _DICT:
    return '{' + ', '.join(f'{k!r}: {p}' for k, p in zip(aux, parts)) + '}'
  if kind is _NONE:
    return 'None'
  name = kind.type.__name__
  head = f'namedtuple[{name}]' if kind.label == 'namedtuple' else f'{name}[{aux}]'
  return f"CustomNode({head}, [{', '.join(parts)}])"


class PyTreeDef:
  """The structure of a pytree: its nodes, their types and aux data, and where the
  leaves go. Immutable and hashable; equal when the structures are equal, including
  the aux data of custom nodes.

  Obtain one from ``tree_flatten`` / ``tree_structure``; it cannot be constructed
  directly.
  """
  __slots__ = ('_node', '_num_leaves', '_hash')

  def __init__(self, *args, **kwargs):
    raise TypeError('PyTreeDef cannot be constructed directly; use '
                    'jaxlite.tree_util.tree_structure or treedef_tuple.')

  @property
  def num_leaves(self):
    """Number of leaves."""
    return self._num_leaves

  @property
  def num_nodes(self):
    """Number of nodes, leaves and None nodes included."""
    return _count(self._node)[1]

  def unflatten(self, leaves):
    """Build the pytree with this structure from an iterable of leaves."""
    if type(leaves) is not list and type(leaves) is not tuple:
      leaves = list(leaves)
    if len(leaves) != self._num_leaves:
      if len(leaves) < self._num_leaves:
        raise ValueError(f'Too few leaves for PyTreeDef; expected '
                         f'{self._num_leaves}, got {len(leaves)}')
      raise ValueError(f'Too many leaves for PyTreeDef; expected {self._num_leaves}.')
    if self._node is None:
      return leaves[0]
    return _unflatten(self._node, iter(leaves))

  def flatten_up_to(self, tree):
    """Flatten ``tree`` down to this structure's leaves, which may be subtrees.

    Raises ``ValueError`` if this structure is not a prefix of ``tree``'s.
    """
    out = []
    _flatten_up_to(self._node, tree, out)
    return out

  def children(self):
    """Treedefs of the root's children (an empty list for a leaf)."""
    if self._node is None:
      return []
    return [_make_treedef(c, _count(c)[0]) for c in self._node[2]]

  def node_data(self):
    """``(type, aux_data)`` of the root node, or ``None`` for a leaf. A dict's aux
    data is its sorted list of keys."""
    if self._node is None:
      return None
    kind, aux, _ = self._node
    return (dict, list(aux)) if kind is _DICT else (kind.type, aux)

  def compose(self, inner):
    """The treedef of this structure with every leaf replaced by ``inner``."""
    def sub(node):
      if node is None:
        return inner._node
      return node[0], node[1], tuple(map(sub, node[2]))
    return _make_treedef(sub(self._node), self._num_leaves * inner._num_leaves)

  def walk(self, f_node, f_leaf, leaves):
    """Fold over the structure: ``f_leaf(leaf)`` at leaves (identity if ``None``),
    ``f_node(tuple_of_child_results, node_data)`` at nodes."""
    it = iter(leaves)
    def go(node):
      if node is None:
        x = next(it)
        return x if f_leaf is None else f_leaf(x)
      kind, aux, children = node
      data = (list(aux) if kind is _DICT else
              kind.type if kind.label == 'namedtuple' else aux)
      return f_node(tuple(map(go, children)), data)
    return go(self._node)

  def from_iterable_tree(self, xs):
    """Build a pytree from nested iterables ``xs`` that follow this structure, each
    node given as an iterable of its children."""
    def go(node, x):
      if node is None:
        return x
      kind, aux, children = node
      x = list(x)
      if len(x) != len(children):
        raise ValueError('Arity mismatch between trees')
      return kind.unflatten(aux, tuple([go(c, v) for c, v in zip(children, x)]))
    return go(self._node, xs)

  @classmethod
  def from_node_data_and_children(cls, registry, node_data, children):
    """Build a treedef from ``node_data()`` and child treedefs. ``registry`` is
    accepted for compatibility with JAX and ignored: jaxlite has one registry."""
    children = list(children)
    nodes = tuple(c._node for c in children)
    n = sum(c._num_leaves for c in children)
    if node_data is None:
      return _make_treedef(None, 1)
    typ, aux = node_data
    kind = _kind(typ)
    if kind is None:
      raise ValueError(f'{typ} is not a pytree node type.')
    if kind is _DICT:
      aux = tuple(aux)
    return _make_treedef((kind, aux, nodes), n)

  def __eq__(self, other):
    if not isinstance(other, PyTreeDef):
      return NotImplemented
    if self is other:
      return True
    if self._num_leaves != other._num_leaves:
      return False
    try:
      return self._node == other._node
    except Exception as e:
      raise ValueError(
          'Exception raised while checking equality of metadata fields of pytree. '
          'Make sure that metadata fields are hashable and have simple equality '
          'semantics. (Note: arrays cannot be passed as metadata fields!)') from e

  def __ne__(self, other):
    eq = self.__eq__(other)
    return eq if eq is NotImplemented else not eq

  def __hash__(self):
    h = self._hash
    if h is None:
      try:
        h = hash(self._node)
      except Exception:
        # Unhashable aux data (JAX allows it): hash the shape without aux data.
        h = hash(_strip_aux(self._node))
      self._hash = h
    return h

  def __repr__(self):
    return f'PyTreeDef({_node_repr(self._node)})'

  def __reduce__(self):
    return _make_treedef, (self._node, self._num_leaves)

  def __copy__(self):
    return self

  def __deepcopy__(self, memo):
    return self


def _make_treedef(node, num_leaves):
  td = object.__new__(PyTreeDef)
  td._node = node
  td._num_leaves = num_leaves
  td._hash = None
  return td


def tree_flatten(tree, is_leaf=None):
  """Flatten a pytree into its leaves and its structure.

  Parameters
  ----------
  tree : pytree
  is_leaf : callable, optional
    Called on every subtree, top-down; where it returns True the subtree is taken
    as a leaf without looking inside.

  Returns
  -------
  leaves : list
    Leaves in order: sequences by position, dicts by sorted key, custom nodes by
    their flatten function. ``None`` is a node without children, not a leaf.
  treedef : PyTreeDef

  Examples
  --------
  >>> tree_flatten((1, {'b': [2, None], 'a': 3}))
  ([1, 3, 2], PyTreeDef((*, {'a': *, 'b': [*, None]})))
  >>> tree_flatten([1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple))
  ([1, (2, 3)], PyTreeDef([*, *]))
  """
  leaves = []
  if is_leaf is None:
    node = _flatten(tree, leaves)
  else:
    node = _flatten_is_leaf(tree, leaves, is_leaf)
  return leaves, _make_treedef(node, len(leaves))


def tree_unflatten(treedef, leaves):
  """Rebuild a pytree from a treedef and an iterable of leaves.

  Examples
  --------
  >>> leaves, treedef = tree_flatten({'x': 1, 'y': (2, 3)})
  >>> tree_unflatten(treedef, [10, 20, 30])
  {'x': 10, 'y': (20, 30)}
  """
  return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
  """The leaves of ``tree``, in flattening order (see ``tree_flatten``).

  Examples
  --------
  >>> tree_leaves([1, None, {'a': (2,)}])
  [1, 2]
  """
  return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
  """The PyTreeDef of ``tree`` (see ``tree_flatten``).

  Examples
  --------
  >>> tree_structure((1, {'a': 2, 'b': [3, None]}))
  PyTreeDef((*, {'a': *, 'b': [*, None]}))
  """
  return tree_flatten(tree, is_leaf)[1]


def treedef_tuple(treedefs):
  """The treedef of a tuple whose elements have the structures ``treedefs``."""
  treedefs = list(treedefs)
  return _make_treedef((_TUPLE, None, tuple(t._node for t in treedefs)),
                       sum(t._num_leaves for t in treedefs))


def treedef_children(treedef):
  """Treedefs of the root's immediate children."""
  return treedef.children()


def treedef_is_leaf(treedef):
  """Whether ``treedef`` has a single node: a leaf, or a childless node like None."""
  return treedef._node is None or not treedef._node[2]


def treedef_is_strict_leaf(treedef):
  """Whether ``treedef`` is exactly one leaf."""
  return treedef._node is None


def all_leaves(iterable, is_leaf=None):
  """Whether every element of ``iterable`` is a leaf.

  Examples
  --------
  >>> all_leaves([1, 'a', 2.0]), all_leaves([1, (2,)]), all_leaves([None])
  (True, False, False)
  """
  if is_leaf is None:
    return all(_kind(type(x)) is None for x in iterable)
  items = list(iterable)
  leaves = tree_leaves(items, is_leaf)
  return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def flatten_one_level(tree):
  """``(children, aux_data)`` of the root node of ``tree``; ValueError on a leaf."""
  kind = _kind(type(tree))
  if kind is None:
    raise ValueError(f"can't tree-flatten type: {type(tree)}")
  children, aux = kind.flatten(tree)
  return tuple(children), aux


def flatten_one_level_with_keys(tree):
  """``([(key, child), ...], aux_data)`` of the root node of ``tree``."""
  kind = _kind(type(tree))
  if kind is None:
    raise ValueError(f"can't tree-flatten type: {type(tree)}")
  pairs, aux = kind.flatten_with_keys(tree)
  return tuple(pairs), aux


def build_tree(treedef, xs):
  """Build a pytree from nested iterables ``xs`` shaped like ``treedef``
  (``treedef.from_iterable_tree``; JAX removed this alias in 0.4.x)."""
  return treedef.from_iterable_tree(xs)


# ---------------------------------------------------------------------------
# Key paths.


def _path_is_leaf(is_leaf, is_leaf_takes_path):
  if is_leaf is None or is_leaf_takes_path:
    return is_leaf
  return lambda _, x: is_leaf(x)


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
  """Like ``tree_flatten``, but each leaf comes with its key path.

  Parameters
  ----------
  tree : pytree
  is_leaf : callable, optional
    ``is_leaf(x)``, or ``is_leaf(path, x)`` if ``is_leaf_takes_path``.
  is_leaf_takes_path : bool, optional

  Returns
  -------
  pairs : list of (tuple, leaf)
    Paths are tuples of ``SequenceKey``, ``DictKey``, ``GetAttrKey`` (namedtuples,
    dataclasses) and ``FlattenedIndexKey`` (custom nodes registered without keys).
  treedef : PyTreeDef

  Examples
  --------
  >>> pairs, _ = tree_flatten_with_path({'a': [1, 2]})
  >>> [(keystr(p), x) for p, x in pairs]
  [("['a'][0]", 1), ("['a'][1]", 2)]
  """
  pairs = []
  node = _flatten_with_path(tree, pairs, _path_is_leaf(is_leaf, is_leaf_takes_path), ())
  return pairs, _make_treedef(node, len(pairs))


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
  """The ``(key_path, leaf)`` pairs of ``tree`` (see ``tree_flatten_with_path``)."""
  return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


# ---------------------------------------------------------------------------
# Mapping and prefix errors.


def tree_map(f, tree, *rest, is_leaf=None):
  """Apply ``f`` to the leaves of ``tree`` (and the matching subtrees of ``rest``).

  Parameters
  ----------
  f : callable
    Called as ``f(leaf, *matching)`` with one argument per tree.
  tree : pytree
    Its structure decides what a leaf is and the structure of the result.
  *rest : pytree
    Each must have ``tree``'s structure as a prefix; where ``tree`` has a leaf,
    ``f`` receives the whole corresponding subtree.
  is_leaf : callable, optional
    Applied when flattening ``tree`` only.

  Returns
  -------
  pytree
    Same structure as ``tree``.

  Raises
  ------
  ValueError
    If ``tree``'s structure is not a prefix of one of ``rest``; the message gives the
    key path of the first difference.

  Examples
  --------
  >>> tree_map(lambda x: x * 2, {'a': 1, 'b': (2, None)})
  {'a': 2, 'b': (4, None)}
  >>> tree_map(lambda x, y: (x, y), [1, 2], [[3, 4], 5])
  [(1, [3, 4]), (2, 5)]
  """
  leaves, treedef = tree_flatten(tree, is_leaf)
  if not rest:
    return treedef.unflatten(list(map(f, leaves)))
  columns = [leaves] + [_flatten_rest(treedef, tree, r, is_leaf, 'tree_map tree')
                        for r in rest]
  return treedef.unflatten([f(*xs) for xs in zip(*columns)])


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
  """Like ``tree_map``, but ``f`` is called as ``f(key_path, leaf, *matching)``.

  Examples
  --------
  >>> tree_map_with_path(lambda p, x: keystr(p), {'a': [0, 0]})
  {'a': ["['a'][0]", "['a'][1]"]}
  """
  pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
  columns = [[p for p, _ in pairs], [x for _, x in pairs]]
  # Prefix errors are found without paths, so a path-taking is_leaf is dropped there.
  plain_is_leaf = None if is_leaf_takes_path else is_leaf
  columns += [_flatten_rest(treedef, tree, r, plain_is_leaf, 'tree_map_with_path tree')
              for r in rest]
  return treedef.unflatten([f(*xs) for xs in zip(*columns)])


def _flatten_rest(treedef, tree, other, is_leaf, name):
  try:
    return treedef.flatten_up_to(other)
  except ValueError as e:
    err = next(_prefix_error((), tree, other, is_leaf), None)
    if err is None:
      raise
    raise err(name) from None


def prefix_errors(prefix_tree, full_tree, is_leaf=None):
  """Why ``prefix_tree`` is not a tree prefix of ``full_tree``: a list of functions,
  each taking the prefix tree's name and returning a ValueError. Empty if it is."""
  return list(_prefix_error((), prefix_tree, full_tree, is_leaf))


def _child_keys(tree):
  return tuple(k for k, _ in flatten_one_level_with_keys(tree)[0])


def _prefix_error(path, prefix, full, is_leaf):
  # Generates at most one error per mismatching subtree, walking both trees at once.
  if treedef_is_strict_leaf(tree_structure(prefix, is_leaf)):
    return
  if type(prefix) is not type(full):
    yield lambda name: ValueError(
        'pytree structure error: different types at key path\n'
        f'    {name}{keystr(path)}\n'
        f'At that key path, the prefix pytree {name} has a subtree of type\n'
        f'    {type(prefix)}\n'
        'but at the same key path the full pytree has a subtree of different type\n'
        f'    {type(full)}.')
    return
  p_children, p_aux = flatten_one_level(prefix)
  f_children, f_aux = flatten_one_level(full)
  p_children, f_children = tuple(p_children), tuple(f_children)
  p_keys, f_keys = _child_keys(prefix), _child_keys(full)
  if isinstance(prefix, (list, tuple)):
    if len(prefix) != len(full):
      ty = type(prefix).__name__
      yield lambda name: ValueError(
          f'pytree structure error: different lengths of {ty} at key path\n'
          f'    {name}{keystr(path)}\n'
          f'At that key path, the prefix pytree {name} has a subtree of type {ty} '
          f'of length {len(prefix)}, but the full pytree has a subtree of the same '
          f'type but of length {len(full)}.')
      return
  elif len(p_children) != len(f_children):
    try:
      # Sorted, so the message does not depend on set order.
      diff = sorted(set(p_keys).symmetric_difference(f_keys), key=str)
    except Exception:
      diff = None
    def names(keys):
      return ' '.join(str(getattr(k, '_v', k)) for k in keys)
    yield lambda name: ValueError(
        'pytree structure error: different numbers of pytree children at key path\n'
        f'    {name}{keystr(path)}\n'
        f'At that key path, the prefix pytree {name} has a subtree of type\n'
        f'    {type(prefix)}\n'
        f'with {len(p_children)} child keys\n'
        f'    {names(p_keys)}\n'
        'but at the same key path the full pytree has a subtree of the same type but '
        f'with {len(f_children)} child keys\n'
        f'    {names(f_keys)}\n'
        + ('' if diff is None else
           f'so the symmetric difference on key sets is\n    {names(diff)}'))
    return
  if not _aux_equal(p_aux, f_aux):
    p_str, f_str = str(p_aux), str(f_aux)
    diff = textwrap.indent('\n'.join(
        difflib.ndiff(p_str.splitlines(), f_str.splitlines())), prefix='    ')
    yield lambda name: ValueError(
        'pytree structure error: different pytree metadata at key path\n'
        f'    {name}{keystr(path)}\n'
        f'At that key path, the prefix pytree {name} has a subtree of type\n'
        f'    {type(prefix)}\n'
        f'with metadata\n    {p_str}\n'
        'but at the same key path the full pytree has a subtree of the same type but '
        f'with metadata\n    {f_str}\n'
        f'so the diff in the metadata at these pytree nodes is\n{diff}')
    return
  for k, p, f in zip(p_keys, p_children, f_children):
    yield from _prefix_error((*path, k), p, f, is_leaf)


def equality_errors(tree1, tree2, is_leaf=None):
  """Describe how two pytrees' structures differ: yields
  ``(key_path, thing1, thing2, explanation)`` for each difference found."""
  yield from _equality_errors((), tree1, tree2, is_leaf)


def _equality_errors(path, t1, t2, is_leaf):
  if (treedef_is_strict_leaf(tree_structure(t1, is_leaf)) and
      treedef_is_strict_leaf(tree_structure(t2, is_leaf))):
    return
  if type(t1) is not type(t2):
    yield path, str(type(t1)), str(type(t2)), 'their Python types differ'
    return
  if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
    ty = type(t1).__name__
    yield (path, f'{ty} of length {len(t1)}', f'{ty} of length {len(t2)}',
           'the lengths do not match')
    return
  c1, m1 = flatten_one_level(t1)
  c2, m2 = flatten_one_level(t2)
  c1, c2 = tuple(c1), tuple(c2)
  k1, k2 = _child_keys(t1), _child_keys(t2)
  if len(c1) != len(c2):
    try:
      diff = ' '.join(sorted(repr(getattr(k, '_v', k)) for k in set(k1) ^ set(k2)))
    except Exception:
      diff = ''
    def things(n):
      return f'{type(t1)} with {n} child{"ren" if n > 1 else ""}'
    yield (path, things(len(c1)), things(len(c2)),
           'the numbers of children do not match' +
           (diff and f', with the symmetric difference of key sets: {{{diff}}}'))
    return
  if not _aux_equal(m1, m2):
    yield (path, f'{type(t1)} with pytree metadata {m1}',
           f'{type(t2)} with pytree metadata {m2}',
           'the pytree node metadata does not match')
    return
  for k, a, b in zip(k1, c1, c2):
    yield from _equality_errors((*path, k), a, b, is_leaf)


# ---------------------------------------------------------------------------
# Reductions, transposition, broadcasting.


_UNSPECIFIED = object()   # "no initializer given" (None is a valid one), as JAX's


def tree_reduce(function, tree, initializer=_UNSPECIFIED, is_leaf=None):
  """Fold ``function`` over the leaves of ``tree``, like ``functools.reduce``.

  Examples
  --------
  >>> import operator
  >>> tree_reduce(operator.add, [1, (2, 3)]), tree_reduce(operator.add, [], 0)
  (6, 0)
  """
  if initializer is _UNSPECIFIED:
    return functools.reduce(function, tree_leaves(tree, is_leaf))
  return functools.reduce(function, tree_leaves(tree, is_leaf), initializer)


def tree_reduce_associative(operation, tree, *, identity=_UNSPECIFIED, is_leaf=None):
  """Reduce the leaves with an associative ``operation`` as a balanced binary tree,
  which keeps the depth of the result logarithmic in the number of leaves."""
  def reduce(xs):
    if len(xs) == 1:
      return xs[0]
    mid = len(xs) // 2
    return operation(reduce(xs[:mid]), reduce(xs[mid:]))
  leaves = tree_leaves(tree, is_leaf)
  if not leaves:
    if identity is _UNSPECIFIED:
      raise TypeError('Must specify identity for parallel reduction of empty sequence.')
    return identity
  return reduce(leaves)


def tree_all(tree, *, is_leaf=None):
  """Whether every leaf of ``tree`` is truthy (True for a tree without leaves).

  Examples
  --------
  >>> tree_all([True, (1, None)]), tree_all({'a': 0})
  (True, False)
  """
  return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
  """Turn an ``outer`` tree of ``inner`` trees into an ``inner`` tree of ``outer``
  trees.

  Parameters
  ----------
  outer_treedef : PyTreeDef
  inner_treedef : PyTreeDef or None
    If None, taken from the first outer element.
  pytree_to_transpose : pytree
    Has the structure ``outer_treedef.compose(inner_treedef)``.

  Raises
  ------
  TypeError
    If the number of leaves does not match the composed structure.

  Examples
  --------
  >>> outer, inner = tree_structure([0, 0]), tree_structure((0, 0, 0))
  >>> tree_transpose(outer, inner, [(1, 2, 3), (4, 5, 6)])
  ([1, 4], [2, 5], [3, 6])
  """
  flat, treedef = tree_flatten(pytree_to_transpose)
  if inner_treedef is None:
    inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
  inner_n, outer_n = inner_treedef.num_leaves, outer_treedef.num_leaves
  if treedef.num_leaves != inner_n * outer_n:
    raise TypeError(f'Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}')
  rows = [flat[i * inner_n:(i + 1) * inner_n] for i in range(outer_n)]
  return inner_treedef.unflatten(
      [outer_treedef.unflatten(col) for col in zip(*rows)] if outer_n else
      [outer_treedef.unflatten([])] * inner_n)


def broadcast_prefix(prefix_tree, full_tree, is_leaf=None):
  """Repeat each leaf of ``prefix_tree`` once per leaf of the matching subtree of
  ``full_tree``; returns the resulting flat list."""
  leaves, treedef = tree_flatten(prefix_tree, is_leaf)
  subtrees = _flatten_rest(treedef, prefix_tree, full_tree, is_leaf,
                           'broadcast_prefix prefix_tree')
  result = []
  for x, subtree in zip(leaves, subtrees):
    result.extend([x] * tree_structure(subtree).num_leaves)
  return result


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
  """Broadcast ``prefix_tree`` to the structure of ``full_tree``.

  Examples
  --------
  >>> tree_broadcast((1, 2), ((3, 4), {'a': 5, 'b': [6]}))
  ((1, 1), {'a': 2, 'b': [2]})
  """
  return tree_structure(full_tree).unflatten(
      broadcast_prefix(prefix_tree, full_tree, is_leaf))


# ---------------------------------------------------------------------------
# Builtin custom nodes: OrderedDict, defaultdict, Partial.


def _ordered_dict_with_keys(d):
  return [(DictKey(k), v) for k, v in d.items()], tuple(d)


def _unzip_checked(keys, values):
  if len(keys) != len(values):
    raise ValueError(f'Expected {len(keys)} values for keys {keys}, got {len(values)}.')
  return zip(keys, values)


register_pytree_node(
    collections.OrderedDict,
    lambda d: (list(d.values()), tuple(d)),
    lambda keys, values: collections.OrderedDict(_unzip_checked(keys, values)),
    _ordered_dict_with_keys)


def _defaultdict_flatten(d):
  keys = _sorted_keys(d)
  return [d[k] for k in keys], (d.default_factory, keys)


def _defaultdict_with_keys(d):
  keys = _sorted_keys(d)
  return [(DictKey(k), d[k]) for k in keys], (d.default_factory, keys)


register_pytree_node(
    collections.defaultdict, _defaultdict_flatten,
    lambda aux, values: collections.defaultdict(aux[0], _unzip_checked(aux[1], values)),
    _defaultdict_with_keys)


class _HashableCallableShim:
  """Wraps a callable, delegating calls, hashing and equality to it."""
  __slots__ = ('fun',)

  def __init__(self, fun):
    self.fun = fun

  def __call__(self, *args, **kwargs):
    return self.fun(*args, **kwargs)

  def __hash__(self):
    return hash(self.fun)

  def __eq__(self, other):
    return self.fun == (other.fun if isinstance(other, _HashableCallableShim) else other)

  def __repr__(self):
    return f'_HashableCallableShim({self.fun!r})'


class Partial(functools.partial):
  """A ``functools.partial`` that is a pytree: its bound arguments are children, the
  function is aux data. Use it to pass partially applied functions through jit.

  Examples
  --------
  >>> add = Partial(lambda x, y: x + y, 1)
  >>> add(2)
  3
  >>> tree_leaves(add)
  [1]
  """

  def __new__(cls, func, *args, **kw):
    # functools.partial flattens a partial-of-a-partial into one; wrap the inner one so
    # exactly the arguments given here become this node's children.
    if isinstance(func, functools.partial):
      func = _HashableCallableShim(func)
    return super().__new__(cls, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]))


class PyTreeRegistry:
  """The registry of pytree node types, as an object (``jax.tree_util.default_registry``):
  jaxlite has one registry, and this is a view of it."""

  def flatten(self, tree, leaf_predicate=None):
    """``(leaves, treedef)`` of ``tree``, as ``tree_flatten``."""
    return tree_flatten(tree, leaf_predicate)

  def flatten_one_level(self, tree):
    """``(children, aux_data)`` of the root node of ``tree``, or None for a leaf."""
    if _kind(type(tree)) is None:
      return None
    return flatten_one_level(tree)

  def flatten_one_level_with_keys(self, tree):
    """``([(key, child), ...], aux_data)`` of the root node, or None for a leaf."""
    if _kind(type(tree)) is None:
      return None
    return flatten_one_level_with_keys(tree)

  def flatten_with_path(self, tree, leaf_predicate=None):
    """``([(key path, leaf), ...], treedef)`` of ``tree``."""
    return tree_flatten_with_path(tree, leaf_predicate)

  def is_node(self, type) -> bool:
    """Whether instances of ``type`` are pytree nodes (not leaves)."""
    return _kind(type) is not None

  def register_node(self, type, to_iterable, from_iterable, to_iterable_with_keys=None):
    """Register ``type`` as a node, as ``register_pytree_node``."""
    if to_iterable_with_keys is None:
      register_pytree_node(type, to_iterable, from_iterable)
    else:
      register_pytree_with_keys(type, to_iterable_with_keys, from_iterable, to_iterable)

  def register_dataclass_node(self, type, data_fields, meta_fields, drop_fields=()):
    """Register the dataclass ``type`` as a node, as ``register_dataclass``."""
    register_dataclass(type, data_fields, meta_fields, drop_fields)


default_registry = PyTreeRegistry()
