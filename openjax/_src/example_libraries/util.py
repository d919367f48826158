"""map/zip that insist on equal lengths, as the example libraries use them."""
import builtins


def safe_map(f, *args):
  args = [list(a) for a in args]
  lengths = [len(a) for a in args]
  if len(set(lengths)) > 1:
    raise ValueError(f"safe_map: arguments have different lengths {lengths}")
  return list(builtins.map(f, *args))


def safe_zip(*args):
  args = [list(a) for a in args]
  lengths = [len(a) for a in args]
  if len(set(lengths)) > 1:
    raise ValueError(f"safe_zip: arguments have different lengths {lengths}")
  return list(builtins.zip(*args))


def unzip2(pairs):
  """[(a, b), ...] -> ((a, ...), (b, ...))."""
  firsts, seconds = [], []
  for first, second in pairs:
    firsts.append(first)
    seconds.append(second)
  return tuple(firsts), tuple(seconds)
