"""A headless Chromium driven over its DevTools protocol, for tests that look at pages as a reader
does: its width, its screenshots, what a page script finds once the page has settled.

Only the standard library: a websocket client for the one connection the protocol needs (text
frames, masked from the client as the protocol requires) and a browser started from the
``chromium`` found on ``PATH`` (no browser is downloaded).
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: Flags that keep a headless run quiet and self-contained (no network of its own, no profile).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-port=0", "about:blank")


def find_chromium() -> str | None:
    """The Chromium executable on ``PATH``, if any."""
    return next((found for name in ("chromium", "chromium-browser", "google-chrome")
                 if (found := shutil.which(name))), None)


class Socket:
    """A websocket connection: text messages out and in."""

    def __init__(self, url: str, timeout: float) -> None:
        parts = urlsplit(url)
        self._sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self._sock.sendall((f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
                            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                            "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = self._sock.recv(4096)
            if not chunk:
                raise ConnectionError("the browser closed the connection during the handshake")
            reply += chunk
        head, _, self._buffer = reply.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(head.decode(errors="replace"))

    def send(self, text: str) -> None:
        payload = text.encode()
        mask = os.urandom(4)
        size = len(payload)
        header = bytes([0x81])
        if size < 126:
            header += bytes([0x80 | size])
        elif size < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack("!H", size)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", size)
        masked = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
        self._sock.sendall(header + mask + masked)

    def receive(self) -> str:
        """The next whole text message (continuation frames joined; other frames skipped)."""
        message = b""
        while True:
            first, second = self._read(2)
            size = second & 0x7F
            if size == 126:
                size = struct.unpack("!H", self._read(2))[0]
            elif size == 127:
                size = struct.unpack("!Q", self._read(8))[0]
            payload = self._read(size)
            opcode = first & 0x0F
            if opcode in (0, 1):
                message += payload
                if first & 0x80:
                    return message.decode()
            elif opcode == 8:
                raise ConnectionError("the browser closed the connection")

    def _read(self, count: int) -> bytes:
        while len(self._buffer) < count:
            chunk = self._sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the browser closed the connection")
            self._buffer += chunk
        data, self._buffer = self._buffer[:count], self._buffer[count:]
        return data

    def close(self) -> None:
        self._sock.close()


class Browser:
    """One headless Chromium with one page; :meth:`close` ends it and removes its profile."""

    def __init__(self, executable: str, timeout: float = 30.0) -> None:
        self._profile = tempfile.mkdtemp(prefix="opspec-chromium-")
        self._process = subprocess.Popen([executable, *FLAGS[:-2], f"--user-data-dir={self._profile}", *FLAGS[-2:]],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self._timeout = timeout
        self._next_id = 0
        try:
            port = self._port()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout) as reply:
                targets = json.load(reply)
            page = next(target for target in targets if target.get("type") == "page")
            self._socket = Socket(page["webSocketDebuggerUrl"], timeout)
            self.call("Page.enable")
            self.call("Runtime.enable")
        except BaseException:
            self.close()
            raise

    def _port(self) -> int:
        assert self._process.stderr is not None
        deadline = time.monotonic() + self._timeout
        while time.monotonic() < deadline:
            line = self._process.stderr.readline()
            if not line and self._process.poll() is not None:
                break
            found = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if found:
                return int(found.group(1))
        raise RuntimeError("chromium did not open its DevTools port")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a command and return its result (events that arrive meanwhile are dropped)."""
        self._next_id += 1
        self._socket.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.receive())
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))

    def open(self, url: str, width: int, height: int = 900) -> None:
        """Load ``url`` in a window ``width`` pixels wide and wait until it has loaded."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=width < 600)
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def evaluate(self, expression: str) -> Any:
        """The value of a page expression (a promise is awaited)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, condition: str, timeout: float | None = None) -> None:
        """Poll a page expression until it is true."""
        deadline = time.monotonic() + (timeout or self._timeout)
        while not self.evaluate(f"Boolean({condition})"):
            if time.monotonic() > deadline:
                raise TimeoutError(condition)
            time.sleep(0.1)

    def screenshot(self, path: Path) -> None:
        """The visible part of the page as a PNG."""
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        if getattr(self, "_socket", None) is not None:
            self._socket.close()
        self._process.kill()
        self._process.wait()
        if self._process.stderr is not None:
            self._process.stderr.close()
        shutil.rmtree(self._profile, ignore_errors=True)


__all__ = ["Browser", "find_chromium"]
