"""Tests for jaxlite.tree_util / jaxlite.tree.

Expected reprs, orders and error messages were recorded from JAX 0.10.2.
"""
import collections
import copy
import dataclasses
import functools
import operator
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

import jaxlite.tree as jtree
import jaxlite.tree_util as tu
from jaxlite.tree_util import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey

Point = collections.namedtuple('Point', ['x', 'y'])
Other = collections.namedtuple('Other', ['x', 'y'])


class SubPoint(Point):
  pass


class Box:
  """Custom node: one child, aux data in the treedef."""

  def __init__(self, value, aux):
    self.value, self.aux = value, aux

  def __repr__(self):
    return f'Box({self.value!r}, {self.aux!r})'


tu.register_pytree_node(Box, lambda b: ((b.value,), b.aux), lambda aux, ch: Box(ch[0], aux))


class Many:
  """Custom node with a variable number of children and no aux data."""

  def __init__(self, *items):
    self.items = items

  def __repr__(self):
    return f'Many{self.items!r}'


tu.register_pytree_node(Many, lambda m: (iter(m.items), None), lambda _, ch: Many(*ch))


@tu.register_pytree_node_class
class Pair:

  def __init__(self, a, b):
    self.a, self.b = a, b

  def tree_flatten(self):
    return (self.a, self.b), 'pair'

  @classmethod
  def tree_unflatten(cls, aux, children):
    return cls(*children)


@tu.register_pytree_with_keys_class
class Keyed:

  def __init__(self, x, y):
    self.x, self.y = x, y

  def tree_flatten_with_keys(self):
    return ((GetAttrKey('x'), self.x), (DictKey('yy'), self.y)), 'aux'

  @classmethod
  def tree_unflatten(cls, aux, children):
    return cls(*children)


@tu.register_dataclass
@dataclasses.dataclass
class Params:
  w: object
  b: object
  name: str = dataclasses.field(default='dense', metadata=dict(static=True))


@tu.register_static
class Tag:

  def __init__(self, v):
    self.v = v

  def __eq__(self, other):
    return isinstance(other, Tag) and self.v == other.v

  def __hash__(self):
    return hash(self.v)

  def __repr__(self):
    return f'Tag({self.v})'


def add3(a, b, c=0):
  return a + b + c


def _msg(exc_info):
  return str(exc_info.value)


# --- flattening builtin containers -------------------------------------------------


def test_flatten_nested_containers_orders_leaves_and_prints_like_jax():
  leaves, treedef = tu.tree_flatten((1, {'b': [3, None], 'a': 2}))
  assert leaves == [1, 2, 3]
  assert repr(treedef) == "PyTreeDef((*, {'a': *, 'b': [*, None]}))"
  assert str(treedef) == repr(treedef)


def test_none_is_a_node_without_children_not_a_leaf():
  leaves, treedef = tu.tree_flatten([None, (), {'x': None}])
  assert leaves == []
  assert repr(treedef) == "PyTreeDef([None, (), {'x': None}])"
  assert tu.tree_structure(None).num_nodes == 1
  assert tu.tree_structure(None).num_leaves == 0


def test_unregistered_objects_are_leaves():
  arr = np.arange(3)
  values = [arr, 'ab', b'x', 1j, np.float32(1), Ellipsis, object, 1.5]
  leaves = tu.tree_leaves(values)
  assert len(leaves) == len(values) and all(a is b for a, b in zip(leaves, values))
  assert repr(tu.tree_structure(arr)) == 'PyTreeDef(*)'


def test_empty_and_single_element_containers_repr():
  assert repr(tu.tree_structure(())) == 'PyTreeDef(())'
  assert repr(tu.tree_structure([])) == 'PyTreeDef([])'
  assert repr(tu.tree_structure({})) == 'PyTreeDef({})'
  assert repr(tu.tree_structure((1,))) == 'PyTreeDef((*,))'


def test_dict_unflattens_with_sorted_keys():
  out = tu.tree_map(lambda x: x, {'b': 1, 'a': 2})
  assert list(out.items()) == [('a', 2), ('b', 1)]


def test_dict_keys_of_mixed_numeric_and_tuple_types_sort():
  leaves, treedef = tu.tree_flatten({2: 'a', 1.5: 'b', 1: 'c'})
  assert leaves == ['c', 'b', 'a']
  assert repr(treedef) == 'PyTreeDef({1: *, 1.5: *, 2: *})'
  leaves, treedef = tu.tree_flatten({(1,): 1, (0, 'a'): 2})
  assert leaves == [2, 1]
  assert repr(treedef) == "PyTreeDef({(0, 'a'): *, (1,): *})"


def test_unsortable_dict_keys_raise_value_error_like_jax():
  with pytest.raises(ValueError) as e:
    tu.tree_flatten({1: 'a', 'b': 2})
  assert _msg(e) == 'Comparator raised exception while sorting pytree dictionary keys.'
  assert isinstance(e.value.__cause__, TypeError)


