"""The Prefect server `icml25 serve` runs: Prefect's own app and UI behind a trusted-host check.

CORS and the CSRF token stop a page on another origin, but not a DNS-rebinding page: its name resolves to
127.0.0.1, so the browser treats the server as that page's own origin (`Host: evil.example:PORT` with a
matching `Origin`). Only the Host header tells such a request apart, and Prefect does not check it, so the
app is wrapped in Starlette's `TrustedHostMiddleware`: any Host other than the address served gets 400
before Prefect sees the request. Run as `python -m flows.server_app --port PORT` (the settings come from the
environment `flows.serve.server_env` builds).
"""

from __future__ import annotations

import argparse

SERVED_HOST = "127.0.0.1"
# the names a browser on this machine uses for the served address; the port is not part of the check
TRUSTED_HOSTS = (SERVED_HOST, "localhost")


def trusted_app(hosts: tuple[str, ...] = TRUSTED_HOSTS):
    """Prefect's server app (API, UI and services) answering only requests whose Host is one of `hosts`."""
    from prefect.server.api.server import create_app
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    return TrustedHostMiddleware(create_app(final=True), allowed_hosts=list(hosts), www_redirect=False)


def main(argv: list[str] | None = None) -> None:
    """Serve the trusted-host app on 127.0.0.1:PORT until interrupted."""
    import uvicorn
    from prefect.settings import PREFECT_SERVER_API_KEEPALIVE_TIMEOUT

    parser = argparse.ArgumentParser(prog="python -m flows.server_app")
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args(argv).port
    uvicorn.run(
        trusted_app(),
        host=SERVED_HOST,
        port=port,
        timeout_keep_alive=PREFECT_SERVER_API_KEEPALIVE_TIMEOUT.value(),
        log_level="info",
    )


if __name__ == "__main__":
    main()
