"""`HttpServer`: the application served by uvicorn on a socket bound at once, with the
connection limits (backlog, timeouts, open connections) of `ServerLimits`."""

import socket
import threading

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol


def _protocol(head_timeout):
    """uvicorn's h11 protocol, which also closes a connection that does not send a
    complete request head within `head_timeout` seconds of connecting or of its last
    answer: uvicorn's own keep-alive timer stops at the first byte, so a client that sends
    a byte now and then, or nothing at all, would hold the connection forever."""

    class HeadTimeoutProtocol(H11Protocol):
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


def bind(host, port, backlog):
    """A listening TCP socket on (host, port) (port 0: any free port).

    Made with its protocol named (IPPROTO_TCP), as asyncio needs it to turn Nagle's
    algorithm off on the connections it accepts (`TCP_NODELAY`): without it, an answer
    written in two parts (head, then body) waits for the client's delayed ACK, some 40 ms
    a request."""
    family, kind, proto = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )[0][:3]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


class HttpServer:
    """An ASGI `app` served on (host, port) with `limits` (a `ServerLimits`).

    The socket is bound when the object is made (`server_address` holds the port, also
    with port 0); `serve_forever()` serves in the calling thread until `shutdown()` is
    called from another thread (or, in the main thread, until SIGINT or SIGTERM)."""

    def __init__(self, app, host, port, limits):
        self.app = app
        self.socket = bind(host, port, limits.backlog)
        self.server_address = self.socket.getsockname()[:2]
        config = uvicorn.Config(
            app,
            http=_protocol(limits.read_timeout),
            lifespan="on",
            log_config=None,
            server_header=False,
            backlog=limits.backlog,
            timeout_keep_alive=limits.keep_alive_timeout,
            limit_concurrency=limits.max_connections,
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