def test_namedtuple_is_a_node_with_its_own_type():
  leaves, treedef = tu.tree_flatten((Point(1, [2]),))
  assert leaves == [1, 2]
  assert repr(treedef) == 'PyTreeDef((CustomNode(namedtuple[Point], [*, [*]]),))'
  assert treedef.unflatten([5, 6]) == (Point(5, [6]),)
  assert type(treedef.unflatten([5, 6])[0]) is Point


def test_namedtuple_subclass_is_a_node_but_tuple_and_dict_subclasses_are_leaves():
  class T(tuple):
    pass

  class D(dict):
    pass
  assert repr(tu.tree_structure(SubPoint(1, 2))) == (
      'PyTreeDef(CustomNode(namedtuple[SubPoint], [*, *]))')
  assert tu.tree_leaves(T((1, 2))) == [T((1, 2))]
  assert tu.tree_leaves(D(a=1)) == [D(a=1)]


def test_ordered_dict_keeps_insertion_order():
  od = collections.OrderedDict([('b', 1), ('a', 2)])
  leaves, treedef = tu.tree_flatten(od)
  assert leaves == [1, 2]
  assert repr(treedef) == "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"
  out = treedef.unflatten([10, 20])
  assert type(out) is collections.OrderedDict and list(out.items()) == [('b', 10), ('a', 20)]


def test_defaultdict_keeps_default_factory_in_aux_data():
  dd = collections.defaultdict(list, {'b': 1, 'a': 2})
  leaves, treedef = tu.tree_flatten(dd)
  assert leaves == [2, 1]
  assert repr(treedef) == (
      "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))")
  out = tu.tree_map(lambda x: x * 10, dd)
  assert type(out) is collections.defaultdict and out.default_factory is list
  assert dict(out) == {'a': 20, 'b': 10}


def test_custom_node_repr_prints_aux_data_with_str():
  assert repr(tu.tree_structure(Box(1, 'x'))) == 'PyTreeDef(CustomNode(Box[x], [*]))'
  assert repr(tu.tree_structure(Box(1, ('x', 1.5, None)))) == (
      "PyTreeDef(CustomNode(Box[('x', 1.5, None)], [*]))")
  assert repr(tu.tree_structure(Many())) == 'PyTreeDef(CustomNode(Many[None], []))'


def test_custom_flatten_may_return_an_iterator_and_unflatten_gets_a_tuple():
  seen = []

  class Probe:
    def __init__(self, a):
      self.a = a
  tu.register_pytree_node(Probe, lambda p: (iter([p.a]), None),
                          lambda _, ch: seen.append(type(ch)) or Probe(*ch))
  out = tu.tree_map(lambda x: x + 1, Probe(1))
  assert out.a == 2 and seen == [tuple]


# --- is_leaf -----------------------------------------------------------------------


def test_is_leaf_is_called_top_down_on_every_subtree_including_none():
  calls = []
  tree = (1, None, [2, (3,)])
  leaves, treedef = tu.tree_flatten(tree, is_leaf=lambda x: calls.append(x) or x is None)
  assert leaves == [1, None, 2, 3]
  assert repr(treedef) == 'PyTreeDef((*, *, [*, (*,)]))'
  assert calls == [tree, 1, None, [2, (3,)], 2, (3,), 3]


def test_is_leaf_stops_recursion_and_can_make_the_root_a_leaf():
  leaves, treedef = tu.tree_flatten((1, None, [2, (3,)]), is_leaf=lambda x: isinstance(x, list))
  assert leaves == [1, [2, (3,)]]
  assert repr(treedef) == 'PyTreeDef((*, None, *))'
  assert tu.tree_flatten((1, 2), is_leaf=lambda x: True) == ([(1, 2)], tu.tree_structure(0))
  assert tu.tree_leaves(None, is_leaf=lambda x: x is None) == [None]


# --- PyTreeDef ---------------------------------------------------------------------


def test_num_leaves_and_num_nodes():
  treedef = tu.tree_structure((1, {'a': 2, 'b': [3, None]}))
  assert (treedef.num_leaves, treedef.num_nodes) == (3, 7)
  partial_def = tu.tree_structure(tu.Partial(print, 1, k=2))
  assert (partial_def.num_leaves, partial_def.num_nodes) == (2, 5)


def test_treedef_equality_and_hash_depend_only_on_structure():
  a = tu.tree_structure((1, {'a': 2}))
  b = tu.tree_structure(('x', {'a': np.zeros(3)}))
  assert a == b and hash(a) == hash(b) and not (a != b)
  assert a != tu.tree_structure((1, {'b': 2}))
  assert not (a == 5)
  assert {a: 1}[b] == 1


def test_treedef_distinguishes_container_types():
  assert tu.tree_structure([1]) != tu.tree_structure((1,))
  assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))
  assert tu.tree_structure(Point(1, 2)) != tu.tree_structure(Other(1, 2))
  assert tu.tree_structure(None) != tu.tree_structure(())
  assert tu.tree_structure((1, 2)) != tu.tree_structure(1)


