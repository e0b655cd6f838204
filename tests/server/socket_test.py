"""The listening socket: accepted connections send without Nagle's delay."""

import asyncio
import socket

from zoo.server.http_server import bind


def test_accepted_connections_have_tcp_nodelay():
    """asyncio turns Nagle's algorithm off only on sockets made with IPPROTO_TCP; an answer
    written as head then body would otherwise wait for the client's delayed ACK."""
    listener = bind("127.0.0.1", 0, 8)
    seen = {}

    async def main():
        def accepted(reader, writer):
            connection = writer.get_extra_info("socket")
            seen["nodelay"] = connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            writer.close()

        server = await asyncio.start_server(accepted, sock=listener)
        port = listener.getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.01)
        writer.close()
        server.close()

    asyncio.run(main())
    assert seen["nodelay"] != 0
