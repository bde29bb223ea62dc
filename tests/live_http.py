"""Real HTTP requests, for the tests that run a server: live_server, gunicorn."""

import base64
import json
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from email.message import Message

from tests.factories import PASSWORD


@dataclass
class Answer:
    status: int
    headers: Message
    content: bytes

    def json(self):
        return json.loads(self.content)

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "")


def call(
    method: str,
    url: str,
    *,
    username: str,
    body: dict | None = None,
    idempotency_key: str | None = None,
    password: str = PASSWORD,
    timeout: float = 30,
) -> Answer:
    credentials = base64.b64encode(f"{username}:{password}".encode()).decode()
    headers = {"Authorization": f"Basic {credentials}"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    request = urllib.request.Request(
        url,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers=headers,
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return Answer(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.headers, error.read())


def sign_in(server_url: str, *, username: str, password: str = PASSWORD) -> None:
    """A client's first request: its password is checked once, then remembered.

    A burst that follows then measures the rule under test rather than the sign-in, which takes
    one password check at a time per address.
    """
    answer = call("GET", f"{server_url}/v1.1/museum-hours", username=username, password=password)
    assert answer.status == 200, answer.status


def post(url: str, body: dict, username: str) -> tuple[int, dict]:
    answer = call("POST", url, username=username, body=body)
    return answer.status, answer.json()


def in_parallel(count: int, call) -> list:
    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(lambda _: call(), range(count)))
