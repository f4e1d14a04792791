"""Prefect's API for a flow run without a server: Prefect's server app served by a process forked from the flow's
(or by a thread of it), not by a freshly started interpreter.

With no `PREFECT_API_URL`, Prefect 3 starts its ephemeral API as a new Python interpreter (`uvicorn
prefect.server.api.server:create_app`) once the flow has imported Prefect, and polls it until it answers: about
6–9 s before a flow's first task, longer than a no-op `dvc repro` of a paper. Here the same app
(`create_app(ephemeral=True)`: no UI, no background services, the SQLite database in `PREFECT_HOME`) runs either

- in a process forked at the start, before Prefect is imported (`start_embedded_api`, what `icml25 flow` does):
  no new interpreter starts, it imports the server on the other core while the flow's process imports Prefect's
  client and asks DVC for its plan, it says on a pipe when it accepts requests, and it stops when the flow's
  process closes the other pipe (or dies); or
- in a daemon thread of the flow's process (`embedded_api()` called without a started one, where forking is not
  safe, or when the forked one did not come up).

A configured `PREFECT_API_URL` (a running `icml25 serve`, Prefect Cloud) is used as it is.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from stages.core.dvc_graph import can_fork
from stages.core.errors import PipelineError

START_ATTEMPTS = 3  # a free port can be taken between the probe and the bind: try another one
STOP_SECONDS = 10
logger = logging.getLogger(__name__)


def free_port() -> int:
    """A port on 127.0.0.1 free now (another process can take it before it is bound: bind with retries)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _uvicorn_server(port: int) -> Any:
    """A uvicorn server for Prefect's ephemeral API app on 127.0.0.1:`port` (not started)."""
    import uvicorn
    from prefect.server.api.server import create_app

    app = create_app(ephemeral=True, final=True)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="error",
        lifespan="on",
        timeout_graceful_shutdown=STOP_SECONDS // 2,
    )
    return uvicorn.Server(config)


@dataclass
class ForkedApi:
    """Prefect's API app served by a forked process: its port, a pipe that says when it is up, and the write end
    of a pipe whose closing stops it."""

    process: multiprocessing.process.BaseProcess
    port: int
    ready: Connection
    stop_fd: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def wait(self, timeout: float) -> bool:
        """True once the server accepts requests; False if it exited or did not start within `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ready.poll(0.02):
                with contextlib.suppress(EOFError):
                    return self.ready.recv() == "started"
                return False
            if not self.process.is_alive():
                return False
        return False

    def stop(self) -> None:
        """Stop the server (it finishes its requests and shuts the app down) and wait for its process; a server
        that does not stop in time is terminated, then killed."""
        self._close_pipe()
        for signal_it in (None, self.process.terminate, self.process.kill):
            if signal_it is not None:
                signal_it()
            self.process.join(STOP_SECONDS)
            if not self.process.is_alive():
                break
        self.ready.close()

    def discard(self) -> None:
        """Kill it at once (it served nothing: a configured `PREFECT_API_URL` is used instead)."""
        self._close_pipe()
        self.process.kill()
        self.process.join()
        self.ready.close()

    def _close_pipe(self) -> None:
        if self.stop_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.stop_fd)
            self.stop_fd = -1


def _serve_until_told(port: int, ready: Connection, stop_read: int, stop_write: int) -> None:
    """The forked process: serve the API on `port`, say so on `ready`, stop at EOF on `stop_read`."""
    os.close(stop_write)  # else this process would hold the pipe open itself and never see EOF
    # its own process group: a Ctrl-C in the terminal reaches the flow only; this server stays up until told
    os.setpgrp()
    servers: list[Any] = []

    def stop_at_eof() -> None:
        while os.read(stop_read, 1):  # b"" once the parent closed its end or died
            pass
        if not servers:  # told to stop while still importing the server
            os._exit(0)
        servers[0].should_exit = True

    threading.Thread(target=stop_at_eof, name="stop-watch", daemon=True).start()
    server = _uvicorn_server(port)
    servers.append(server)

    def report_started() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.02)
        if server.started:
            with contextlib.suppress(OSError):
                ready.send("started")

    threading.Thread(target=report_started, name="ready", daemon=True).start()
    server.run()


def start_embedded_api() -> ForkedApi | None:
    """Fork a process that serves Prefect's API app (None when `PREFECT_API_URL` is set in the environment, or
    where forking is not safe: the flow then serves the API from a thread). Call it before Prefect is imported: it
    forks this process."""
    if os.environ.get("PREFECT_API_URL") or not can_fork():
        return None
    port = free_port()
    ready_read, ready_write = multiprocessing.Pipe(duplex=False)
    stop_read, stop_write = os.pipe()
    process = multiprocessing.get_context("fork").Process(
        target=_serve_until_told,
        args=(port, ready_write, stop_read, stop_write),
        name="prefect-embedded-api",
        daemon=True,
    )
    process.start()
    os.close(stop_read)
    ready_write.close()
    return ForkedApi(process, port, ready_read, stop_write)


def _start_in_thread(timeout: float):
    """The API app served by uvicorn in a daemon thread on a free 127.0.0.1 port, once it accepts requests."""
    server = _uvicorn_server(free_port())
    thread = threading.Thread(target=server.run, name="prefect-embedded-api", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    if server.started:
        return server, thread
    server.should_exit = True
    thread.join(timeout=5)
    return None, None


def _drain_prefect_workers() -> None:
    """Send the logs and events still queued to the API before it stops."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for worker in (APILogWorker, EventsWorker):
        worker.drain_all(timeout=10, at_exit=False)


