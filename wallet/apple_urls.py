"""Apple Wallet's web service at the pass's webServiceURL (museum/urls.py: /wallet/apple/), its
paths as django_walletpass's urls name them, each served by our subclass
(wallet/apple_service.py)."""

from django.urls import re_path

from wallet.apple_service import DeviceLog, LatestVersion, RegisterPass, UpdatedPasses

urlpatterns = [
    re_path(
        r"^v1/devices/(?P<device_library_id>[^/]+)/registrations/(?P<pass_type_id>[^/]+)/"
        r"(?P<serial_number>[^/]+)$",
        RegisterPass.as_view({"post": "create", "delete": "destroy"}),
        name="walletpass_register_pass",
    ),
    re_path(
        r"^v1/devices/(?P<device_library_id>[^/]+)/registrations/(?P<pass_type_id>[^/]+)$",
        UpdatedPasses.as_view({"get": "list"}),
        name="walletpass_registrations",
    ),
    re_path(
        r"^v1/passes/(?P<pass_type_id>[^/]+)/(?P<serial_number>[^/]+)$",
        LatestVersion.as_view({"get": "retrieve"}),
        name="walletpass_latest_version",
    ),
    re_path(r"^v1/log$", DeviceLog.as_view({"post": "create"}), name="walletpass_log"),
]
