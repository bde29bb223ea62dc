from django.urls import path
from rest_framework.routers import SimpleRouter

from orders.views import OrderViewSet, PriceList, VisitorCategoryList

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("orders", OrderViewSet, basename="orders")

urlpatterns = [
    path("visitor-categories", VisitorCategoryList.as_view(), name="visitor-categories"),
    path("prices", PriceList.as_view(), name="prices"),
    *router.urls,
]
