from rest_framework.routers import SimpleRouter

from vouchers.views import VoucherViewSet

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("vouchers", VoucherViewSet, basename="vouchers")

urlpatterns = router.urls
