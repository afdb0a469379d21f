"""The environment readers the hot paths use agree with os.environ at every moment.

`qdsl.dsl.settings.config.getenv` and `environ_key` (`qdsl.dsl.settings.env_lookup`): whatever is
set, changed or removed through os.environ (monkeypatch does exactly that) must
show at once, and so must the limits and the audit sink built from them.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qdsl.api import plan_and_answer
from qdsl.audit import default_sink
from qdsl.dsl.errors import UsageError
from qdsl.dsl.settings.config import environ_key, getenv
from qdsl.dsl.settings.limits import held_limits, limits

NAMES = ("QDSL_TEST_ENV_A", "QDSL_TEST_ENV_B", "QDSL_MAX_TENANT_CHARS")
values = st.one_of(
    st.none(),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8),
)


@settings(max_examples=60)
@given(changes=st.lists(st.tuples(st.sampled_from(NAMES[:2]), values), max_size=8))
def test_getenv_and_environ_key_follow_every_change(
    changes: list[tuple[str, str | None]],
) -> None:
    seen: list[tuple[tuple[object, ...], tuple[str | None, ...]]] = []
    try:
        for name, value in changes:
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
            assert [getenv(n) for n in NAMES] == [os.environ.get(n) for n in NAMES]
            seen.append((environ_key(NAMES), tuple(os.environ.get(n) for n in NAMES)))
        for key_a, env_a in seen:
            for key_b, env_b in seen:
                assert (key_a == key_b) == (env_a == env_b)
    finally:
        for name in NAMES[:2]:
            os.environ.pop(name, None)


def test_environ_key_changes_with_each_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QDSL_TEST_ENV_A", raising=False)
    empty = environ_key(NAMES)
    monkeypatch.setenv("QDSL_TEST_ENV_A", "1")
    one = environ_key(NAMES)
    monkeypatch.setenv("QDSL_TEST_ENV_A", "2")
    two = environ_key(NAMES)
    assert len({empty, one, two}) == 3
    monkeypatch.delenv("QDSL_TEST_ENV_A")
    assert environ_key(NAMES) == empty


def test_limits_and_the_audit_sink_follow_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert limits().tenant_chars == 128
    monkeypatch.setenv("QDSL_MAX_TENANT_CHARS", "7")
    assert limits().tenant_chars == 7
    monkeypatch.delenv("QDSL_MAX_TENANT_CHARS")
    assert limits().tenant_chars == 128
    on = default_sink()
    monkeypatch.setenv("QDSL_AUDIT", "off")
    off = default_sink()
    assert off is not on and type(off).__name__ == "NullSink"


def test_a_request_reads_its_limits_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside `held_limits` (one plan_and_answer), limits() is what the request read
    at its start, also in a worker thread it hands work to; outside, the
    environment's again."""
    monkeypatch.setenv("QDSL_MAX_TENANT_CHARS", "7")
    with held_limits():
        held = limits()
        monkeypatch.setenv("QDSL_MAX_TENANT_CHARS", "9")
        assert limits() is held and held.tenant_chars == 7
        assert asyncio.run(asyncio.to_thread(limits)) is held
        with ThreadPoolExecutor(1) as pool:  # no context handed over: read afresh
            assert pool.submit(limits).result().tenant_chars == 9
    assert limits().tenant_chars == 9
    monkeypatch.setenv("QDSL_MAX_TENANT_CHARS", "bad")
    with held_limits(), pytest.raises(UsageError):
        limits()  # not readable: not held, refused where it is read


def test_plan_and_answer_reads_the_limits_of_its_own_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("QDSL_MAX_TENANT_CHARS", "3")
    with pytest.raises(UsageError) as err:
        plan_and_answer("有多少个项目", "tenant-too-long")
    assert err.value.subtype == "bad_tenant"
    monkeypatch.setenv("QDSL_MAX_TENANT_CHARS", "bad")
    with pytest.raises(UsageError) as bad:
        plan_and_answer("有多少个项目", "t1")
    assert "QDSL_MAX_TENANT_CHARS" in bad.value.message + (bad.value.hint or "")