def test_treedef_equality_includes_custom_aux_data():
  assert tu.tree_structure(Box(1, 2)) == tu.tree_structure(Box(3, 2))
  assert tu.tree_structure(Box(1, 2)) != tu.tree_structure(Box(1, 3))
  # Aux data compares with ==, as in JAX.
  assert tu.tree_structure(Box(1, 1)) == tu.tree_structure(Box(1, 1.0))


def test_treedef_hash_works_with_unhashable_aux_data():
  a, b = tu.tree_structure(Box(1, [1])), tu.tree_structure(Box(2, [1]))
  assert a == b and hash(a) == hash(b)


def test_treedef_equality_with_array_aux_data_raises_clear_error():
  a, b = tu.tree_structure(Box(1, np.arange(3))), tu.tree_structure(Box(1, np.arange(3)))
  with pytest.raises(ValueError, match='arrays cannot be passed as metadata fields'):
    a == b


def test_treedef_cannot_be_constructed_or_mutated():
  with pytest.raises(TypeError):
    tu.PyTreeDef()
  treedef = tu.tree_structure((1, 2))
  with pytest.raises(AttributeError):
    treedef.num_leaves = 3
  with pytest.raises(AttributeError):
    treedef.extra = 1
  assert copy.copy(treedef) is treedef and copy.deepcopy(treedef) is treedef


def test_treedef_pickles_by_type():
  treedef = tu.tree_structure({'a': (1, Point(2, [None])), 'b': Box(3, 'aux'),
                               'c': collections.OrderedDict(z=1)})
  again = pickle.loads(pickle.dumps(treedef))
  assert again == treedef and hash(again) == hash(treedef) and repr(again) == repr(treedef)


def test_children_and_node_data():
  treedef = tu.tree_structure({'b': 1, 'a': (2, 3)})
  assert treedef.node_data() == (dict, ['a', 'b'])
  assert [repr(c) for c in treedef.children()] == ['PyTreeDef((*, *))', 'PyTreeDef(*)']
  assert tu.treedef_children(treedef) == treedef.children()
  assert tu.tree_structure(5).node_data() is None and tu.tree_structure(5).children() == []
  assert tu.tree_structure(Box(1, 2)).node_data() == (Box, 2)
  assert tu.tree_structure(Point(1, 2)).node_data() == (Point, None)
  assert tu.tree_structure((1,)).node_data() == (tuple, None)


def test_compose_and_treedef_tuple():
  outer, inner = tu.tree_structure((1, 2)), tu.tree_structure([1, {'a': 1}])
  assert repr(outer.compose(inner)) == "PyTreeDef(([*, {'a': *}], [*, {'a': *}]))"
  assert outer.compose(inner).num_leaves == 4
  pair = tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, 2])])
  assert repr(pair) == 'PyTreeDef((*, [*, *]))' and pair.num_leaves == 3
  assert pair == tu.tree_structure((0, [0, 0]))
  assert repr(tu.treedef_tuple([])) == 'PyTreeDef(())'


def test_treedef_is_leaf_counts_childless_nodes_as_leaves():
  assert tu.treedef_is_leaf(tu.tree_structure(1))
  assert tu.treedef_is_leaf(tu.tree_structure(None))
  assert not tu.treedef_is_leaf(tu.tree_structure([1]))


def test_walk_and_from_iterable_tree():
  treedef = tu.tree_structure([1, (2, 3)])
  assert treedef.walk(lambda xs, data: xs, lambda x: x * 10, [1, 2, 3]) == (10, (20, 30))
  assert tu.tree_structure({'a': 1, 'b': (1, 2)}).from_iterable_tree([5, (6, 7)]) == {
      'a': 5, 'b': (6, 7)}
  assert tu.build_tree(tu.tree_structure((1, 2)), [5, 6]) == (5, 6)
  with pytest.raises(ValueError, match='Arity mismatch between trees'):
    tu.tree_structure({'a': 1, 'b': (1, 2)}).from_iterable_tree([5, (6, 7, 8)])


# --- unflatten ---------------------------------------------------------------------


def test_unflatten_roundtrip_preserves_types():
  tree = (1, [2, {'k': Point(3, None)}], Box(4, 'a'), Params(5, 6, 'x'))
  leaves, treedef = tu.tree_flatten(tree)
  out = tu.tree_unflatten(treedef, leaves)
  assert out[:2] == tree[:2] and type(out[1]) is list
  assert out[2].value == 4 and out[2].aux == 'a' and out[3] == Params(5, 6, 'x')


def test_unflatten_accepts_any_iterable_and_a_leaf_treedef():
  treedef = tu.tree_structure((1, {'a': 2}))
  assert treedef.unflatten(x for x in [7, 8]) == (7, {'a': 8})
  assert tu.tree_unflatten(tu.tree_structure(1), [5]) == 5
  assert tu.tree_structure(None).unflatten([]) is None


