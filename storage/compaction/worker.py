"""Compaction merges in worker processes (be.conf `compaction_worker_processes`, default 1; 0 = in the server).

A merge reads its input segment files and writes the output's into a staging folder (merge.merge_to_stage):
nothing of the server's memory is needed, so it runs in another process, on the other core. In the server's
own process it competed with every statement for the interpreter lock: under a trickle of small loads
compaction took an eighth of that lock, and fell behind (more rowsets per tablet, slower reads). The catalog
publish, the rename into the tablet and the retirement of the inputs stay in the server (merge.compact_rowsets).

Workers are forked from a fork server that imported only the storage modules (not the server's threads or
state); a worker that dies (killed, out of memory) fails its compaction, which the scheduler retries, and the
next merge starts a new pool.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from storage.errors import StorageError

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_PROCESSES = 1
WATCH_SECONDS = 0.5  # how often a worker checks that the server still runs

_lock = threading.Lock()
_pools: dict[int, ProcessPoolExecutor] = {}


def run_merge(processes: int, fn: Callable[..., T], *args: object) -> T:
    """fn(*args) in a worker process (`processes` > 0: the size of the shared pool), else in this one."""
    if processes <= 0:
        return fn(*args)
    pool = _pool(processes)
    try:
        return pool.submit(_in_worker, fn, args).result()
    except BrokenProcessPool:
        with _lock:
            if _pools.get(processes) is pool:
                del _pools[processes]
        pool.shutdown(wait=False, cancel_futures=True)
        raise StorageError("the compaction worker process exited during the merge") from None


def _pool(processes: int) -> ProcessPoolExecutor:
    with _lock:
        pool = _pools.get(processes)
        if pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["storage.compaction.merge"])
            pool = _pools[processes] = ProcessPoolExecutor(processes, mp_context=context,
                                                           initializer=_die_with_server, initargs=(os.getpid(),))
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
        except PermissionError:
            pass
        return True


def _in_worker(fn: Callable[..., T], args: tuple) -> T:
    """Run in the worker: an error comes back as one the server can read (FileNotFoundError as itself: the
    caller tells a conflict with a concurrent drop from it), whatever class raised it."""
    try:
        return fn(*args)
    except (FileNotFoundError, StorageError):
        raise
    except Exception as e:  # noqa: BLE001 - any other failure of the merge, by its text
        raise StorageError(f"compaction merge failed: {type(e).__name__}: {e}") from None


def shutdown() -> None:
    """Stop the workers (the server's shutdown; a pool is started again on the next merge)."""
    with _lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)
