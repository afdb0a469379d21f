"""An alternative timed in a child process, free of what qdsl adds to its own.

qdsl's environment mirror (`qdsl.dsl.env_mirror`) installs an audit hook, and
any audit hook makes every audit event of the process slower, about 0.1 µs
each. `id()` raises one per call and sqlglot calls it some 300 times per
statement, so a guard timed in qdsl's process would pay qdsl's cost and
flatter the ratio. A real guard runs without that hook; here it runs in a
child process that never reads a setting through the mirror (checked).

`Child("module:factory", *args)` starts the child, which builds the callable
`factory(*args)` (arguments are pickled). Each call of the `Child` (with its own
arguments, if any) runs it once there and returns `harness.Elapsed`: the
seconds measured in the child, so the pipe's round trip is not counted. The
parent still interleaves it with qdsl's calls, one at a time (the parent waits
while the child works).
"""

from __future__ import annotations

import importlib
import pickle
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from benchmarks.harness import Elapsed

_ROOT = Path(__file__).resolve().parents[1]


class Child:
    def __init__(self, factory: str, *args: Any) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.elsewhere"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=_ROOT,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in, self._out = self._proc.stdin, self._proc.stdout
        _send(self._in, (factory, args))
        ready = _receive(self._out)
        if ready != "ready":
            self.close()
            raise RuntimeError(f"the child did not start: {ready!r}")

    def __call__(self, *args: Any) -> Elapsed:
        _send(self._in, args)
        answer = _receive(self._out)
        if not isinstance(answer, float):
            raise RuntimeError(f"the child failed: {answer!r}")
        return Elapsed(answer)

    def close(self) -> None:
        if self._proc.poll() is None:
            self._in.close()
            self._proc.wait(timeout=30)

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _send(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value)
    stream.write(struct.pack("!I", len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    head = stream.read(4)
    if len(head) < 4:
        raise EOFError
    (size,) = struct.unpack("!I", head)
    return pickle.loads(stream.read(size))  # our own process on the other end


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    from qdsl.dsl import env_mirror

    factory, args = _receive(stdin)
    module, name = factory.split(":")
    fn: Callable[..., object] = getattr(importlib.import_module(module), name)(*args)
    _send(stdout, "ready")
    while True:
        try:
            call = _receive(stdin)
        except EOFError:
            return
        t0 = time.perf_counter_ns()
        fn(*call)
        took = (time.perf_counter_ns() - t0) / 1e9
        if env_mirror._INSTALLED[0]:
            _send(stdout, "the alternative read a setting through qdsl's environment mirror")
            return
        _send(stdout, took)


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
