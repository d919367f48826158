"""``jax.debug.visualize_array_sharding`` / ``visualize_sharding``: the box
picture of which devices hold which piece of a 1-D or 2-D array, as JAX
draws it.

JAX draws with the ``rich`` package; so do we when it is installed (extra
``[viz]``), with colours when the console has them and matplotlib gives the
colour map, as in JAX. Without ``rich`` a plain-text renderer draws the same
boxes (JAX's colourless picture) with the same sizes and centring, as long
as the table fits ``max_width`` (rich shrinks wider tables; the fallback
does not).
"""
from __future__ import annotations

import importlib.util
import sys
from typing import Callable, Sequence

import numpy as np

_HAS_RICH = importlib.util.find_spec("rich") is not None


def _chunk_index(size: int, slc: slice) -> int:
  if slc.start is None and slc.stop is None:
    return 0
  return slc.start // (slc.stop - slc.start)


def _as_slice(s) -> slice:
  return slice(s, s + 1) if isinstance(s, int) else s


def _layout(shape: tuple, sharding) -> tuple:
  """``(cells, heights, widths, num_rows, num_cols)``: the device ids of each
  (row, column) chunk and its height/width as fractions of the array (the
  height None for 1-D arrays)."""
  cells: dict = {}
  heights: dict = {}
  widths: dict = {}
  for device, index in sharding.devices_indices_map(tuple(shape)).items():
    index = tuple(map(_as_slice, index))
    chunk = tuple(map(_chunk_index, shape, index))
    if len(index) == 2:
      vert, horiz = index
      vsize = vert.stop - vert.start if vert.stop is not None else shape[0]
      hsize = horiz.stop - horiz.start if horiz.stop is not None else shape[1]
      heights[chunk] = vsize / shape[0]
      widths[chunk] = hsize / shape[1]
    else:
      horiz, = index
      hsize = horiz.stop - horiz.start if horiz.stop is not None else shape[0]
      chunk = (0, *chunk)
      heights[chunk] = None
      widths[chunk] = hsize / shape[0]
    cells.setdefault(chunk, set()).add(device.id)
  num_rows = max(c[0] for c in cells) + 1
  num_cols = max(c[1] for c in cells) + 1
  return cells, heights, widths, num_rows, num_cols