def test_unflatten_with_wrong_number_of_leaves_says_expected_and_got():
  treedef = tu.tree_structure((1, {'a': 2, 'b': [3, None]}))
  with pytest.raises(ValueError) as e:
    treedef.unflatten([1, 2])
  assert _msg(e) == 'Too few leaves for PyTreeDef; expected 3, got 2'
  with pytest.raises(ValueError) as e:
    treedef.unflatten([1, 2, 3, 4])
  assert _msg(e) == 'Too many leaves for PyTreeDef; expected 3.'


# --- flatten_up_to -----------------------------------------------------------------


def test_flatten_up_to_returns_subtrees_at_prefix_leaves():
  treedef = tu.tree_structure([1, 2])
  assert treedef.flatten_up_to([[1, 2], {'a': (3,)}]) == [[1, 2], {'a': (3,)}]
  assert tu.tree_structure([None, 1]).flatten_up_to([None, None]) == [None]


@pytest.mark.parametrize('prefix, full, message', [
    ((1, 2), (1, 2, 3), 'Tuple arity mismatch: 3 != 2; tuple: (1, 2, 3).'),
    ((1, 2), [1, 2], 'Expected tuple, got [1, 2].'),
    ((1, 2), Point(1, 2), 'Expected tuple, got Point(x=1, y=2).'),
    ([1, 2], [3], 'List arity mismatch: 1 != 2; list: [3].'),
    ({'a': 1, 'b': 2}, {'c': 1, 'a': 2},
     "Dict key mismatch; expected keys: ['a', 'b']; present keys: ['a', 'c']."),
    ({'a': 1}, collections.OrderedDict(a=1), "Expected dict, got OrderedDict([('a', 1)])."),
    (Point(1, 2), Other(1, 2),
     f'Named tuple type mismatch: expected type: {Point!r}, tuple: Other(x=1, y=2).'),
    (Point(1, 2), (1, 2), 'Expected named tuple, got (1, 2).'),
    (Box(1, 2), Box(1, 3), 'Mismatch custom node data: 2 != 3; value: Box(1, 3).'),
    (Box(1, 'b'), Box(1, 'a'), "Mismatch custom node data: 'b' != 'a'; value: Box(1, 'a')."),
    (Box(1, 2), 5,
     f'Custom node type mismatch: expected type: {Box!r}, value: 5.'),
    (Many(1, 2), Many(1, 2, 3), 'Custom type arity mismatch: 3 != 2; value: Many(1, 2, 3).'),
    (Params(1, 2, 'a'), Params(1, 2, 'b'),
     "Mismatch custom dataclass node data: ('a',) != ('b',); "
     "value: Params(w=1, b=2, name='b')."),
])
def test_flatten_up_to_errors_match_jax(prefix, full, message):
  with pytest.raises(ValueError) as e:
    tu.tree_structure(prefix).flatten_up_to(full)
  assert _msg(e) == message


def test_flatten_up_to_none_is_a_prefix_only_of_none():
  with pytest.raises(ValueError) as e:
    tu.tree_structure([None]).flatten_up_to([(1, 2)])
  assert _msg(e).startswith('Expected None, got (1, 2).\n\n')
  assert 'is_leaf=lambda x: x is None' in _msg(e)


# --- tree_map ----------------------------------------------------------------------


def test_tree_map_single_tree():
  assert tu.tree_map(lambda x: x * 2, {'a': 1, 'b': (2, None)}) == {'a': 2, 'b': (4, None)}
  assert tu.tree_map(lambda x: None, [1, 2]) == [None, None]


def test_tree_map_several_trees_with_first_as_prefix():
  assert tu.tree_map(lambda x, y: (x, y), (1, 2), ([1, 2], {'a': 3})) == (
      (1, [1, 2]), (2, {'a': 3}))
  assert tu.tree_map(lambda x, y, z: x + y + z, [1, 2], [10, 20], [100, 200]) == [111, 222]
  assert tu.tree_map(lambda x, y: y, [1, 2], [[2, 3], None]) == [[2, 3], None]


def test_tree_map_is_leaf_applies_to_the_first_tree():
  assert tu.tree_map(lambda x, y: (x, y), [1, None], [1, 2], is_leaf=lambda x: x is None) == [
      (1, 1), (None, 2)]


def test_tree_map_list_length_mismatch_names_the_key_path():
  with pytest.raises(ValueError) as e:
    tu.tree_map(lambda a, b: a, [1, {'a': [1, 2]}], [1, {'a': [1, 2, (3,)]}])
  assert _msg(e) == (
      'pytree structure error: different lengths of list at key path\n'
      "    tree_map tree[1]['a']\n"
      'At that key path, the prefix pytree tree_map tree has a subtree of type list of '
      'length 2, but the full pytree has a subtree of the same type but of length 3.')