@contextlib.contextmanager
def _threaded_api(timeout: float) -> Iterator[str]:
    for _ in range(START_ATTEMPTS):
        server, thread = _start_in_thread(timeout)
        if server is not None:
            break
    else:
        raise PipelineError(
            f"Prefect's embedded API did not start in {START_ATTEMPTS} attempts of {timeout:.0f} s "
            "(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS); set PREFECT_API_URL to a running server "
            "(`icml25 serve`) instead"
        )
    try:
        yield f"http://127.0.0.1:{server.config.port}/api"
    finally:
        server.should_exit = True
        thread.join(timeout=STOP_SECONDS)


@contextlib.contextmanager
def _forked_or_threaded_api(started: ForkedApi | None, timeout: float) -> Iterator[str]:
    """The forked server's URL once it is up, else (none started, or it did not come up) a threaded one."""
    if started is not None:
        try:
            up = started.wait(timeout)
        except BaseException:
            started.stop()
            raise
        if up:
            try:
                yield started.url
            finally:
                started.stop()
            return
        started.stop()
        logger.warning("the forked Prefect API did not start; serving it from a thread of this process")
    with _threaded_api(timeout) as url:
        yield url


@contextlib.contextmanager
def embedded_api(started: ForkedApi | None = None) -> Iterator[str]:
    """The API URL the flow reports to: `PREFECT_API_URL` when set (a `started` server is then stopped), else
    `started` (from `start_embedded_api`) or a server app in a thread of this process, for the duration. Its
    database is `PREFECT_HOME`'s, as in Prefect's ephemeral mode."""
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS,
        PREFECT_UI_URL,
        temporary_settings,
    )

    configured = PREFECT_API_URL.value()
    if configured:  # from a Prefect profile (the environment's was seen before the fork)
        if started is not None:
            started.discard()
        yield configured
        return
    timeout = float(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value())
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(_forked_or_threaded_api(started, timeout))
        # no UI is served here: Prefect would otherwise log a "View at" link to it
        stack.enter_context(temporary_settings({PREFECT_API_URL: url, PREFECT_UI_URL: ""}))
        yield url
        _drain_prefect_workers()
