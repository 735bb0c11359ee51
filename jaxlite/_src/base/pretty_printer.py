"""A Wadler-style pretty printer: documents of text, breaks, groups and nests.

A document describes text with optional line breaks. ``format`` lays it out for a line
width: each group prints flat (its breaks as their text) when it fits on the rest of the
line, and otherwise broken (its breaks as newlines, indented by the enclosing nests).
This is the algorithm of Lindig's "Strictly Pretty" (2000) with one change that JAX's
printer makes and jaxprs depend on: whether a group fits is decided by the group alone,
not by the text that follows it on the same line. The jaxpr printer in ``core`` builds
its documents from these pieces.

>>> doc = group(nest(2, concat([text("["), brk(""), join(brk(), [text("a=1"), text("b=2")])]))
...             + brk("") + text("]"))
>>> format(doc)
'[a=1 b=2]'
>>> print(format(doc, width=5))
[
  a=1
  b=2
]
"""
from __future__ import annotations

from typing import Iterable, Sequence


class Doc:
  """A document. Build one with ``text``, ``concat``, ``brk``, ``group`` and ``nest``."""
  __slots__ = ()

  def __add__(self, other: Doc) -> Doc:
    return concat([self, other])

  def __str__(self):
    return format(self)


class _Text(Doc):
  __slots__ = ("text",)

  def __init__(self, text: str):
    self.text = text


class _Concat(Doc):
  __slots__ = ("children",)

  def __init__(self, children: tuple):
    self.children = children


class _Break(Doc):
  __slots__ = ("text",)

  def __init__(self, text: str):
    self.text = text


class _Group(Doc):
  __slots__ = ("child",)

  def __init__(self, child: Doc):
    self.child = child


class _Nest(Doc):
  __slots__ = ("n", "child")

  def __init__(self, n: int, child: Doc):
    self.n = n
    self.child = child


def text(s: str) -> Doc:
  """Literal text, printed as it is."""
  return _Text(s)


def concat(docs: Iterable[Doc]) -> Doc:
  """The documents one after another."""
  return _Concat(tuple(docs))


def nil() -> Doc:
  """The empty document."""
  return _Concat(())


def brk(s: str = " ") -> Doc:
  """A possible line break: ``s`` in a flat group, a newline in a broken one."""
  return _Break(s)


def group(doc: Doc) -> Doc:
  """``doc`` printed flat if it fits on the rest of the line, otherwise broken."""
  return _Group(doc)


def nest(n: int, doc: Doc) -> Doc:
  """``doc`` with the lines its breaks start indented ``n`` more columns."""
  return _Nest(n, doc)


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
  """The documents with ``sep`` between each neighbouring pair."""
  parts = []
  for i, doc in enumerate(docs):
    if i:
      parts.append(sep)
    parts.append(doc)
  return parts[0] if len(parts) == 1 else concat(parts)  # nil for no documents


_FLAT, _BROKEN = False, True


def _fits(doc: Doc, room: int) -> bool:
  """Whether ``doc`` printed flat takes at most ``room`` columns."""
  stack = [doc]
  while stack:
    d = stack.pop()
    kind = type(d)
    if kind is _Text or kind is _Break:
      room -= len(d.text)
      if room < 0:
        return False
    elif kind is _Concat:
      stack.extend(reversed(d.children))
    else:  # group and nest print flat inside a flat group
      stack.append(d.child)
  return True


def format(doc: Doc, width: int = 80) -> str:
  """Lay ``doc`` out in lines of ``width`` columns where its groups allow.

  Parameters
  ----------
  doc : Doc
    The document.
  width : int
    The line width that groups try to fit in. Text longer than a line still prints whole.

  Returns
  -------
  str
    The laid-out text, lines joined by newlines.
  """
  out = []
  column = 0
  # (indent, broken?, doc); the whole document starts broken, as if in an outer group
  # too wide for any line, so a break outside every group is a newline.
  agenda = [(0, _BROKEN, doc)]
  while agenda:
    indent, broken, d = agenda.pop()
    kind = type(d)
    if kind is _Text:
      out.append(d.text)
      column += len(d.text)
    elif kind is _Concat:
      agenda.extend((indent, broken, c) for c in reversed(d.children))
    elif kind is _Break:
      if broken:
        out.append("\n" + " " * indent)
        column = indent
      else:
        out.append(d.text)
        column += len(d.text)
    elif kind is _Nest:
      agenda.append((indent + d.n, broken, d.child))
    else:
      agenda.append((indent, not _fits(d.child, width - column), d.child))
  return "".join(out)
