"""Where the devices of one multi-device run (``shard_map``, ``pmap``) meet
for a collective.

Each device runs its program in its own thread. A collective over mesh axes
``names`` is an *exchange* within a group: the devices whose coordinates
agree on every other mesh axis. Every member hands in its value and gets
back the list of all the group's values, ordered by the members' linear
index over ``names`` (row-major, the first name major, as JAX numbers a
collective over several axes); the collective's own arithmetic (a sum, a
slice, a permutation) then runs on that list. Members match their calls by
count: the k-th exchange of a group on one device meets the k-th on the
others (every device runs the same program).

No wait is unbounded: a member that waits longer than the run's deadline
raises, and a device whose program fails aborts the run, which wakes every
waiting member with an error naming that device's failure. So a collective
whose peers cannot arrive raises on every participant instead of hanging
(DESIGN decision 10).

Point-to-point sends (``lax.psend``/``lax.precv``) do not meet: a send
posts its value on the channel from its device to each destination and
returns; a receive takes the oldest value posted on the channel from its
source, waiting for it. The k-th receive on a channel gets the k-th send.
A receive whose source has finished its program, or whose wait closes a
cycle of receives (each waiting on the next), raises at once: no send can
come.
"""
from __future__ import annotations

import collections
import math
import threading
import time

import numpy as np

from openjax._src.core.memory import aligned_empty

__all__ = ["CollectiveError", "MeshRendezvous", "MeshMember", "DEFAULT_TIMEOUT_S"]

# A slow peer (one compiling its program on a loaded machine) must not be
# taken for a dead one; a failed peer aborts the run at once instead.
DEFAULT_TIMEOUT_S = 300.0


class CollectiveError(RuntimeError):
  """A collective that could not complete: a peer failed or never came."""


# Below this many elements one device reduces a whole all-reduce (splitting
# it costs more than it saves).
_SPLIT_MIN_ELEMENTS = 1 << 15


