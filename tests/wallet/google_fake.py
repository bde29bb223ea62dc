"""A stand-in for Google on loopback: the OAuth token endpoint a service account's key names, and
the little of the Wallet REST API the service uses (the classes and objects of event tickets,
generic passes and gift cards), keeping
what it is sent as Google does: an insert of an id it holds is a 409, a read or an update of one
it does not hold a 404, and a request without a token it issued a 401."""

import datetime as dt
import json
import re
import secrets
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from google.auth import jwt
from werkzeug import Request, Response

API_PATH = "/walletobjects/v1"
TOKEN_PATH = "/token"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
SERVICE_ACCOUNT_EMAIL = "wallet@museum-test.iam.gserviceaccount.com"
PASS_TYPES = ("eventTicket", "generic", "giftCard")
RESOURCES = tuple(f"{kind}{part}" for kind in PASS_TYPES for part in ("Class", "Object"))


@dataclass(frozen=True)
class ServiceAccount:
    """A service account's key as Google's console downloads it, made for the test, with the
    certificate Google would publish for its public key."""

    key_json: dict
    certificate_pem: bytes

    @classmethod
    def make(cls, token_uri: str) -> "ServiceAccount":
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        private_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, SERVICE_ACCOUNT_EMAIL)])
        now = dt.datetime.now(dt.UTC)
        certificate = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .sign(key, hashes.SHA256())
        )
        key_json = {
            "type": "service_account",
            "project_id": "museum-test",
            "private_key_id": "test-key",
            "private_key": private_pem.decode(),
            "client_email": SERVICE_ACCOUNT_EMAIL,
            "client_id": "1",
            "token_uri": token_uri,
        }
        return cls(key_json, certificate.public_bytes(serialization.Encoding.PEM))


@dataclass
class FakeGoogle:
    account: ServiceAccount
    stored: dict[str, dict[str, dict]] = field(
        default_factory=lambda: {name: {} for name in RESOURCES}
    )
    tokens: set[str] = field(default_factory=set)
    calls: list[tuple[str, str]] = field(default_factory=list)
    down: bool = False
    # A message Google refuses every object written with (a 400), when set.
    refusal: str = ""

    @property
    def objects(self) -> dict[str, dict]:
        return self.stored["eventTicketObject"]

    @property
    def classes(self) -> dict[str, dict]:
        return self.stored["eventTicketClass"]

    def objects_of(self, kind: str) -> dict[str, dict]:
        """The objects of a pass type held: objects_of("giftCard")."""
        return self.stored[f"{kind}Object"]

    def classes_of(self, kind: str) -> dict[str, dict]:
        return self.stored[f"{kind}Class"]

    def install(self, httpserver) -> None:
        httpserver.expect_request(TOKEN_PATH, method="POST").respond_with_handler(self.token)
        httpserver.expect_request(re.compile(f"^{API_PATH}/")).respond_with_handler(self.api)

    def token(self, request: Request) -> Response:
        # Up even when the API is `down`: google-auth retries a failing token endpoint after
        # waits of a second and more, which a test would sit through.
        # The grant is a JWT signed with the service account's key, for Google's token endpoint
        # (google-auth names Google's whatever the key's token_uri).
        claims = jwt.decode(
            request.form["assertion"], certs=self.account.certificate_pem, audience=GOOGLE_TOKEN_URI
        )
        assert claims["iss"] == SERVICE_ACCOUNT_EMAIL
        assert "wallet_object.issuer" in claims["scope"]
        token = secrets.token_urlsafe()
        self.tokens.add(token)
        body = {"access_token": token, "expires_in": 3600, "token_type": "Bearer"}
        return Response(json.dumps(body), content_type="application/json")

    def api(self, request: Request) -> Response:
        resource, _, resource_id = request.path.removeprefix(f"{API_PATH}/").partition("/")
        self.calls.append((request.method, resource))
        if (refused := self._refused(request, resource)) is not None:
            return refused
        store = self.stored[resource]
        if request.method == "POST" and not resource_id:
            body = request.get_json()
            if body["id"] in store:
                return self._error(409, "ALREADY_EXISTS")
            # An object's class must be there first, of its own type.
            is_object = resource.endswith("Object")
            if is_object and body["classId"] not in self.classes_of(
                resource.removesuffix("Object")
            ):
                return self._error(404, "NOT_FOUND")
            store[body["id"]] = body
            return self._json(body)
        if resource_id not in store:
            return self._error(404, "NOT_FOUND")
        if request.method == "PUT":
            store[resource_id] = request.get_json()
        elif request.method != "GET":
            return self._error(405, "METHOD_NOT_ALLOWED")
        return self._json(store[resource_id])

    def _refused(self, request: Request, resource: str) -> Response | None:
        """Google's answer before it looks at what is asked for, if it has one."""
        if self.down:
            return self._error(503, "UNAVAILABLE")
        authorization = request.headers.get("Authorization", "")
        if authorization.removeprefix("Bearer ") not in self.tokens:
            return self._error(401, "UNAUTHENTICATED")
        if resource not in RESOURCES:
            return self._error(404, "NOT_FOUND")
        if self.refusal and resource.endswith("Object") and request.method != "GET":
            return self._error(400, "INVALID_ARGUMENT", self.refusal)
        return None

    @staticmethod
    def _json(body: dict, status: int = 200) -> Response:
        return Response(json.dumps(body), status=status, content_type="application/json")

    def _error(self, status: int, reason: str, message: str = "") -> Response:
        error = {"code": status, "status": reason, "message": message or reason}
        return self._json({"error": error}, status)