def test_tree_map_type_mismatch_error():
  with pytest.raises(ValueError) as e:
    tu.tree_map(lambda a, b: a, (1, None), (1, 3))
  assert _msg(e) == (
      'pytree structure error: different types at key path\n'
      '    tree_map tree[1]\n'
      'At that key path, the prefix pytree tree_map tree has a subtree of type\n'
      "    <class 'NoneType'>\n"
      'but at the same key path the full pytree has a subtree of different type\n'
      "    <class 'int'>.")


def test_tree_map_dict_key_mismatch_reports_metadata_diff():
  with pytest.raises(ValueError) as e:
    tu.tree_map(lambda a, b: a, (1, {'a': 2}), (1, {'b': 2}))
  assert _msg(e) == (
      'pytree structure error: different pytree metadata at key path\n'
      '    tree_map tree[1]\n'
      'At that key path, the prefix pytree tree_map tree has a subtree of type\n'
      "    <class 'dict'>\n"
      'with metadata\n'
      "    ('a',)\n"
      'but at the same key path the full pytree has a subtree of the same type but with '
      'metadata\n'
      "    ('b',)\n"
      'so the diff in the metadata at these pytree nodes is\n'
      "    - ('a',)\n    ?   ^\n\n    + ('b',)\n    ?   ^\n")


def test_tree_map_child_count_mismatch_lists_the_keys():
  with pytest.raises(ValueError) as e:
    tu.tree_map(lambda a, b: a, {'a': 1, 'b': 2}, {'a': 1, 'c': 2, 'd': 3})
  assert _msg(e) == (
      'pytree structure error: different numbers of pytree children at key path\n'
      '    tree_map tree\n'
      'At that key path, the prefix pytree tree_map tree has a subtree of type\n'
      "    <class 'dict'>\n"
      'with 2 child keys\n'
      '    a b\n'
      'but at the same key path the full pytree has a subtree of the same type but with '
      '3 child keys\n'
      '    a c d\n'
      'so the symmetric difference on key sets is\n'
      '    b c d')


def test_tree_map_custom_aux_mismatch_error():
  with pytest.raises(ValueError, match=re.escape(
      "different pytree metadata at key path\n    tree_map tree[1]\n")):
    tu.tree_map(lambda a, b: a, (1, Box(1, 2)), (1, Box(1, 3)))


def test_equality_and_prefix_errors_describe_the_first_difference():
  from jaxlite._src.base.tree import equality_errors, prefix_errors
  assert list(equality_errors((1, [2, 3]), (1, [2]))) == [
      ((SequenceKey(1),), 'list of length 2', 'list of length 1', 'the lengths do not match')]
  assert list(equality_errors((1, {'a': None}), (1, {'a': 2}))) == [
      ((SequenceKey(1), DictKey('a')), "<class 'NoneType'>", "<class 'int'>",
       'their Python types differ')]
  assert list(equality_errors({'a': 1}, {'b': 1, 'c': 2}))[0][3] == (
      "the numbers of children do not match, with the symmetric difference of key sets: "
      "{'a' 'b' 'c'}")
  assert list(equality_errors((1, 2), (3, 4))) == []
  assert prefix_errors((1, 2), ([1], {'a': 3})) == []
  [err] = prefix_errors((1, 2), (1, 2, 3))
  assert str(err('x')).startswith('pytree structure error: different lengths of tuple')


def test_tree_map_with_path_passes_key_paths():
  out = tu.tree_map_with_path(lambda p, x: (tu.keystr(p), x), {'a': [1, Point(2, 3)]})
  assert out == {'a': [("['a'][0]", 1), Point(("['a'][1].x", 2), ("['a'][1].y", 3))]}
  assert tu.tree_map_with_path(lambda p, x, y: x + y, [1, 2], [3, 4]) == [4, 6]
  with pytest.raises(ValueError, match='tree_map_with_path tree'):
    tu.tree_map_with_path(lambda p, x, y: x, [1, 2], [3, 4, 5])


# --- key paths ---------------------------------------------------------------------


def test_flatten_with_path_uses_the_right_key_kind_per_node():
  tree = (Point(1, [2]), {'a': 3}, Box(4, 5), Params(6, 7), None,
          collections.OrderedDict(z=8), tu.Partial(add3, 9, c=10))
  pairs, treedef = tu.tree_flatten_with_path(tree)
  assert [x for _, x in pairs] == tu.tree_leaves(tree)
  assert treedef == tu.tree_structure(tree)
  assert [p for p, _ in pairs] == [
      (SequenceKey(0), GetAttrKey('x')),
      (SequenceKey(0), GetAttrKey('y'), SequenceKey(0)),
      (SequenceKey(1), DictKey('a')),
      (SequenceKey(2), FlattenedIndexKey(0)),
      (SequenceKey(3), GetAttrKey('w')),
      (SequenceKey(3), GetAttrKey('b')),
      (SequenceKey(5), DictKey('z')),
      (SequenceKey(6), FlattenedIndexKey(0), SequenceKey(0)),
      (SequenceKey(6), FlattenedIndexKey(1), DictKey('c')),
  ]