class MeshRendezvous:
  """The meeting point of one run over a mesh of ``axis_sizes`` (an ordered
  ``{name: size}``)."""

  def __init__(self, axis_sizes: dict, timeout_s: float = DEFAULT_TIMEOUT_S,
               mailbox: dict | None = None):
    self.axis_names = tuple(axis_sizes)
    self.axis_sizes = dict(axis_sizes)
    self.timeout_s = float(timeout_s)
    self._cond = threading.Condition()
    # (group key, round) -> [values, arrived, read]
    self._rounds: dict = {}
    # (group key, member index) -> its next round
    self._next_round: dict = {}
    self._failure: tuple | None = None   # (device description, exception)
    # (source coords, destination coords) -> deque of sent values; shared by
    # the runs of one eager shard_map (each of its collectives is a run).
    self._mail = {} if mailbox is None else mailbox
    self._finished: set = set()     # coords (tuples) of members done with their program
    self._receiving: dict = {}      # coords -> (source coords, channel) while waiting

  def member(self, coords: dict, description: str) -> "MeshMember":
    return MeshMember(self, dict(coords), description)

  def abort(self, description: str, exc: BaseException) -> None:
    """A member's program failed: every current and later exchange raises."""
    with self._cond:
      if self._failure is None:
        self._failure = (description, exc)
      self._cond.notify_all()

  def finish(self, coords: dict) -> None:
    """A member ran its program to the end: it sends nothing more."""
    with self._cond:
      self._finished.add(self._key(coords))
      self._cond.notify_all()

  def _key(self, coords: dict) -> tuple:
    return tuple(coords[n] for n in self.axis_names)

  def _peer(self, coords: dict, names: tuple, index: int) -> tuple:
    """The coords (a tuple) of the member at ``index`` of ``coords``' group over ``names``."""
    peer = dict(coords)
    for n in reversed(names):
      peer[n] = index % self.axis_sizes[n]
      index //= self.axis_sizes[n]
    return self._key(peer)

  def send(self, coords: dict, names: tuple, perm: tuple, value, api_name: str) -> None:
    """Post ``value`` to every destination of a pair whose source is this member."""
    _, index, _ = self._group(coords, names)
    me = self._key(coords)
    with self._cond:
      if self._failure is not None:
        raise self._failed_error(api_name)
      for s, t in perm:
        if s == index:
          channel = (me, self._peer(coords, names, t))
          self._mail.setdefault(channel, collections.deque()).append(value)
      self._cond.notify_all()

  def recv(self, coords: dict, names: tuple, perm: tuple, api_name: str):
    """The oldest value posted to this member by the source its pair in
    ``perm`` names; None when no pair has this member as destination."""
    _, index, _ = self._group(coords, names)
    source = next((s for s, t in perm if t == index), None)
    if source is None:
      return None
    me, src = self._key(coords), self._peer(coords, names, source)
    channel = (src, me)
    deadline = time.monotonic() + self.timeout_s
    with self._cond:
      try:
        while not self._mail.get(channel):
          if self._failure is not None:
            raise self._failed_error(api_name)
          error = self._no_send_error(channel, names, api_name)
          if error is None and time.monotonic() >= deadline:
            error = CollectiveError(
                f"{api_name} over the axes {names}: no value from the device at mesh "
                f"coordinates {src} within {self.timeout_s:g} s.")
          if error is not None:
            self._failure = (f"device coordinates {coords}", error)
            self._cond.notify_all()
            raise error
          self._receiving[me] = (src, channel)
          self._cond.wait(max(deadline - time.monotonic(), 0.0))
      finally:
        self._receiving.pop(me, None)
      return self._mail[channel].popleft()

  def _no_send_error(self, channel: tuple, names: tuple, api_name: str):
    """Why the value ``channel`` waits for can never come (lock held), or None."""
    src, me = channel
    if src in self._finished:
      return CollectiveError(
          f"{api_name} over the axes {names}: the device at mesh coordinates {src} finished "
          f"its program without the psend to {me} this precv waits for. Expected send to "
          "match recv: give each precv a psend with the same axis_name and the pair "
          "(source, destination) in its perm, run before the precv on the source device "
          "(in an eager shard_map, before it in program order).")
    seen, at = [me], src
    while at in self._receiving:
      waits_for, waits_on = self._receiving[at]
      if self._mail.get(waits_on):
        return None   # that receive is about to return
      seen.append(at)
      if waits_for == me:
        return CollectiveError(
            f"{api_name} over the axes {names}: deadlock detected: the devices at mesh "
            f"coordinates {seen} each wait in a precv for the next one's psend. Send before "
            "receiving on at least one device of the cycle.")
      if waits_for in seen:
        return None   # a cycle without this member: one of its own members reports it
      at = waits_for
    return None

  def cause(self) -> BaseException | None:
    """The exception that aborted the run (None while it runs)."""
    return None if self._failure is None else self._failure[1]

  def _failed_error(self, api_name: str) -> CollectiveError:
    who, exc = self._failure
    return CollectiveError(
        f"{api_name}: the program on {who} failed, so this collective cannot complete: "
        f"{type(exc).__name__}: {exc}")

  def _wait(self, slot, key: int, count: int, deadline: float, names, coords, api_name):
    """Wait (holding the lock) until ``slot[key]`` reaches ``count``."""
    while slot[key] < count:
      if self._failure is not None:
        raise self._failed_error(api_name)
      left = deadline - time.monotonic()
      if left <= 0:
        error = CollectiveError(
            f"{api_name} over the axes {names}: {count - slot[key]} of the {count} "
            f"devices did not arrive within {self.timeout_s:g} s. Every device must run "
            "the same collectives in the same order.")
        self._failure = (f"device coordinates {coords}", error)
        self._cond.notify_all()
        raise error
      self._cond.wait(left)

  def _group(self, coords: dict, names: tuple):
    index = 0
    count = 1
    for n in names:
      size = self.axis_sizes[n]
      index = index * size + coords[n]
      count *= size
    group = (names, tuple((n, c) for n, c in coords.items() if n not in names))
    return group, index, count

  def _arrive(self, group, index: int, count: int, value, api_name: str) -> tuple:
    """Hand in ``value`` for this member's next round of ``group`` (lock
    held); returns (round, slot): [values, arrived, read, done, result]."""
    if self._failure is not None:
      raise self._failed_error(api_name)
    r = self._next_round.get((group, index), 0)
    self._next_round[(group, index)] = r + 1
    slot = self._rounds.get((group, r))
    if slot is None:
      slot = self._rounds[(group, r)] = [[None] * count, 0, 0, 0, None]
    slot[0][index] = value
    slot[1] += 1
    if slot[1] == count:
      self._cond.notify_all()
    return r, slot

  def _leave(self, group, r: int, slot, count: int) -> None:
    slot[2] += 1
    if slot[2] == count:
      del self._rounds[(group, r)]

  def exchange(self, coords: dict, names: tuple, value, api_name: str) -> list:
    group, index, count = self._group(coords, names)
    deadline = time.monotonic() + self.timeout_s
    with self._cond:
      r, slot = self._arrive(group, index, count, value, api_name)
      self._wait(slot, 1, count, deadline, names, coords, api_name)
      values = slot[0]
      self._leave(group, r, slot, count)
      return values

  def all_reduce(self, coords: dict, names: tuple, arrays: list, ufunc,
                 api_name: str) -> list:
    """Every member's ``arrays`` (NumPy, one list per member, the same
    shapes) combined elementwise by ``ufunc``; the results are computed once
    for the group, each member reducing its share of every array in
    parallel, into arrays a compiled program imports without a copy. All
    members get the same (read-only) result arrays."""
    group, index, count = self._group(coords, names)
    deadline = time.monotonic() + self.timeout_s
    arrays = [np.asarray(a, order="C") for a in arrays]   # (ascontiguousarray makes 0-d 1-d)
    with self._cond:
      r, slot = self._arrive(group, index, count, arrays, api_name)
      if slot[4] is None:
        slot[4] = [aligned_empty(a.shape, a.dtype) for a in arrays]
      self._wait(slot, 1, count, deadline, names, coords, api_name)
      values, outs = slot[0], slot[4]
    total = sum(a.size for a in arrays)
    split = count > 1 and total >= _SPLIT_MIN_ELEMENTS
    if split or index == 0:
      for j, out in enumerate(outs):
        flat = out.reshape(-1)
        n = flat.size
        lo, hi = ((n * index) // count, (n * (index + 1)) // count) if split else (0, n)
        if lo == hi:
          continue
        # NumPy's ufuncs release the GIL on large arrays: the members'
        # shares run in parallel.
        first = values[0][j].reshape(-1)
        if count == 1:
          flat[lo:hi] = first[lo:hi]
          continue
        ufunc(first[lo:hi], values[1][j].reshape(-1)[lo:hi], out=flat[lo:hi])
        for m in range(2, count):
          ufunc(flat[lo:hi], values[m][j].reshape(-1)[lo:hi], out=flat[lo:hi])
    with self._cond:
      if split or index == 0:
        slot[3] += count if not split else 1
        if slot[3] == count:
          for out in outs:
            out.setflags(write=False)
          self._cond.notify_all()
      self._wait(slot, 3, count, deadline, names, coords, api_name)
      self._leave(group, r, slot, count)
    return outs


class MeshMember:
  """One device's handle on a run: its mesh coordinates and exchanges."""
  __slots__ = ("rendezvous", "coords", "description")

  def __init__(self, rendezvous: MeshRendezvous, coords: dict, description: str):
    self.rendezvous = rendezvous
    self.coords = coords
    self.description = description

  @property
  def axis_names(self) -> tuple:
    return self.rendezvous.axis_names

  def size(self, names: tuple) -> int:
    return math.prod(self.rendezvous.axis_sizes[n] for n in names)

  def index(self, names: tuple) -> int:
    index = 0
    for n in names:
      index = index * self.rendezvous.axis_sizes[n] + self.coords[n]
    return index

  def exchange(self, names: tuple, value, api_name: str) -> list:
    return self.rendezvous.exchange(self.coords, names, value, api_name)

  def all_reduce(self, names: tuple, arrays: list, ufunc, api_name: str) -> list:
    return self.rendezvous.all_reduce(self.coords, names, arrays, ufunc, api_name)

  def send(self, names: tuple, perm: tuple, value, api_name: str) -> None:
    self.rendezvous.send(self.coords, names, perm, value, api_name)

  def recv(self, names: tuple, perm: tuple, api_name: str):
    return self.rendezvous.recv(self.coords, names, perm, api_name)
