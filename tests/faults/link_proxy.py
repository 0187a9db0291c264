"""A TCP proxy to put between a replica and its primary, with faults the
harness switches on and off while traffic flows (stdlib asyncio only).

ProxyLoop runs one asyncio event loop in a daemon thread; every LinkProxy
lives on it. A LinkProxy listens on a free loopback port and forwards each
connection it accepts (the replica's) to 127.0.0.1:<target> (the primary).
"Downstream" is target -> accepted side: the replication stream.

Faults (each method is thread-safe and returns at once; they apply to every
connection of the proxy, present and future, until heal()):
  cut(fraction)   every open connection forwards the first `fraction` of its
                  next downstream chunk, then both sides are closed (after
                  1 s without downstream data, they are closed anyway);
  drop()          every open connection is closed at once, both sides;
  stall(seconds)  nothing is forwarded either way for that long (a chunk
                  read already is held back, nothing more is read);
  throttle(rate)  each direction limited to `rate` bytes per second (the
                  proxy then holds at most two chunks, so the sender feels
                  the rate rather than the proxy's queue absorbing it);
  delay(seconds)  every chunk, both ways, is forwarded that much later;
  refuse(seconds) connections accepted in that time are closed at once.
"""
import asyncio
import socket
import threading
import time

CHUNK = 65536
CUT_FALLBACK_S = 1.0


class ProxyLoop:
    """An event loop in a daemon thread; close() closes its proxies and stops it."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="link-proxy", daemon=True)
        self.thread.start()
        self.proxies = []

    def proxy(self, target_port, rcvbuf=None):
        """A new LinkProxy forwarding to 127.0.0.1:target_port, already
        listening; `rcvbuf`: SO_RCVBUF of its upstream sockets (a small one
        makes a stall push back on the target sooner)."""
        proxy = LinkProxy(self, target_port, rcvbuf)
        asyncio.run_coroutine_threadsafe(proxy.listen(), self.loop).result(timeout=10)
        self.proxies.append(proxy)
        return proxy

    def call(self, fn, *args):
        """Runs fn(*args) on the loop's thread, soon."""
        self.loop.call_soon_threadsafe(fn, *args)

    def close(self):
        asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        self.loop.close()

    async def _shutdown(self):
        """Closes every proxy, lets their connections end, cancels what is left."""
        for proxy in list(self.proxies):
            proxy.close_now()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=2)
            for t in pending:
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)


class LinkProxy:
    """127.0.0.1:port -> 127.0.0.1:target_port with switchable faults."""

    def __init__(self, loop, target_port, rcvbuf=None):
        self._loop = loop
        self.target_port = target_port
        self.rcvbuf = rcvbuf
        self.port = None
        self._server = None
        self._links = set()
        # Fault state, read and written on the loop's thread only.
        self.stall_until = 0.0
        self.refuse_until = 0.0
        self.rate = None
        self.delay_s = 0.0

    async def listen(self):
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    # Fault controls, callable from any thread.

    def cut(self, fraction):
        self._loop.call(self._cut, fraction)

    def drop(self):
        self._loop.call(self._drop)

    def stall(self, seconds):
        self._loop.call(setattr, self, "stall_until", time.monotonic() + seconds)

    def throttle(self, rate):
        self._loop.call(setattr, self, "rate", rate)

    def delay(self, seconds):
        self._loop.call(setattr, self, "delay_s", seconds)

    def refuse(self, seconds):
        self._loop.call(setattr, self, "refuse_until", time.monotonic() + seconds)

    def heal(self):
        """Clears every fault, pending cuts included; open connections go on."""
        self._loop.call(self._heal)

    def close(self):
        """Stops listening and closes every connection."""
        self._loop.call(self.close_now)

    # Loop-thread side.

    def _cut(self, fraction):
        for link in self._links:
            link.arm_cut(fraction)

    def _drop(self):
        for link in list(self._links):
            link.abort()

    def _heal(self):
        self.stall_until = self.refuse_until = 0.0
        self.rate = None
        self.delay_s = 0.0
        for link in self._links:
            link.disarm_cut()

    def close_now(self):
        """close(), on the loop's thread."""
        self._server.close()
        self._heal()
        self._drop()
        if self in self._loop.proxies:
            self._loop.proxies.remove(self)

    async def _serve(self, down_reader, down_writer):
        if time.monotonic() < self.refuse_until:
            down_writer.transport.abort()
            return
        try:
            if self.rcvbuf is None:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
            else:
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf)  # before connect: the window
                sock.setblocking(False)
                try:
                    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", self.target_port))
                except OSError:
                    sock.close()
                    raise
                up_reader, up_writer = await asyncio.open_connection(sock=sock)
        except OSError:
            down_writer.transport.abort()
            return
        for w in (down_writer, up_writer):
            w.transport.set_write_buffer_limits(high=0)  # drain() means "in the kernel": a cut's prefix is sent
        link = _Link(self, down_writer, up_writer)
        self._links.add(link)
        try:
            await asyncio.gather(link.pump(up_reader, down_writer, downstream=True),
                                 link.pump(down_reader, up_writer, downstream=False))
        finally:
            link.abort()
            self._links.discard(link)

    async def wait_unstalled(self):
        while time.monotonic() < self.stall_until:
            await asyncio.sleep(0.01)

    def read_size(self):
        """Small reads when throttled, so the rate is smooth."""
        return CHUNK if self.rate is None else max(512, min(CHUNK, int(self.rate / 20)))


