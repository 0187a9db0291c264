"""A minimal blocking RESP2 client (stdlib only).

Replies decode to Python values: simple strings to str, integers to int,
bulk strings to bytes (None for a null bulk), arrays to lists (None for a
null array) and error replies to ReplyError instances. `call` raises the
ReplyError when the reply itself is an error; errors nested in an array
(EXEC's replies) are returned in place.
"""
import socket


class ReplyError(Exception):
    """An error reply (-ERR ..., -WRONGTYPE ..., -READONLY ...)."""


def encode(args):
    """One command as a RESP array of bulk strings; args are bytes, str or int."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, int):
            a = str(a).encode()
        elif isinstance(a, str):
            a = a.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


class Client:
    """One connection to 127.0.0.1:port. Raises ConnectionError (or an
    OSError such as socket.timeout) when the server goes away or is silent
    for `timeout` seconds; the client is unusable after that."""

    def __init__(self, port, timeout=10.0):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    def close(self):
        self.sock.close()

    def call(self, *args):
        """Sends one command and returns its reply; raises ReplyError on an error reply."""
        reply = self.pipeline([args])[0]
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    def pipeline(self, commands):
        """Sends every command in one write, returns their replies in order
        (error replies as ReplyError values, not raised)."""
        self.sock.sendall(b"".join(encode(c) for c in commands))
        return [self._read() for _ in commands]

    def _fill(self):
        if self.pos > 65536:
            del self.buf[:self.pos]
            self.pos = 0
        chunk = self.sock.recv(262144)
        if not chunk:
            raise ConnectionError("connection to port %d closed" % self.port)
        self.buf += chunk

    def _line(self):
        while True:
            end = self.buf.find(b"\r\n", self.pos)
            if end >= 0:
                line = bytes(self.buf[self.pos:end])
                self.pos = end + 2
                return line
            self._fill()

    def _read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return ReplyError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) - self.pos < n + 2:
                self._fill()
            data = bytes(self.buf[self.pos:self.pos + n])
            self.pos += n + 2
            return data
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise ConnectionError("unexpected reply line %r from port %d" % (line[:80], self.port))
