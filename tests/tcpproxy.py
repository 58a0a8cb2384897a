"""A TCP proxy for the chaos tests: clients connect to it instead of the
server, and the test cuts or refuses their connections.

asyncio, on a thread of its own (the tests that use it are synchronous and
drive member processes). Only for tests: nothing in the library knows it.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: Bytes read from one side before they are written to the other.
CHUNK = 65536


class TcpProxy:
    """Forwards ``127.0.0.1:port`` to ``target``; :meth:`reset` and :meth:`refuse`
    make the outages.

    :param target: the server's (host, port).
    """

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        #: Connections accepted and forwarded, all told.
        self.accepted = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()

    def __enter__(self) -> TcpProxy:
        self._thread.start()
        self._call(self._listen())
        return self

    def __exit__(self, *exc: object) -> None:
        self._call(self._shutdown())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def url(self, database_url: str) -> str:
        """``database_url`` (a ``postgresql://...@127.0.0.1:5432/db``) through the proxy."""
        host = f"{self.target[0]}:{self.target[1]}"
        assert host in database_url, (host, database_url)
        return database_url.replace(host, f"127.0.0.1:{self.port}", 1)

    def reset(self) -> int:
        """Cut every open connection with a TCP reset, both ways; how many."""
        return self._call(self._reset())

    def refuse(self) -> None:
        """Stop listening: connections are refused until :meth:`accept`."""
        self._call(self._close())

    def accept(self) -> None:
        """Listen again, on the same port."""
        self._call(self._listen())

    def open_connections(self) -> int:
        return len(self._pairs)

    # ── on the proxy's loop ───────────────────────────────────────────────

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(
            self._handle, "127.0.0.1", self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        await self._reset()

    async def _shutdown(self) -> None:
        await self._close()
        # Connections still being opened or piped end here, not when the
        # loop is closed under them: a transport left open is a
        # ResourceWarning at some later test's garbage collection, which
        # pytest turns into that test's failure.
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # An abort closes its socket on the loop's next pass.
        await asyncio.sleep(0)

    async def _reset(self) -> int:
        pairs, self._pairs = list(self._pairs), set()
        for pair in pairs:
            for writer in pair:
                sock = writer.get_extra_info("socket")
                if sock is not None:
                    # Linger 0: close() sends a reset, not a FIN.
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
        return len(pairs)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        except BaseException:  # cancelled by _shutdown
            writer.transport.abort()
            raise
        self.accepted += 1
        pair = (writer, up_writer)
        self._pairs.add(pair)
        try:
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        finally:
            self._pairs.discard(pair)
            for w in pair:
                w.transport.abort()

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(CHUNK):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.transport.abort()
