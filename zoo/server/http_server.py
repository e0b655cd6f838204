"""`HttpServer`: the application served by uvicorn on a socket bound at once, with the
connection limits (backlog, timeouts, open connections) of `ServerLimits`."""

import errno
import json
import socket
import threading

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol


async def _refuse(send, status, message, headers=()):
    """Answers `{"error": message}` with `status` and closes the connection."""
    body = json.dumps({"error": message}, ensure_ascii=False).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode("ascii")),
                (b"connection", b"close"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


def head_bytes(scope):
    """The bytes of a request's head as sent: its request line and header lines."""
    line = len(scope["method"]) + len(scope["raw_path"]) + len(scope["query_string"]) + 12
    return line + sum(len(name) + len(value) + 4 for name, value in scope["headers"])


def origin_form(scope):
    """`scope` with an absolute-form target (`GET http://host/health`, RFC 9112 3.2.2: a
    server accepts it) turned into its path, as an origin-form target is."""
    path = scope["path"]
    if not path.lower().startswith(("http://", "https://")):
        return scope
    rest = path.split("://", 1)[1]
    path = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
    raw = scope["raw_path"].split(b"://", 1)[1]
    raw = b"/" + raw.split(b"/", 1)[1] if b"/" in raw else b"/"
    return {**scope, "path": path, "raw_path": raw}


def _protocol(limits):
    """uvicorn's h11 protocol, which also closes a connection that does not send a
    complete request head within `read_timeout` seconds of connecting or of its last
    answer: uvicorn's own keep-alive timer stops at the first byte, so a client that sends
    a byte now and then, or nothing at all, would hold the connection forever. Before the
    application, it answers in JSON a request over `max_connections` (503) or with a head
    over `max_header_bytes` (431), and reads an absolute-form target as its path."""
    head_timeout = limits.read_timeout

    class HeadTimeoutProtocol(H11Protocol):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.limit_concurrency = None  # checked in `guarded`, which answers in JSON
            app = self.app

            async def guarded(scope, receive, send):
                if scope["type"] != "http":
                    return await app(scope, receive, send)
                busy = max(len(self.connections), len(self.tasks))
                if busy >= limits.max_connections:
                    return await _refuse(
                        send,
                        503,
                        f"the server is busy: {limits.max_connections} connections are open "
                        "(max_connections); try again shortly.",
                        [(b"retry-after", b"1")],
                    )
                size = head_bytes(scope)
                if size > limits.max_header_bytes:
                    return await _refuse(
                        send,
                        431,
                        f"the request's head has {size} bytes; this server takes at most "
                        f"{limits.max_header_bytes} (max_header_bytes).",
                    )
                return await app(origin_form(scope), receive, send)

            self.app = guarded

        def connection_made(self, transport):
            super().connection_made(transport)
            self._await_head()

        def on_response_complete(self):
            super().on_response_complete()
            self._await_head()

        def _await_head(self):
            self.loop.call_later(head_timeout, self._head_late, self.cycle)

        def _head_late(self, cycle):
            # No new request since the timer started (a new one replaces self.cycle).
            if self.cycle is cycle and not self.transport.is_closing():
                if cycle is None or cycle.response_complete:
                    self.transport.close()

    return HeadTimeoutProtocol


def bind(host, port, backlog=None):
    """A TCP socket bound to (host, port) (port 0: any free port), listening with `backlog`
    connections waiting at most; with `backlog=None` not yet listening (`listen` starts it):
    a port another program listens on is refused now, while a client that connects is
    refused until then.

    Made with its protocol named (IPPROTO_TCP), as asyncio needs it to turn Nagle's
    algorithm off on the connections it accepts (`TCP_NODELAY`): without it, an answer
    written in two parts (head, then body) waits for the client's delayed ACK, some 40 ms
    a request. An address that cannot be used is an OSError "cannot listen on HOST:PORT:
    reason"."""
    try:
        family, kind, proto = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )[0][:3]
        sock = socket.socket(family, kind, proto)
    except (OSError, OverflowError, UnicodeError) as error:  # gaierror is an OSError
        raise cannot_listen(host, port, error) from error
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except (OSError, OverflowError) as error:
        sock.close()
        raise cannot_listen(host, port, error) from error
    return sock if backlog is None else listen(sock, backlog)


def listen(sock, backlog):
    """Starts `sock` (from `bind`) listening, with `backlog` connections waiting at most."""
    try:
        sock.listen(backlog)
    except OSError as error:
        host, port = sock.getsockname()[:2]
        sock.close()
        raise cannot_listen(host, port, error) from error
    return sock


def cannot_listen(host, port, error):
    """The OSError that says why (host, port) cannot be listened on, from the `error` of
    the system (its reason, without its errno)."""
    reason = (getattr(error, "strerror", None) or str(error)).rstrip(".")
    if getattr(error, "errno", None) == errno.EADDRINUSE:
        reason += " (another program listens there; port 0 picks a free port)"
    shown = f"[{host}]" if ":" in str(host) else host
    return OSError(f"cannot listen on {shown}:{port}: {reason}.")


class HttpServer:
    """An ASGI `app` served on (host, port) with `limits` (a `ServerLimits`).

    The socket listens when the object is made (`server_address` holds the port, also
    with port 0): `sock`, a socket from `bind(host, port)` (bound before, e.g. to report a
    busy port before a model loads), or a socket bound here. `serve_forever()` serves in
    the calling thread until `shutdown()` is called from another thread (or, in the main
    thread, until SIGINT or SIGTERM)."""

    def __init__(self, app, host, port, limits, sock=None):
        self.app = app
        self.socket = listen(bind(host, port) if sock is None else sock, limits.backlog)
        self.server_address = self.socket.getsockname()[:2]
        config = uvicorn.Config(
            app,
            http=_protocol(limits),
            lifespan="on",
            log_config=None,
            server_header=False,
            backlog=limits.backlog,
            timeout_keep_alive=limits.keep_alive_timeout,
            limit_concurrency=limits.max_connections,
            h11_max_incomplete_event_size=limits.max_header_bytes,
            timeout_graceful_shutdown=5,
        )
        self._server = uvicorn.Server(config)
        self._done = threading.Event()

    def serve_forever(self):
        self._done.clear()
        try:
            self._server.run(sockets=[self.socket])
        finally:
            self._done.set()

    def shutdown(self):
        """Stops `serve_forever` (answering the requests under way first) and waits for it."""
        self._server.should_exit = True
        self._done.wait()

    def server_close(self):
        self.socket.close()
