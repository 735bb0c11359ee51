"""``jax.sharding.PartitionSpec`` as a value: construction (its canonical entries and
``unreduced=``/``reduced=`` axes), printing, equality, the sequence protocol and its
refusals, ``update`` and the cotangent spec. ``report(jax)`` runs each case on either
library; make_partition_spec_reference.py records JAX 0.10.2's, compared by
tests/test_partition_spec.py. Sets of two or more axes are compared, not printed: their
printed order follows string hashing."""
import copy
import pickle


def cases(jax):
  P = jax.sharding.PartitionSpec
  return {
      "one": lambda: P("x"),
      "empty": lambda: P(),
      "mixed": lambda: P("x", None, ("a", "b")),
      "list_is_tuple": lambda: P(["x", "y"]),
      "tuple_of_one_is_the_name": lambda: P(("x",)),
      "list_of_one_is_the_name": lambda: P(["x"]),
      "empty_tuple_is_none": lambda: P((), None),
      "empty_list_is_none": lambda: P([]),
      "unconstrained": lambda: P(P.UNCONSTRAINED, "x"),
      "unreduced": lambda: P("x", unreduced={"y"}),
      "reduced": lambda: P("x", reduced={"y"}),
      "both": lambda: P(None, reduced={"y"}, unreduced={"z"}),
      "no_partitions_unreduced": lambda: P(unreduced={"y"}),
      "unconstrained_unreduced": lambda: P(P.UNCONSTRAINED, unreduced={"x"}),
      "frozenset_given": lambda: P("x", unreduced=frozenset({"y"})).unreduced,
      "empty_unreduced": lambda: P("x", unreduced=frozenset()),
      "fields": lambda: (P("x", unreduced={"u"}).partitions, P("x").unreduced,
                         P("x").reduced),
      "unreduced_tuple": lambda: P("x", unreduced=("y", "z")),
      "unreduced_str": lambda: P("x", unreduced="y"),
      "unreduced_none": lambda: P("x", unreduced=None),
      "reduced_list": lambda: P("x", reduced=["a"]),
      "unreduced_holds_none": lambda: P("x", unreduced={None}),
      "reduced_holds_none": lambda: P("x", unreduced={"y"}, reduced={None}),
      "unreduced_overlaps_partitions": lambda: P("x", unreduced={"x"}),
      "unreduced_overlaps_a_tuple": lambda: P(("x", "y"), unreduced={"x"}),
      "reduced_overlaps_partitions": lambda: P("x", reduced={"x"}),
      "unreduced_overlaps_reduced": lambda: P(unreduced={"y"}, reduced={"y"}),
      "overlap_checked_before_partitions": lambda: P("x", unreduced={"x"}, reduced={"x"}),
      "unknown_keyword_is_a_type_error": lambda: type(_raised(lambda: P("x", foo=1))),
      "a_repeated_axis_is_accepted": lambda: P("x", "x"),
      "equal": lambda: P("x") == P("x"),
      "not_equal_to_a_tuple": lambda: (P("x") == ("x",), ("x",) == P("x")),
      "trailing_none_matters": lambda: (P("x", None) == P("x"), P(None) == P()),
      "unreduced_matters": lambda: P("x") == P("x", unreduced={"y"}),
      "equal_unreduced": lambda: P("x", unreduced={"u"}) == P("x", unreduced={"u"}),
      "dict_key": lambda: {P("x"): 1}[P("x")],
      "sets_compared": lambda: (P("x", "y", unreduced={"b", "a"}).unreduced
                                == frozenset({"a", "b"})),
      "not_a_tuple": lambda: isinstance(P("x"), tuple),
      "length": lambda: (len(P("x", None)), len(P("x", unreduced={"y"}))),
      "indexing": lambda: (P("x", "y")[-1], P("x", "y")[1:], type(P("x")[0:1]).__name__),
      "index_out_of_range": lambda: P("x")[5],
      "iteration": lambda: (list(P("x", None)), "x" in P("x"), tuple(P("x", "y"))),
      "count_index": lambda: (P("x", None).count(None), P("x", "y").index("y")),
      "indexing_refused_with_unreduced": lambda: P("x", unreduced={"y"})[0],
      "iteration_refused_with_unreduced": lambda: tuple(P("x", unreduced={"y"})),
      "add_tuple": lambda: P("x") + ("y",),
      "radd_tuple": lambda: ("x",) + P("y"),
      "add_spec": lambda: P("x") + P("y"),
      "add_keeps_unreduced": lambda: P("x", unreduced={"y"}) + P("z"),
      "add_merges_unreduced": lambda: sorted((P("x", unreduced={"y"})
                                              + P("z", unreduced={"w"})).unreduced),
      "add_tuple_refused_with_unreduced": lambda: P("x", unreduced={"y"}) + ("y",),
      "multiply_refused": lambda: P("x") * 2,
      "ordering_refused": lambda: P("x") < P("y"),
      "truth": lambda: (bool(P()), bool(P(None))),
      "update_partitions": lambda: P("x", unreduced={"y"}).update(partitions=("z",)),
      "update_unreduced": lambda: P("x", unreduced={"y"}).update(unreduced={"w"}),
      "update_reduced": lambda: P("x").update(reduced={"w"}),
      "update_nothing": lambda: P("x").update(),
      "tangent_spec": lambda: P("x", unreduced={"u"}, reduced={"r"}).to_tangent_spec(),
      "cotangent_spec_swaps": lambda: P("x", unreduced={"u"}, reduced={"r"}).to_ct_spec(),
      "to_lo": lambda: P("x", "y", unreduced={"u"}).to_lo(),
      "normalized_for_aval": lambda: (P("x")._normalized_spec_for_aval(3),
                                      P("x", unreduced={"u"})._normalized_spec_for_aval(2)),
      "pickled": lambda: pickle.loads(pickle.dumps(P("x", None, unreduced={"y"}))),
      "deep_copied": lambda: copy.deepcopy(P("x", unreduced={"u"})),
      "frozen": lambda: P("x").__setattr__("unreduced", 1),
      "str": lambda: str(P("x", unreduced={"y"})),
      "class_name": lambda: (type(P("x")).__name__, jax.P is P),
      **sharding_cases(jax),
  }


