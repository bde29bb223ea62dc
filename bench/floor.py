"""The benchmark's floor: Django REST framework with nothing of the museum's in the request.

No authentication, permission, throttle or database: what is left is the cost of the server, the
middleware and DRF itself, which every API request pays too. It is served under the API's prefix
(bench.FLOOR_PATH), so it passes through the middleware as an API request does. Only the
benchmark's own URLconf (bench/urls.py) serves it, so a deployment of the service never exposes
it; the bare project (bench/bare/) serves the same view at the same path.
"""

from rest_framework.response import Response
from rest_framework.views import APIView


class FloorView(APIView):
    authentication_classes = []
    permission_classes = []
    throttle_classes = []

    def get(self, request):
        return Response({"status": "ok"})