class _Link:
    """One proxied connection: two pumps, each a reader stage (stall, cut)
    feeding a sender stage (delay, throttle) through a queue."""

    def __init__(self, proxy, down_writer, up_writer):
        self.proxy = proxy
        self.writers = (down_writer, up_writer)
        self.cut_fraction = None
        self.cut_timer = None

    def arm_cut(self, fraction):
        if self.cut_fraction is None:
            self.cut_fraction = fraction
            self.cut_timer = asyncio.get_running_loop().call_later(CUT_FALLBACK_S, self.abort)

    def disarm_cut(self):
        self.cut_fraction = None
        if self.cut_timer is not None:
            self.cut_timer.cancel()
            self.cut_timer = None

    def abort(self):
        """Closes both sockets at once, dropping whatever is queued."""
        self.disarm_cut()
        for w in self.writers:
            w.transport.abort()

    def close(self):
        """Closes both sockets after their buffered data is sent."""
        self.disarm_cut()
        for w in self.writers:
            w.close()

    async def pump(self, reader, writer, downstream):
        """Forwards reader to writer until EOF, an error or a cut."""
        queue = asyncio.Queue(maxsize=256)
        sender = asyncio.create_task(self._send(queue, writer))
        try:
            while True:
                data = await reader.read(self.proxy.read_size())
                await self.proxy.wait_unstalled()
                if not data:
                    break
                if downstream and self.cut_fraction is not None:
                    await queue.put((time.monotonic(), data[:int(len(data) * self.cut_fraction)]))
                    await queue.put("abort")
                    return await sender
                while self.proxy.rate is not None and queue.qsize() >= 2:
                    await asyncio.sleep(0.005)  # throttled: hold little, so the sender feels it
                await queue.put((time.monotonic(), data))
        except OSError:
            pass
        await queue.put("close")
        await sender

    async def _send(self, queue, writer):
        """Writes queued chunks when their delay is over, at the throttled
        rate, up to "close" (both sockets closed once their buffered data
        is out, as a peer's FIN would) or "abort" (both closed at once)."""
        try:
            while True:
                item = await queue.get()
                if item == "close":
                    return self.close()
                if item == "abort":
                    return self.abort()
                stamp, data = item
                wait = stamp + self.proxy.delay_s - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()
                if self.proxy.rate is not None:
                    await asyncio.sleep(len(data) / self.proxy.rate)
        except OSError:
            self.abort()  # the reader stage now sees EOF: take what it queues until then
            while await queue.get() not in ("close", "abort"):
                pass