def test_flatten_with_path_of_a_leaf_and_of_none():
  assert tu.tree_flatten_with_path(5) == ([((), 5)], tu.tree_structure(5))
  assert tu.tree_leaves_with_path(None) == []


def test_registered_keys_and_flattened_index_keys():
  pairs, treedef = tu.tree_flatten_with_path(Keyed(1, [2]))
  assert pairs == [((GetAttrKey('x'),), 1), ((DictKey('yy'), SequenceKey(0)), 2)]
  assert repr(treedef) == 'PyTreeDef(CustomNode(Keyed[aux], [*, [*]]))'
  assert tu.tree_leaves(Keyed(1, [2])) == [1, 2]
  paths = [p for p, _ in tu.tree_leaves_with_path(Pair(1, {'a': 2}))]
  assert paths == [(FlattenedIndexKey(0),), (FlattenedIndexKey(1), DictKey('a'))]


def test_is_leaf_takes_path():
  tree = [1, {'a': 2}]
  pairs = tu.tree_leaves_with_path(tree, is_leaf=lambda p, x: len(p) == 1,
                                   is_leaf_takes_path=True)
  assert pairs == [((SequenceKey(0),), 1), ((SequenceKey(1),), {'a': 2})]
  pairs = tu.tree_leaves_with_path(tree, is_leaf=lambda x: isinstance(x, dict))
  assert pairs == [((SequenceKey(0),), 1), ((SequenceKey(1),), {'a': 2})]


def test_keystr_default_simple_and_separator():
  keys = (SequenceKey(0), DictKey('a'), DictKey(1), GetAttrKey('x'), FlattenedIndexKey(3))
  assert tu.keystr(keys) == "[0]['a'][1].x[<flat index 3>]"
  assert tu.keystr(keys, simple=True, separator='/') == '0/a/1/x/3'
  assert tu.keystr(()) == ''
  assert tu.keystr(('a', 1)) == 'a1'


def test_key_entries_repr_eq_hash_and_match():
  assert repr(SequenceKey(0)) == 'SequenceKey(idx=0)'
  assert repr(DictKey('a')) == "DictKey(key='a')"
  assert repr(GetAttrKey('x')) == "GetAttrKey(name='x')"
  assert repr(FlattenedIndexKey(3)) == 'FlattenedIndexKey(key=3)'
  assert SequenceKey(0) == SequenceKey(idx=0) and hash(SequenceKey(0)) == hash(SequenceKey(0))
  assert SequenceKey(0) != FlattenedIndexKey(0) and DictKey(0) != SequenceKey(0)
  match GetAttrKey('x'):
    case GetAttrKey(name=n):
      assert n == 'x'
  assert (SequenceKey.__match_args__, DictKey.__match_args__) == (('idx',), ('key',))
  assert pickle.loads(pickle.dumps(DictKey('k'))) == DictKey('k')


def test_key_entries_are_typed_and_immutable():
  with pytest.raises(TypeError):
    SequenceKey('a')
  with pytest.raises(TypeError):
    GetAttrKey(1)
  with pytest.raises(TypeError):
    FlattenedIndexKey('a')
  with pytest.raises(TypeError):
    hash(DictKey([1]))
  with pytest.raises(AttributeError):
    SequenceKey(0).idx = 3


# --- registration ------------------------------------------------------------------


def test_registering_a_type_twice_raises():
  with pytest.raises(ValueError) as e:
    tu.register_pytree_node(Box, lambda b: ((), None), lambda aux, ch: None)
  assert _msg(e) == f'Duplicate custom PyTreeDef type registration for {Box!r}.'
  for builtin in (tuple, list, dict, collections.OrderedDict):
    with pytest.raises(ValueError, match='Duplicate custom PyTreeDef type registration'):
      tu.register_pytree_node(builtin, lambda b: ((), None), lambda aux, ch: None)
  with pytest.raises(ValueError, match='Duplicate custom dataclass PyTreeDef type'):
    tu.register_dataclass(Params)


def test_registering_a_namedtuple_type_overrides_namedtuple_handling():
  NT = collections.namedtuple('NT', 'a b')
  assert repr(tu.tree_structure(NT(1, 2))) == 'PyTreeDef(CustomNode(namedtuple[NT], [*, *]))'
  tu.register_pytree_node(NT, lambda t: ((t.a,), t.b), lambda b, ch: NT(ch[0], b))
  assert repr(tu.tree_structure(NT(1, 2))) == 'PyTreeDef(CustomNode(NT[2], [*]))'


