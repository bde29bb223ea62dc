from django.urls import path
from rest_framework.routers import SimpleRouter

from orders.donation_views import DonationCreate, DonationRefund, FundList
from orders.views import (
    MembershipCardPdf,
    MembershipCardPng,
    MembershipGiftCardPdf,
    MembershipTypeList,
    MembershipViewSet,
    OrderViewSet,
    PriceList,
    VisitorCategoryList,
)

router = SimpleRouter(trailing_slash=False, use_regex_path=False)
router.register("orders", OrderViewSet, basename="orders")
router.register("memberships", MembershipViewSet, basename="memberships")

urlpatterns = [
    path("visitor-categories", VisitorCategoryList.as_view(), name="visitor-categories"),
    path("prices", PriceList.as_view(), name="prices"),
    path("membership-types", MembershipTypeList.as_view(), name="membership-types"),
    path(
        "memberships/<uuid:membershipId>/card.png",
        MembershipCardPng.as_view(),
        name="membership-card-png",
    ),
    path(
        "memberships/<uuid:membershipId>/card.pdf",
        MembershipCardPdf.as_view(),
        name="membership-card-pdf",
    ),
    path(
        "memberships/<uuid:membershipId>/gift.pdf",
        MembershipGiftCardPdf.as_view(),
        name="membership-gift-card-pdf",
    ),
    path("funds", FundList.as_view(), name="funds"),
    path("donations", DonationCreate.as_view(), name="donations"),
    path(
        "orders/<uuid:orderId>/donations/<int:donationId>/refund",
        DonationRefund.as_view(),
        name="donation-refund",
    ),
    *router.urls,
]
