import pytest


@pytest.fixture
def receivers_allowed(settings):
    """The loopback receiver let through, as MUSEUM_WEBHOOK_ALLOWED_HOSTS does for internal ones."""
    settings.MUSEUM_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MUSEUM_WEBHOOK_ALLOW_HTTP = True