def test_register_pytree_with_keys_derives_flatten():
  class KV:
    def __init__(self, d):
      self.d = d
  tu.register_pytree_with_keys(
      KV, lambda kv: ([(DictKey(k), v) for k, v in kv.d.items()], tuple(kv.d)),
      lambda keys, vals: KV(dict(zip(keys, vals))))
  assert tu.tree_leaves(KV({'p': 1, 'q': 2})) == [1, 2]
  assert tu.tree_map(lambda x: -x, KV({'p': 1})).d == {'p': -1}
  assert tu.tree_leaves_with_path(KV({'p': 1})) == [((DictKey('p'),), 1)]


def test_register_dataclass_infers_fields_and_static_metadata():
  leaves, treedef = tu.tree_flatten(Params(1, 2, 'conv'))
  assert leaves == [1, 2]
  assert repr(treedef) == "PyTreeDef(CustomNode(Params[('conv',)], [*, *]))"
  assert treedef.node_data() == (Params, ('conv',))
  assert tu.tree_map(lambda x: x * 10, Params(1, 2)) == Params(10, 20, 'dense')
  assert tu.tree_structure(Params(1, 2, 'a')) != tu.tree_structure(Params(1, 2, 'b'))


def test_register_dataclass_with_jaxlite_tree_static_and_no_meta_fields():
  @tu.register_dataclass
  @dataclasses.dataclass
  class Op:
    x: object
    op: str = jtree.static(default='add')
  assert repr(tu.tree_structure(Op(1))) == "PyTreeDef(CustomNode(Op[('add',)], [*]))"

  @tu.register_dataclass
  @dataclasses.dataclass
  class Plain:
    x: object
    y: object
  assert repr(tu.tree_structure(Plain(1, 2))) == 'PyTreeDef(CustomNode(Plain[()], [*, *]))'


def test_register_dataclass_explicit_fields_on_a_plain_class():
  class NotDC:
    def __init__(self, a, b):
      self.a, self.b = a, b
  tu.register_dataclass(NotDC, data_fields=['a'], meta_fields=['b'])
  pairs, treedef = tu.tree_flatten_with_path(NotDC(1, 2))
  assert pairs == [((GetAttrKey('a'),), 1)]
  assert repr(treedef) == 'PyTreeDef(CustomNode(NotDC[(2,)], [*]))'
  out = treedef.unflatten([5])
  assert (out.a, out.b) == (5, 2)


def test_register_dataclass_field_errors_match_jax():
  @dataclasses.dataclass
  class D2:
    x: int
    y: int
  with pytest.raises(ValueError) as e:
    tu.register_dataclass(D2, data_fields=['x'], meta_fields=[])
  assert _msg(e) == (
      'data_fields and meta_fields must include all dataclass fields with ``init=True`` '
      "and only them. Missing fields: {'y'}. Add them to drop_fields to suppress this "
      'error.')
  with pytest.raises(ValueError, match=re.escape("Unexpected fields: {'z'}.")):
    tu.register_dataclass(D2, data_fields=['x', 'z'], meta_fields=['y'])
  with pytest.raises(ValueError, match=re.escape("Overlapping fields: {'x'}.")):
    tu.register_dataclass(D2, data_fields=['x'], meta_fields=['x', 'y'])
  with pytest.raises(TypeError, match='must both be specified'):
    tu.register_dataclass(D2, data_fields=['x'])
  with pytest.raises(TypeError, match='required when nodetype is not a dataclass'):
    tu.register_dataclass(int)


def test_register_static_puts_the_value_in_the_treedef():
  leaves, treedef = tu.tree_flatten((1, Tag(3)))
  assert leaves == [1]
  assert repr(treedef) == 'PyTreeDef((*, CustomNode(Tag[Tag(3)], [])))'
  assert treedef.unflatten([7]) == (7, Tag(3))
  assert treedef != tu.tree_structure((1, Tag(4)))


def test_is_tree_node():
  assert tu.is_tree_node(tuple) and tu.is_tree_node(Point) and tu.is_tree_node(type(None))
  assert tu.is_tree_node(Box) and not tu.is_tree_node(int)


def test_flatten_one_level():
  assert tu.flatten_one_level({'b': [1, 2], 'a': 3}) == ((3, [1, 2]), ('a', 'b'))
  assert tu.flatten_one_level(None) == ((), None)
  with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
    tu.flatten_one_level(5)


# --- Partial -----------------------------------------------------------------------


def test_partial_is_a_pytree_over_its_arguments():
  p = tu.Partial(add3, 1, c=3)
  assert p(2) == 6 and isinstance(p, functools.partial)
  leaves, treedef = tu.tree_flatten(p)
  assert leaves == [1, 3]
  assert repr(treedef) == f"PyTreeDef(CustomNode(Partial[{add3!r}], [(*,), {{'c': *}}]))"
  mapped = tu.tree_map(lambda x: x * 10, p)
  assert type(mapped) is tu.Partial and mapped(2) == 42


