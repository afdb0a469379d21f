"""Environment settings read without asking `os.environ` on every call.

`os.environ.get` of an unset name raises and catches a KeyError inside the
Mapping (~0.8 µs), and the settings readers of every request look up a dozen
mostly unset names. This module keeps a mirror of the names it is asked for,
kept current by an audit hook (PEP 578) on `os.putenv` and `os.unsetenv`: the
only ways `os.environ` (its `__setitem__`, `__delitem__`, `pop`, `clear`,
`update`, and with them `monkeypatch.setenv` and `mock.patch.dict`) and
`os.environb` change the environment.

Correctness does not rest on when the hook runs. It runs *before* the change,
so a counter bumped there would let a reader on another thread cache the old
value as current. The mirror instead stores the value the hook is given, and
fills a name it has not seen from `os.environ` with `dict.setdefault`, which
never overwrites what the hook wrote: whichever of the two comes first, the
hook's value wins, and a fill can only read a value no write has yet replaced
(a write's hook runs before `os.environ` changes). The names the hook wrote
are the "touched" set; being keys of the one dict, the check and the store
are one atomic step, so no lock is held on a path a signal handler could
re-enter.

Where the mirror and `os.environ` can differ, by design or by race:

- `os.putenv` / `os.unsetenv` called directly change the process environment
  (what a child process inherits) but not `os.environ`; the mirror follows
  them, so a setting made that way is seen here and not by `os.environ.get`.
- Two threads writing the same name with no order between them: the last
  hook to run wins here, the last dict store in `os.environ`; neither is
  defined (`os.environ` and the C environment can already disagree then).
- A write in flight (its audit event already raised) while the hook is being
  installed, at the first read in the process, can be missed.
- An audit hook added later that refuses a `putenv` after this one ran.

When the mirror cannot be trusted it is not used, and the read is the plain
`os.environ.get`: `os.environ` is no longer the object it was at import
(`mock.patch("os.environ", {...})`, a reloaded `os`), an audit hook refused
the installation (`sys.addaudithook` then fails silently: a probe event checks
it), or the platform is not POSIX (Windows folds the case of names).

The hook runs on every audit event of the process, so it compares the event
name first and returns.
"""

from __future__ import annotations

import _thread
import os
import sys
from collections.abc import Callable
from contextlib import suppress
from operator import itemgetter
from typing import Any

_ENVIRON = os.environ
_VALUES: dict[str, str | None] = {}
_PROBE = "qdsl.env_mirror.probe"
_INSTALL_LOCK = _thread.RLock()  # re-entrant: a signal handler may read a setting
# [None]: not tried yet; [False]: plain reads; [True]: the hook keeps the mirror
_INSTALLED: list[bool | None] = [None]
# Callers pass a few constant tuples of names; a bound keeps an odd caller from growing it.
_KEYERS: dict[tuple[str, ...], Callable[[dict[str, str | None]], tuple[str | None, ...]]] = {}
_MAX_KEYERS = 64


def getenv(name: str) -> str | None:
    """`os.environ.get(name)`, from the mirror when it can be trusted."""
    if os.environ is _ENVIRON:
        try:
            return _VALUES[name]
        except KeyError:
            pass
    return _fill(name)


def environ_key(names: tuple[str, ...]) -> tuple[str | None, ...]:
    """`tuple(os.environ.get(n) for n in names)`: the key of a cache of settings
    read from those names, which changes whenever one of them does."""
    if os.environ is _ENVIRON:
        try:
            return _KEYERS[names](_VALUES)
        except KeyError:
            pass
    key = tuple([_fill(n) for n in names])
    if _INSTALLED[0] and len(_KEYERS) < _MAX_KEYERS:
        _KEYERS[names] = _keyer(names)
    return key


def active() -> bool:
    """Whether reads are served from the mirror (False: plain `os.environ` reads)."""
    return os.environ is _ENVIRON and _install()


def _fill(name: str) -> str | None:
    env = os.environ
    if env is not _ENVIRON or not _install():
        return env.get(name)
    # setdefault: a value the hook stored meanwhile is newer than the one read here.
    return _VALUES.setdefault(name, env.get(name))


def _keyer(names: tuple[str, ...]) -> Callable[[dict[str, str | None]], tuple[str | None, ...]]:
    if len(names) > 1:
        return itemgetter(*names)
    if names:
        (only,) = names
        return lambda values: (values[only],)
    return lambda values: ()


def _install() -> bool:
    done = _INSTALLED[0]
    if done is not None:
        return done
    with _INSTALL_LOCK:
        if _INSTALLED[0] is None:
            _INSTALLED[0] = os.name == "posix" and _add_hook()
    return bool(_INSTALLED[0])


def _add_hook() -> bool:
    values = _VALUES
    fsdecode = os.fsdecode
    probe = _PROBE
    probed: list[bool] = []

    # Everything the hook uses is bound here, not looked up in module globals,
    # which are cleared while the interpreter shuts down.
    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "os.putenv":
            # other arguments than os.putenv's own: an event raised by hand
            with suppress(TypeError, IndexError, ValueError):
                values[fsdecode(args[0])] = fsdecode(args[1])
        elif event == "os.unsetenv":
            with suppress(TypeError, IndexError, ValueError):
                values[fsdecode(args[0])] = None
        elif event == probe:
            probed.append(True)

    sys.addaudithook(hook)
    sys.audit(_PROBE)
    return bool(probed)
