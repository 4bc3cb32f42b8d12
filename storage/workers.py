"""Storage work in worker processes: compaction merges (be.conf `compaction_worker_processes`) and the segment
writes of small loads (`load_worker_processes`); default one process each, 0 = in the server's process.

Both read and write files only: a merge reads its input segments and writes the output's into a staging folder
(compaction/merge.merge_to_stage), a load writes its rows' segments into its transaction's staging folder
(engine.write_routed_rows); nothing of the server's memory is needed, so they run in another process, on the
other core. In the server's own process they competed with every statement for the interpreter lock: under
16 clients of 10-row INSERTs, writing segments took a fifth of that lock and compaction an eighth, while the
second core sat idle. Transactions, catalog publishes, renames into tablets and the retirement of compaction
inputs stay in the server. Each kind has its own pool, so a load never waits behind a long merge.

Workers are forked from a fork server that imported only the storage modules (not the server's threads or
state) and end soon after the server, even one killed with kill -9. A worker that dies (killed, out of memory)
fails the one merge or load it ran (a merge is retried by the scheduler, a load's client sees the error), and
the next call starts a new pool.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from storage.errors import StorageError

T = TypeVar("T")

DEFAULT_PROCESSES = 1
WATCH_SECONDS = 0.5  # how often a worker checks that the server still runs

_lock = threading.Lock()
_pools: dict[tuple[str, int], ProcessPoolExecutor] = {}
# called in a thread about to wait for a worker: the server hands its statement's turn to the next one
# (server/protocol/admission.give_way); an INSERT waiting for its segments held one of two turns meanwhile and
# kept readers queued behind it. (Giving the turn up before each catalog commit's fsync too was measured: no gain.)
before_wait: Callable[[], None] | None = None


def run_in_worker(kind: str, processes: int, fn: Callable[..., T], *args: object) -> T:
    """fn(*args) in a worker process of `kind`'s pool (`processes` > 0: its size), else in this one. `fn` and
    `args` travel by pickle: a module-level function and plain values."""
    if processes <= 0:
        return fn(*args)
    key = (kind, processes)
    pool = _pool(key)
    try:
        future = pool.submit(_in_worker, kind, fn, args)
        if before_wait is not None:
            before_wait()
        return future.result()
    except BrokenProcessPool:
        with _lock:
            if _pools.get(key) is pool:
                del _pools[key]
        pool.shutdown(wait=False, cancel_futures=True)
        raise StorageError(f"the {kind} worker process exited while it ran") from None


def _pool(key: tuple[str, int]) -> ProcessPoolExecutor:
    with _lock:
        pool = _pools.get(key)
        if pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["storage.engine", "storage.compaction.merge"])
            pool = _pools[key] = ProcessPoolExecutor(key[1], mp_context=context, initializer=_die_with_server,
                                                     initargs=(os.getpid(),))
        return pool


def _die_with_server(server_pid: int) -> None:
    """A worker ends soon after the server: a server killed with kill -9 leaves no process behind (a worker
    would wait on its task queue for ever, and hold the fork server open)."""
    threading.Thread(target=_watch, args=(server_pid,), name="server-watch", daemon=True).start()


def _watch(server_pid: int) -> None:
    while _alive(server_pid):
        time.sleep(WATCH_SECONDS)
    os._exit(0)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie - exited, not yet reaped by its parent - does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):  # no /proc: ask the kernel whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # it exists, as another user's
            return True
        return True


def _in_worker(kind: str, fn: Callable[..., T], args: tuple) -> T:
    """Run in the worker: an error comes back as one the server can read, whatever class raised it (an OS
    error as itself: a merge tells a conflict with a concurrent drop from FileNotFoundError, a load reports a
    full disk as such)."""
    try:
        return fn(*args)
    except (OSError, StorageError):
        raise
    except Exception as e:  # noqa: BLE001 - any other failure, by its text
        raise StorageError(f"{kind} failed: {type(e).__name__}: {e}") from None


def shutdown() -> None:
    """Stop the workers (the server's shutdown; a pool is started again on the next merge)."""
    with _lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)