def test_partial_of_a_partial_keeps_only_its_own_arguments_as_leaves():
  inner = tu.Partial(add3, 1, c=3)
  outer = tu.Partial(inner, 5)
  assert tu.tree_leaves(outer) == [5] and outer() == 9
  assert tu.tree_leaves(tu.Partial(functools.partial(add3, 1), 2)) == [2]
  assert tu.tree_map(lambda x: x + 1, outer)() == 10


def test_partial_treedefs_compare_functions():
  assert tu.tree_structure(tu.Partial(add3, 1)) == tu.tree_structure(tu.Partial(add3, 2))
  assert tu.tree_structure(tu.Partial(add3, 1)) != tu.tree_structure(tu.Partial(print, 1))


# --- reductions, transpose, broadcast ----------------------------------------------


def test_tree_reduce():
  assert tu.tree_reduce(operator.add, [1, (2, 3)]) == 6
  assert tu.tree_reduce(operator.add, [1, (2, 3)], 10) == 16
  assert tu.tree_reduce(operator.add, [], 0) == 0
  with pytest.raises(TypeError, match='reduce'):
    tu.tree_reduce(operator.add, [])
  assert tu.tree_reduce(lambda a, b: a + len(b), [[1, 2], [3]], 0,
                        is_leaf=lambda x: isinstance(x, list) and not
                        any(isinstance(i, list) for i in x)) == 3


def test_tree_reduce_associative():
  assert tu.tree_reduce_associative(operator.add, [1, 2, 3, 4, 5]) == 15
  assert tu.tree_reduce_associative(operator.add, [], identity=0) == 0
  with pytest.raises(TypeError, match='Must specify identity'):
    tu.tree_reduce_associative(operator.add, [])


def test_tree_all():
  assert tu.tree_all([True, (1, None)])
  assert not tu.tree_all([True, (0, None)])
  assert tu.tree_all([])
  assert not tu.tree_all([[]], is_leaf=lambda x: x == [])


def test_all_leaves():
  assert tu.all_leaves([1, 2, np.arange(2)])
  assert not tu.all_leaves([1, None])
  assert not tu.all_leaves([1, (2,)])
  assert tu.all_leaves([1, (2,)], is_leaf=lambda x: isinstance(x, tuple))
  assert tu.all_leaves([])


def test_tree_transpose():
  outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0))
  tree = [(1, 2, 3), (4, 5, 6)]
  assert tu.tree_transpose(outer, inner, tree) == ([1, 4], [2, 5], [3, 6])
  assert tu.tree_transpose(outer, None, tree) == ([1, 4], [2, 5], [3, 6])
  assert tu.tree_transpose(tu.tree_structure({'a': 0, 'b': 0}), tu.tree_structure([0, 0]),
                           {'a': [1, 2], 'b': [3, 4]}) == [{'a': 1, 'b': 3}, {'a': 2, 'b': 4}]


def test_tree_transpose_mismatch_is_a_type_error():
  with pytest.raises(TypeError) as e:
    tu.tree_transpose(tu.tree_structure([0, 0]), tu.tree_structure((0, 0)),
                      [(1, 2, 3), (4, 5, 6)])
  assert _msg(e) == 'Mismatch\nPyTreeDef([(*, *, *), (*, *, *)])\n != \nPyTreeDef([(*, *), (*, *)])'


def test_tree_broadcast():
  assert tu.tree_broadcast((1, 2), ((3, 4), {'a': 5, 'b': [6]})) == ((1, 1), {'a': 2, 'b': [2]})
  assert tu.tree_broadcast([1, None], [[3, 4], None]) == [[1, 1], None]
  with pytest.raises(ValueError, match='broadcast_prefix prefix_tree'):
    tu.tree_broadcast((1, 2), ((3, 4), {'a': 5}, 7))


# --- jaxlite.tree namespace and layering -------------------------------------------


def test_jaxlite_tree_aliases():
  tree = {'a': [1, 2], 'b': None}
  leaves, treedef = jtree.flatten(tree)
  assert leaves == [1, 2] and jtree.unflatten(treedef, leaves) == tree
  assert jtree.map(lambda x: x + 1, tree) == {'a': [2, 3], 'b': None}
  assert jtree.leaves(tree) == [1, 2] and jtree.structure(tree) == treedef
  assert jtree.reduce(operator.add, tree) == 3 and jtree.all(tree)
  assert jtree.leaves_with_path(tree)[0] == ((DictKey('a'), SequenceKey(0)), 1)
  assert jtree.flatten_with_path(tree)[1] == treedef
  assert jtree.map_with_path(lambda p, x: len(p), tree) == {'a': [2, 2], 'b': None}
  assert jtree.transpose(jtree.structure([0, 0]), None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
  assert jtree.broadcast(0, [1, 2]) == [0, 0]


def test_tree_module_never_imports_jax():
  code = ('import sys, jaxlite.tree_util, jaxlite.tree; '
          "sys.exit(any(m == 'jax' or m.startswith(('jax.', 'jaxlib')) for m in sys.modules))")
  assert subprocess.run([sys.executable, '-c', code]).returncode == 0