def _color_iter(color_map, num_rows: int, num_cols: int):
  n = num_rows * num_cols
  values = np.linspace(0, 1, n)
  idx = 0
  for _ in range(n):
    yield color_map(values[idx])
    idx = (idx + n // 2 + bool(n % 2 == 0)) % n


def _hex(color) -> str:
  if isinstance(color, str):
    return color
  r, g, b = (int(a * 255) for a in color)
  return f"#{r:02X}{g:02X}{b:02X}"


def _text_color(color: str) -> str:
  r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
  return "#000000" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "#ffffff"


def _cell_paddings(shape, heights, widths, num_rows, num_cols, labels, scale, min_width,
                   max_width) -> dict:
  """(top, right, bottom, left) padding of each cell's label, JAX's sizing."""
  base_height = int(10 * scale)
  aspect_ratio = (shape[1] if len(shape) == 2 else 1) / shape[0]
  base_width = int(base_height * aspect_ratio)
  out = {}
  for i in range(num_rows):
    for j in range(num_cols):
      width = int(widths[i, j] * base_width * 2.5)
      height = 1 if heights[i, j] is None else int(heights[i, j] * base_height)
      width = min(max(width, min_width), max_width)
      left, rem = divmod(width - len(labels[i, j]) - 2, 2)
      top, vrem = divmod(height - 2, 2)
      out[i, j] = (top, left + rem, top + vrem, left)
  return out


def visualize_sharding(shape: Sequence[int], sharding, *, use_color: bool = True,
                       scale: float = 1., min_width: int = 9, max_width: int = 80,
                       color_map: Callable | None = None) -> None:
  """Print which devices hold which piece of an array of ``shape`` (1-D or
  2-D) laid out by ``sharding``."""
  shape = tuple(shape)
  if len(shape) > 2 or len(shape) < 1:
    raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
  cells, heights, widths, num_rows, num_cols = _layout(shape, sharding)
  kind = next(iter(sharding.device_set)).platform.upper()
  labels = {c: f"{kind} " + ",".join(str(d) for d in sorted(ids)) for c, ids in cells.items()}
  paddings = _cell_paddings(shape, heights, widths, num_rows, num_cols, labels, scale,
                            min_width, max_width)
  if not _HAS_RICH:
    sys.stdout.write(_plain_table(labels, paddings, num_rows, num_cols) + "\n")
    return
  # Optional dependencies, imported on first use (as JAX does) so that they
  # cost nothing at ``import openjax``.
  import rich.align
  import rich.box
  import rich.console
  import rich.padding
  import rich.style
  import rich.table
  console = rich.console.Console(width=max_width)
  use_color = use_color and console.color_system is not None
  if use_color and not color_map:
    try:
      import matplotlib  # JAX colours the boxes only when it is installed
      color_map = matplotlib.colormaps["tab20b"]
    except ModuleNotFoundError:
      use_color = False
  colors = _color_iter(color_map, num_rows, num_cols) if use_color else None
  table = rich.table.Table(show_header=False, show_lines=not use_color, padding=0,
                           highlight=not use_color, pad_edge=False,
                           box=rich.box.SQUARE if not use_color else None)
  for i in range(num_rows):
    row = []
    for j in range(num_cols):
      top, right, bottom, left = paddings[i, j]
      color = text_color = None
      if use_color:
        color = _hex(next(colors)[:3])
        text_color = _text_color(color)
        top, right, bottom, left = top + 1, right + 1, bottom + 1, left + 1
      row.append(rich.padding.Padding(
          rich.align.Align(labels[i, j], "center", vertical="middle"),
          (max(top, 0), max(right, 0), max(bottom, 0), max(left, 0)),
          style=rich.style.Style(bgcolor=color, color=text_color)))
    table.add_row(*row)
  console.print(table, end="\n\n")


def _plain_table(labels: dict, paddings: dict, num_rows: int, num_cols: int) -> str:
  """rich's SQUARE-box table of padded, centred labels, drawn as text."""
  pads = {c: tuple(max(p, 0) for p in pad) for c, pad in paddings.items()}
  col_widths = [max(pads[i, j][3] + len(labels[i, j]) + pads[i, j][1] for i in range(num_rows))
                for j in range(num_cols)]

  def cell_lines(i, j, height):
    top, right, bottom, left = pads[i, j]
    inner = col_widths[j] - left - right
    label = labels[i, j]
    before = (inner - len(label)) // 2
    text = " " * left + " " * before + label + " " * (inner - len(label) - before) + " " * right
    blank = " " * col_widths[j]
    lines = [blank] * top + [text] + [blank] * bottom
    return lines + [blank] * (height - len(lines))

  def rule(left, mid, right):
    return left + mid.join("─" * w for w in col_widths) + right

  out = [rule("┌", "┬", "┐")]
  for i in range(num_rows):
    height = max(pads[i, j][0] + 1 + pads[i, j][2] for j in range(num_cols))
    columns = [cell_lines(i, j, height) for j in range(num_cols)]
    out.extend("│" + "│".join(parts) + "│" for parts in zip(*columns))
    if i + 1 < num_rows:
      out.append(rule("├", "┼", "┤"))
  out.append(rule("└", "┴", "┘"))
  return "\n".join(out)


def visualize_array_sharding(arr, **kwargs) -> None:
  """Print the sharding picture of the Array ``arr`` (1-D or 2-D)."""
  visualize_sharding(arr.shape, arr.sharding, **kwargs)


__all__ = ["visualize_array_sharding", "visualize_sharding"]
