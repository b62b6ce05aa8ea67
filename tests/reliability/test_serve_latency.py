"""What a serving process does so a short call is not held behind nothing or behind slow calls.

Served connections send small writes at once (TCP_NODELAY), so a response is not held ~40 ms.

uvicorn writes a response as headers, then body. With Nagle's algorithm on, the body waits for
the client's ACK of the headers, which the client delays by up to 40 ms: every keep-alive
request after the first then costs about 40 ms however little work it is. asyncio turns Nagle
off only on sockets whose ``proto`` is TCP, and accepted connections copy it from the listening
socket that ``listen_socket`` makes. And ``serve`` hands the GIL to a waiting thread after 1 ms
instead of 5 (``favour_short_calls``).
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time

from memory_substrate.process import SERVE_SWITCH_INTERVAL_S, favour_short_calls, listen_socket


def test_accepted_connections_have_nagle_off() -> None:
    async def run() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=listen_socket("127.0.0.1", 0))
        port = server.sockets[0].getsockname()[1]
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                return await asyncio.wait_for(accepted, 10)
            finally:
                writer.close()

    assert asyncio.run(run()) != 0


def test_keep_alive_round_trips_are_not_held_by_delayed_acks() -> None:
    """A response written in two pieces comes back well under the 40 ms delayed-ACK timer."""

    async def run() -> float:
        served = asyncio.Event()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while await reader.readline():
                writer.write(b"head\n")  # two writes, as uvicorn answers: headers, then body
                writer.write(b"body\n")
                await writer.drain()
            writer.close()
            served.set()

        server = await asyncio.start_server(on_connect, sock=listen_socket("127.0.0.1", 0))
        port = server.sockets[0].getsockname()[1]
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            took = []
            for _ in range(15):
                started = time.perf_counter()
                writer.write(b"ask\n")
                await reader.readline()
                await reader.readline()
                took.append(time.perf_counter() - started)
            writer.close()
            await asyncio.wait_for(served.wait(), 10)
            return sorted(took)[len(took) // 2]

    assert asyncio.run(run()) < 0.02


def test_serving_shortens_the_switch_interval() -> None:
    before = sys.getswitchinterval()
    try:
        assert favour_short_calls() == before
        assert sys.getswitchinterval() == SERVE_SWITCH_INTERVAL_S < before
    finally:
        sys.setswitchinterval(before)
