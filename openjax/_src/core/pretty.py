"""A small Oppen-style pretty printer (text, concat, break, group, nest).

A group prints flat -- each break as its text -- when the whole group fits in
the remaining width; otherwise each break directly inside it is a newline at
the current indentation. The jaxpr printer builds documents from these.
"""
from __future__ import annotations

from typing import Sequence


class Doc:
  __slots__ = ()

  def __add__(self, other: "Doc") -> "Doc":
    return Concat((self, other))

  def format(self, width: int = 80) -> str:
    out: list[str] = []
    _render(self, width, out)
    return "".join(out)

  def __str__(self):
    return self.format()


class Text(Doc):
  __slots__ = ("text",)

  def __init__(self, text: str):
    self.text = text


class Concat(Doc):
  __slots__ = ("children",)

  def __init__(self, children: Sequence[Doc]):
    self.children = tuple(children)


class Break(Doc):
  __slots__ = ("text",)

  def __init__(self, text: str = " "):
    self.text = text


class Group(Doc):
  __slots__ = ("child",)

  def __init__(self, child: Doc):
    self.child = child


class Nest(Doc):
  __slots__ = ("n", "child")

  def __init__(self, n: int, child: Doc):
    self.n, self.child = n, child


def text(s: str) -> Doc:
  return Text(s)


def concat(docs: Sequence[Doc]) -> Doc:
  return Concat(docs)


def brk(s: str = " ") -> Doc:
  return Break(s)


def group(d: Doc) -> Doc:
  return Group(d)


def nest(n: int, d: Doc) -> Doc:
  return Nest(n, d)


nil = Concat(())


def join(sep: Doc, docs: Sequence[Doc]) -> Doc:
  docs = list(docs)
  if not docs:
    return nil
  parts = [docs[0]]
  for d in docs[1:]:
    parts += [sep, d]
  return Concat(parts)


def _flat_width(doc: Doc, limit: int) -> int:
  """Width of ``doc`` printed flat; stops counting once past ``limit``."""
  total = 0
  stack = [doc]
  while stack:
    d = stack.pop()
    t = type(d)
    if t is Text:
      total += len(d.text)
    elif t is Break:
      total += len(d.text)
    elif t is Concat:
      stack.extend(reversed(d.children))
    else:  # Group, Nest
      stack.append(d.child)
    if total > limit:
      break
  return total


def _render(doc: Doc, width: int, out: list[str]) -> None:
  col = 0
  # (indent, flat, doc)
  stack: list[tuple[int, bool, Doc]] = [(0, False, doc)]
  while stack:
    indent, flat, d = stack.pop()
    t = type(d)
    if t is Text:
      out.append(d.text)
      col += len(d.text)
    elif t is Concat:
      for c in reversed(d.children):
        stack.append((indent, flat, c))
    elif t is Nest:
      stack.append((indent + d.n, flat, d.child))
    elif t is Break:
      if flat:
        out.append(d.text)
        col += len(d.text)
      else:
        out.append("\n" + " " * indent)
        col = indent
    else:  # Group
      fits = flat or col + _flat_width(d.child, width - col) <= width
      stack.append((indent, fits, d.child))
