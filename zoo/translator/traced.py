"""`TracedFunctions`: the `Translator`'s traced graphs (one per beam size, n-best list and
way of sampling), at most `MAX_TRACED` of them, the least recently used dropped first.

Each traced search holds a graph of its own (tens of MB for a real model, and seconds to
trace): a server that is asked for many beam sizes keeps only the last few, and a dropped
one is traced again when asked for. 16 hold the variants a mixed load asks for (beam
sizes, with and without decoding controls, prefixes, constraints, sampling; bench/RESULTS.md,
"Mixed options under load").
"""

import collections
import threading

from zoo.checks import check_int

MAX_TRACED = 16
"""The traced functions a `Translator` keeps (its `traced.limit`)."""


class TracedFunctions:
    """A least-recently-used cache of `tf.function`s by key.

    Args:
        limit: the most functions kept (an int >= 1).

    Example:
        >>> cache = TracedFunctions(limit=2)
        >>> cache.get("a", lambda: "A"), cache.get("b", lambda: "B"), cache.get("c", lambda: "C")
        ('A', 'B', 'C')
        >>> cache.keys()
        ['b', 'c']
    """

    def __init__(self, limit=MAX_TRACED):
        self.limit = check_int("TracedFunctions", "limit", limit)
        self._functions = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, make):
        """The function of `key`, made by `make()` when absent; it becomes the most recently
        used, and the least recently used ones past `limit` are dropped."""
        with self._lock:
            function = self._functions.pop(key, None)
            if function is None:
                function = make()
            self._functions[key] = function
            while len(self._functions) > self.limit:
                self._functions.popitem(last=False)
            return function

    def keys(self):
        """The keys held, least recently used first."""
        with self._lock:
            return list(self._functions)

    def clear(self):
        """Drops every function (they are traced again when asked for)."""
        with self._lock:
            self._functions.clear()

    def __len__(self):
        return len(self._functions)
