"""Storage work in worker processes: the answer of the function run there, its errors readable in the server, a
killed worker failing one call only, and no worker outliving a server killed with kill -9."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from storage.errors import StorageError
from storage.workers import run_in_worker

ROOT = Path(__file__).resolve().parents[2]


class _Odd(Exception):
    def __init__(self, a: int, b: int) -> None:  # not rebuilt from its args alone: it cannot travel back as is
        super().__init__(f"{a}/{b}")


def _raise_odd() -> None:
    raise _Odd(1, 2)


def _missing(path: str) -> bytes:
    return Path(path).read_bytes()


def _die() -> None:
    os._exit(3)


def test_the_function_runs_in_another_process_or_here() -> None:
    assert run_in_worker("test", 1, os.getpid) != os.getpid()
    assert run_in_worker("test", 0, os.getpid) == os.getpid()
    assert run_in_worker("test", 1, divmod, 17, 5) == (3, 2)


def test_a_thread_waiting_for_a_worker_says_so_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server hands the waiting statement's turn to the next one (workers.before_wait = give_way)."""
    from server.protocol.admission import Admission
    from storage import workers

    admission, running = Admission(slots=1, grace=60), []
    monkeypatch.setattr(workers, "before_wait", lambda: running.append(admission.running))
    with admission.admit():
        assert run_in_worker("test", 1, divmod, 7, 2) == (3, 1)
        assert run_in_worker("test", 0, divmod, 7, 2) == (3, 1)  # in this process: nothing to wait for
    assert running == [1]
    from server.app import give_way  # the server installs the admission's give_way

    monkeypatch.setattr(workers, "before_wait", give_way)
    with admission.admit():
        run_in_worker("test", 1, os.getpid)
        started = time.monotonic()
        with admission.admit():  # the one slot went to the next statement: this does not wait out the grace
            assert time.monotonic() - started < 5


def test_errors_come_back_as_the_server_reads_them(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):  # a concurrent drop: compact_rowsets tells a conflict from it
        run_in_worker("test", 1, _missing, str(tmp_path / "gone.dat"))
    with pytest.raises(StorageError, match=r"test failed: _Odd: 1/2"):
        run_in_worker("test", 1, _raise_odd)


def test_a_killed_worker_fails_its_merge_only() -> None:
    with pytest.raises(StorageError, match="test worker process exited while it ran"):
        run_in_worker("test", 1, _die)
    assert run_in_worker("test", 1, divmod, 7, 2) == (3, 1)  # a new pool


def test_no_worker_outlives_a_killed_server() -> None:
    script = textwrap.dedent("""
        import os
        from storage.workers import run_in_worker
        print(run_in_worker("test", 1, os.getpid), flush=True)
        os._exit(9)  # as kill -9: nothing shuts the pool down
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 9, proc.stderr
    worker = int(proc.stdout.split()[0])
    deadline = time.monotonic() + 10
    while Path(f"/proc/{worker}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{worker}").exists()
