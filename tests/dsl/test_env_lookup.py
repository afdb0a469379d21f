"""The environment lookup (`qdsl.dsl.settings.env_lookup`) equals os.environ for the names it
serves, whatever changes the environment and in whatever order, os.environ
replaced included."""

from __future__ import annotations

import os
import random
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from unittest import mock

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from qdsl.dsl.settings.config import environ_key, getenv
from qdsl.dsl.settings.limits import limits

NAMES = ("QDSL_TEST_MIRROR_A", "QDSL_TEST_MIRROR_B", "QDSL_MAX_TENANT_CHARS")
names = st.sampled_from(NAMES)
# what os.environ can hold: no NUL; lone surrogates only as surrogateescape bytes
texts = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6),
    st.sampled_from(["", " 7 ", "é", "\udcff", "a=b"]),
)


def _agrees() -> None:
    assert [getenv(n) for n in NAMES] == [os.environ.get(n) for n in NAMES]
    assert environ_key(NAMES) == tuple(os.environ.get(n) for n in NAMES)


class EnvironmentChanges(RuleBasedStateMachine):
    """Every way a program or a test changes the environment, nested in any order."""

    def __init__(self) -> None:
        super().__init__()
        self.saved = {n: os.environ.get(n) for n in NAMES}
        # each entered context, and whether it replaces os.environ itself
        self.contexts: list[tuple[AbstractContextManager[object], bool]] = []
        self.replaced = 0  # contexts on the stack that replace os.environ itself

    @rule(name=names, value=texts)
    def set_item(self, name: str, value: str) -> None:
        os.environ[name] = value

    @rule(name=names, value=texts)
    def set_bytes(self, name: str, value: str) -> None:
        os.environb[os.fsencode(name)] = os.fsencode(value)

    @rule(name=names)
    def delete(self, name: str) -> None:
        if name in os.environ:
            del os.environ[name]

    @rule(name=names)
    def pop(self, name: str) -> None:
        os.environ.pop(name, None)

    @rule(name=names, value=texts)
    def setdefault_and_update(self, name: str, value: str) -> None:
        os.environ.setdefault(name, value)
        os.environ.update({name: value + "u"})

    @precondition(lambda self: not self.replaced)
    @rule()
    def clear_and_restore(self) -> None:
        before = dict(os.environ)
        os.environ.clear()
        _agrees()
        os.environ.update(before)

    @rule(name=names, value=st.one_of(st.none(), texts))
    def monkeypatch(self, name: str, value: str | None) -> None:
        patch = pytest.MonkeyPatch.context()
        mp = patch.__enter__()
        if value is None:
            mp.delenv(name, raising=False)
        else:
            mp.setenv(name, value)
        self.contexts.append((patch, False))

    @rule(changes=st.dictionaries(names, texts, max_size=2), clear=st.booleans())
    def patch_dict(self, changes: dict[str, str], clear: bool) -> None:
        patch = mock.patch.dict(os.environ, changes, clear=clear)
        patch.__enter__()
        self.contexts.append((patch, False))

    @rule(replacement=st.dictionaries(names, texts, max_size=3))
    def replace_environ(self, replacement: dict[str, str]) -> None:
        patch = mock.patch("os.environ", replacement)
        patch.__enter__()
        self.contexts.append((patch, True))
        self.replaced += 1

    @precondition(lambda self: self.contexts)
    @rule()
    def leave(self) -> None:
        patch, replaces = self.contexts.pop()
        patch.__exit__(None, None, None)
        self.replaced -= replaces

    @invariant()
    def mirror_equals_environ(self) -> None:
        _agrees()

    def teardown(self) -> None:
        while self.contexts:
            self.leave()
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _agrees()


TestEnvironmentChanges = EnvironmentChanges.TestCase
TestEnvironmentChanges.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


@contextmanager
def _fast_switching() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _write(mine: list[str], shared: str, lock: threading.Lock, seed: int) -> None:
    rng = random.Random(seed)
    for step in range(1500):
        name = rng.choice(mine)
        op = rng.randrange(4)
        if op == 0:
            os.environ[name] = f"{seed}-{step}"
        elif op == 1:
            os.environ.pop(name, None)
        elif op == 2:
            os.environ.update({name: f"u{step}"})
        else:
            with lock:
                os.environ[shared] = f"{seed}-{step}"


def _read(every: tuple[str, ...], stop: threading.Event, seen: list[int]) -> None:
    while not stop.is_set():
        for name in every:
            getenv(name)
        environ_key(every)
        seen[0] += 1


def test_concurrent_writers_and_readers_end_consistent() -> None:
    """Names never read before (the fill races the writers), each written by one
    thread, one shared name written under a lock, readers reading all along."""
    tag = uuid.uuid4().hex[:8].upper()
    own = [[f"QDSL_TEST_T{tag}_{w}_{i}" for i in range(2)] for w in range(4)]
    shared = f"QDSL_TEST_T{tag}_SHARED"
    every = (*(n for names in own for n in names), shared)
    lock = threading.Lock()
    stop = threading.Event()
    seen = [0]
    readers = [threading.Thread(target=_read, args=(every, stop, seen)) for _ in range(2)]
    writers = [
        threading.Thread(target=_write, args=(mine, shared, lock, seed))
        for seed, mine in enumerate(own)
    ]
    try:
        with _fast_switching():
            for t in readers + writers:
                t.start()
            for t in writers:
                t.join()
            stop.set()
            for t in readers:
                t.join()
        assert seen[0] > 0
        assert [getenv(n) for n in every] == [os.environ.get(n) for n in every]
        assert environ_key(every) == tuple(os.environ.get(n) for n in every)
    finally:
        for name in every:
            os.environ.pop(name, None)


def test_a_replaced_os_environ_is_honoured() -> None:
    with mock.patch("os.environ", {"QDSL_MAX_TENANT_CHARS": "5", NAMES[0]: "x"}):
        assert getenv(NAMES[0]) == "x"
        assert environ_key(NAMES[:1]) == ("x",)
        assert limits().tenant_chars == 5
    assert limits().tenant_chars == int(os.environ.get("QDSL_MAX_TENANT_CHARS", "128"))


def test_limits_follow_monkeypatch_and_patch_dict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QDSL_MAX_FILTERS", raising=False)
    assert limits().filters == 32
    monkeypatch.setenv("QDSL_MAX_FILTERS", "3")
    assert limits().filters == 3
    with mock.patch.dict(os.environ, {"QDSL_MAX_FILTERS": "4"}):
        assert limits().filters == 4
    assert limits().filters == 3
    with mock.patch.dict(os.environ, {}, clear=True):
        assert limits().filters == 32
    assert limits().filters == 3


def test_a_direct_putenv_is_not_seen_as_os_environ_does_not_see_it() -> None:
    """os.putenv changes what a child inherits, not os.environ: reads agree with os.environ."""
    name = f"QDSL_TEST_PUTENV_{uuid.uuid4().hex[:8].upper()}"
    try:
        os.putenv(name, "direct")
        assert getenv(name) is None
        assert environ_key((name,)) == (None,)
    finally:
        os.unsetenv(name)
