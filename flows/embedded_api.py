"""Prefect's API for a flow run without a server: the server app in a thread of this process.

With no `PREFECT_API_URL`, Prefect 3 starts its ephemeral API as a second Python process (`uvicorn
prefect.server.api.server:create_app`), which imports the whole server again and is polled until it answers:
about 6–9 s before a flow's first task, longer than a no-op `dvc repro` of a paper. `embedded_api()` serves the
same app (`create_app(ephemeral=True)`: no UI, no background services, the SQLite database in `PREFECT_HOME`)
from a thread of this process instead, so the server is imported once, and points the run at it. A configured
`PREFECT_API_URL` (a running `icml25 serve`, Prefect Cloud) is used as it is.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

from stages.core.errors import PipelineError

START_ATTEMPTS = 3  # a free port can be taken between the probe and the bind: try another one


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(app, timeout: float):
    """A uvicorn server for `app` running in a daemon thread on a free 127.0.0.1 port, once it accepts requests."""
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=_free_port(), log_level="error", lifespan="on")
    )
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
def embedded_api() -> Iterator[str]:
    """The API URL the flow reports to: `PREFECT_API_URL` when set, else Prefect's server app served from a
    thread of this process for the duration (its database is `PREFECT_HOME`'s, as Prefect's ephemeral mode)."""
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS,
        PREFECT_UI_URL,
        temporary_settings,
    )

    configured = PREFECT_API_URL.value()
    if configured:
        yield configured
        return
    from prefect.server.api.server import create_app

    app = create_app(ephemeral=True, final=True)
    timeout = float(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value())
    for _ in range(START_ATTEMPTS):
        server, thread = _start(app, timeout)
        if server is not None:
            break
    else:
        raise PipelineError(
            f"Prefect's embedded API did not start in {START_ATTEMPTS} attempts of {timeout:.0f} s "
            "(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS); set PREFECT_API_URL to a running server "
            "(`icml25 serve`) instead"
        )
    url = f"http://127.0.0.1:{server.config.port}/api"
    try:
        # no UI is served here: Prefect would otherwise log a "View at" link to it
        with temporary_settings({PREFECT_API_URL: url, PREFECT_UI_URL: ""}):
            yield url
            _drain_prefect_workers()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
