"""The per-device resource manager: named containers of stateful resources.

Variables, queues, TensorArrays and stacks live here, keyed by (container, name). The
default container is "" (TF's "localhost" container); `Session.reset` clears containers.
"""
from __future__ import annotations

import threading
from typing import Callable, Dict, Iterable, Optional, Tuple

from tensorweave.framework import errors


class ResourceManager:
    """Thread-safe map (container, name) -> resource object.

    Invariant: `generation` grows whenever a resource is removed (`delete`, `clear`), so
    a lookup cached together with the generation it was made in stays valid as long as
    the generation is unchanged (a handle caches the variable it names this way).
    """

    def __init__(self, device_name: str):
        self.device_name = device_name
        self.generation = 0
        self._containers: Dict[str, Dict[str, object]] = {}
        self._lock = threading.Lock()

    def lookup_or_create(self, container: str, name: str, create: Callable[[], object]):
        with self._lock:
            c = self._containers.setdefault(container, {})
            r = c.get(name)
            if r is None:
                r = c[name] = create()
            return r

    def lookup(self, container: str, name: str):
        with self._lock:
            r = self._containers.get(container, {}).get(name)
        if r is None:
            raise errors.NotFoundError(None, None, "Resource %s/%s does not exist."
                                       % (container or "localhost", name))
        return r

    def delete(self, container: str, name: str) -> None:
        with self._lock:
            self.generation += 1
            self._containers.get(container, {}).pop(name, None)

    def clear(self, containers: Optional[Iterable[str]] = None) -> None:
        """Drops the named containers (all when None). A dropped resource with a
        `release()` method (an iterator with a file half written) is released now
        rather than whenever the garbage collector reaches it."""
        with self._lock:
            self.generation += 1
            if containers is None:
                dropped = list(self._containers.values())
                self._containers.clear()
            else:
                dropped = [self._containers.pop("" if c == "localhost" else c, {})
                           for c in containers]
        for c in dropped:
            for r in c.values():
                release = getattr(r, "release", None)
                if release is not None:
                    release()

    def items(self) -> Iterable[Tuple[str, str, object]]:
        with self._lock:
            return [(c, n, r) for c, d in self._containers.items() for n, r in d.items()]
