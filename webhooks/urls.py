from rest_framework.routers import SimpleRouter

from webhooks.views import WebhookViewSet

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("webhooks", WebhookViewSet, basename="webhooks")

urlpatterns = router.urls
