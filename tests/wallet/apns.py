"""A stand-in for Apple's Push Notification service on loopback: HTTP/2 over TLS (as APNs, and
nothing else), its certificate issued at test time by an authority of the test's own, which the
client trusts through SSL_CERT_FILE. It keeps every push it gets and answers what the test asks
(200, 410 Unregistered, 503 ServiceUnavailable)."""

import socket
import ssl
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import h2.config
import h2.connection
import h2.events
from cryptography.hazmat.primitives.asymmetric import ec

from tests.certificates import LOOPBACK, certificate_pem, issued, key_pem, new_key

REASONS = {410: "Unregistered", 503: "ServiceUnavailable", 400: "BadDeviceToken"}


@dataclass(frozen=True)
class Push:
    device_token: str
    headers: dict[str, str]
    body: bytes

    @property
    def topic(self) -> str:
        return self.headers["apns-topic"]

    @property
    def jwt(self) -> str:
        scheme, _, token = self.headers["authorization"].partition(" ")
        assert scheme == "bearer"
        return token


@dataclass
class FakeApns:
    """What the stand-in got, and what it answers (`status`, for every device)."""

    port: int = 0
    status: int = 200
    pushes: list[Push] = field(default_factory=list)
    # The public half of the museum's APNs key: what APNs verifies the pushes' JWTs with.
    public_key: ec.EllipticCurvePublicKey | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"


def server_certificate(folder: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate for 127.0.0.1 it issued, with its key: (ca, certificate, key)."""
    ca_key, key = new_key(), new_key()
    ca = issued("Test APNs CA", ca_key, ca=True)
    certificate = issued("127.0.0.1", key, issuer="Test APNs CA", issuer_key=ca_key, names=LOOPBACK)
    paths = folder / "apns-ca.pem", folder / "apns.pem", folder / "apns-key.pem"
    paths[0].write_bytes(certificate_pem(ca))
    paths[1].write_bytes(certificate_pem(certificate))
    paths[2].write_bytes(key_pem(key))
    return paths


class Server:
    """The stand-in's thread: accepts TLS connections, one thread each, speaking HTTP/2."""

    def __init__(self, state: FakeApns, certificate: Path, key: Path):
        self.state = state
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(certificate, key)
        self.context.set_alpn_protocols(["h2"])
        self.listener = socket.create_server(("127.0.0.1", 0))
        state.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.listener.close()
        self.thread.join(timeout=5)

    def _accept(self) -> None:
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        try:
            with self.context.wrap_socket(raw, server_side=True) as tls:
                self._speak(tls)
        except (OSError, ssl.SSLError):
            pass  # the client went

    def _speak(self, tls: ssl.SSLSocket) -> None:
        connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        connection.initiate_connection()
        tls.sendall(connection.data_to_send())
        streams: dict[int, tuple[dict[str, str], bytearray]] = {}
        while data := tls.recv(65535):
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    headers = {_text(k): _text(v) for k, v in event.headers}
                    streams[event.stream_id] = (headers, bytearray())
                elif isinstance(event, h2.events.DataReceived):
                    streams[event.stream_id][1].extend(event.data)
                    connection.acknowledge_received_data(
                        event.flow_controlled_length, event.stream_id
                    )
                elif isinstance(event, h2.events.StreamEnded):
                    headers, body = streams.pop(event.stream_id)
                    self._answer(connection, event.stream_id, headers, bytes(body))
            tls.sendall(connection.data_to_send())

    def _answer(self, connection, stream_id: int, headers: dict, body: bytes) -> None:
        prefix = "/3/device/"
        assert headers[":method"] == "POST" and headers[":path"].startswith(prefix)
        with self.lock:
            status = self.state.status
            self.state.pushes.append(Push(headers[":path"][len(prefix) :], headers, body))
        reason = REASONS.get(status)
        content = b'{"reason": "%s"}' % reason.encode() if reason else b""
        answer = [(":status", str(status)), ("apns-id", str(uuid.uuid4()).upper())]
        if content:
            answer.append(("content-length", str(len(content))))
        connection.send_headers(stream_id, answer, end_stream=not content)
        if content:
            connection.send_data(stream_id, content, end_stream=True)


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else value
