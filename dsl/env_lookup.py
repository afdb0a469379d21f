"""Environment settings looked up without `os.environ`'s cost for unset names.

`os.environ.get` of an unset name raises and catches a KeyError inside the
Mapping (~0.8 µs), and the settings readers of every request look up a dozen
mostly unset names: about 11 µs per `limits()` read, half of a cached plan's
compile and an eighth of a SQLite execution.

CPython keeps `os.environ`'s contents in a dict, `os.environ._data`, keyed by
the encoded name (`encodekey`); every change made through `os.environ` or
`os.environb` (which shares that dict), and so `monkeypatch.setenv` and
`mock.patch.dict`, lands there before it returns. A lookup there is one dict
probe and always agrees with `os.environ`. The attribute is private, so it is
used only while it is what CPython has had since 3.2: `os.environ` is still
the object seen at import and its `_data` still a dict that agreed with it
there. Otherwise, e.g. under `mock.patch("os.environ", {...})`, each read is
the plain `os.environ.get`.

The public alternative, a mirror kept by an audit hook on `os.putenv` (PEP
578), was measured and declined: a hook runs on every audit event of the
process, and `id()` raises one, so the embedding application would pay for
it everywhere (`copy.deepcopy` 1.7-2.1x slower, sqlglot's parser 13-25%).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

_ENVIRON = os.environ
_NO_RAW: dict[Any, Any] = {}


Store = tuple[dict[Any, Any], Callable[[str], Any], Callable[[Any], str]]


def raw_store(environ: Any) -> Store | None:
    """`environ`'s own dict with its key encoder and value decoder, when they
    are what this module expects (checked against `environ` itself)."""
    data = getattr(environ, "_data", None)
    encode = getattr(environ, "encodekey", None)
    decode = getattr(environ, "decodevalue", None)
    if not isinstance(data, dict) or not callable(encode) or not callable(decode):
        return None
    try:
        for name in list(environ)[:8]:
            if decode(data[encode(name)]) != environ[name]:
                return None
        if data.get(encode("QDSL_ENV_LOOKUP_SURELY_UNSET")) is not None:
            return None
    except Exception:  # any surprise in private code: the plain path
        return None
    return data, encode, decode


_STORE = raw_store(_ENVIRON)
_RAW: dict[Any, Any] = _STORE[0] if _STORE is not None else _NO_RAW
# names -> their encoded keys; callers pass a few constant names and tuples
_KEYS: dict[str, Any] = {}
_KEY_TUPLES: dict[tuple[str, ...], tuple[Any, ...]] = {}
_MAX_CACHED = 256


def _encoded(name: str) -> Any:
    key = _KEYS.get(name)
    if key is None:
        assert _STORE is not None
        key = _STORE[1](name)
        if len(_KEYS) < _MAX_CACHED:
            _KEYS[name] = key
    return key


def active() -> bool:
    """Whether reads go to os.environ's own dict (False: plain `os.environ.get`)."""
    return _STORE is not None and os.environ is _ENVIRON


def getenv(name: str) -> str | None:
    """`os.environ.get(name)`."""
    if _STORE is None or os.environ is not _ENVIRON:
        return os.environ.get(name)
    raw = _RAW.get(_encoded(name))
    return None if raw is None else _STORE[2](raw)


def _keys_of(names: tuple[str, ...]) -> tuple[Any, ...]:
    keys = _KEY_TUPLES.get(names)
    if keys is None:
        keys = tuple([_encoded(n) for n in names])
        if len(_KEY_TUPLES) < _MAX_CACHED:
            _KEY_TUPLES[names] = keys
    return keys


def environ_key(names: tuple[str, ...]) -> tuple[str | None, ...]:
    """`tuple(os.environ.get(n) for n in names)`: the key of a cache of settings
    read from those names, which changes whenever one of them does."""
    if _STORE is None or os.environ is not _ENVIRON:
        get = os.environ.get
        return tuple([get(n) for n in names])
    decode = _STORE[2]
    return tuple([None if raw is None else decode(raw) for raw in map(_RAW.get, _keys_of(names))])


def environ_raw_key(names: tuple[str, ...]) -> tuple[object, ...]:
    """A key that changes whenever `os.environ.get(n)` does for a name in `names`:
    the values as stored (encoded), so a cache of settings read from them pays
    for decoding only on a miss (`decode_raw_key`)."""
    if _STORE is None or os.environ is not _ENVIRON:
        get = os.environ.get
        return tuple([get(n) for n in names])
    return tuple(map(_RAW.get, _keys_of(names)))


def decode_raw_key(key: tuple[object, ...]) -> tuple[str | None, ...]:
    """The values `environ_raw_key` stood for, as `os.environ.get` gives them."""
    decode = _STORE[2] if _STORE is not None else None
    out: list[str | None] = []
    for v in key:
        if v is None or isinstance(v, str):
            out.append(v)
        else:
            assert decode is not None  # raw values are stored encoded only
            out.append(decode(v))
    return tuple(out)