def sharding_cases(jax):
  """``NamedSharding``'s checks of unreduced and reduced axes, on meshes of one device."""
  P, NamedSharding = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
  Auto, Explicit = jax.sharding.AxisType.Auto, jax.sharding.AxisType.Explicit
  mesh = lambda *types: jax.make_mesh((1, 1), ("x", "y"), axis_types=types)
  return {
      "named_unreduced_over_auto": lambda: NamedSharding(mesh(Auto, Auto),
                                                         P(None, unreduced={"x"})),
      "named_reduced_over_auto": lambda: NamedSharding(mesh(Auto, Auto),
                                                       P(None, reduced={"x"})),
      "named_reduced_missing": lambda: NamedSharding(mesh(Auto, Auto),
                                                     P(None, reduced={"q"})),
      "named_unreduced_missing": lambda: NamedSharding(mesh(Explicit, Explicit),
                                                       P(None, unreduced={"q"})),
      "named_reduced_missing_abstract": lambda: NamedSharding(
          mesh(Explicit, Explicit).abstract_mesh, P(None, reduced={"q"})),
      "named_unreduced_over_explicit": lambda: NamedSharding(mesh(Explicit, Explicit),
                                                             P(None, unreduced={"x"})),
      "named_reduced_over_explicit": lambda: NamedSharding(mesh(Explicit, Explicit),
                                                           P(reduced={"y"})),
      "named_unreduced_mixed_explicit_axis": lambda: NamedSharding(
          mesh(Auto, Explicit), P(None, unreduced={"y"})),
      "named_unreduced_mixed_auto_axis": lambda: NamedSharding(
          mesh(Auto, Explicit), P(unreduced={"x"})),
      "named_equality_counts_unreduced": lambda: (
          NamedSharding(mesh(Explicit, Explicit), P(None, unreduced={"x"}))
          == NamedSharding(mesh(Explicit, Explicit), P(None)),
          NamedSharding(mesh(Explicit, Explicit), P(None, unreduced={"x"}))
          == NamedSharding(mesh(Explicit, Explicit), P(unreduced={"x"}))),
  }


def _raised(f):
  try:
    f()
  except Exception as e:  # noqa: BLE001 - the exception is the case's value
    return e
  return None


def report(jax):
  """Each case's repr, or its exception's class and message."""
  out = {}
  for name, case in cases(jax).items():
    try:
      out[name] = repr(case())
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
      out[name] = f"{type(e).__name__}: {e}"
  return out
