from django.urls import path

from desk import groups, guides, members, views

urlpatterns = [
    path("", views.today, name="desk"),
    path("sell/", views.sell, name="desk-sell"),
    path("slots/", views.slots, name="desk-slots"),
    path("gift-cards/sell/", views.sell_gift_card, name="desk-gift-card-sell"),
    path("donations/sell/", views.sell_donation, name="desk-donation-sell"),
    path("orders/<uuid:order_id>/", views.order_page, name="desk-order"),
    path("orders/<uuid:order_id>/tickets.pdf", views.order_pdf, name="desk-order-pdf"),
    path(
        "orders/<uuid:order_id>/documents/<str:number>.pdf",
        views.document_pdf,
        name="desk-order-document",
    ),
    path(
        "orders/<uuid:order_id>/cancel/confirm",
        views.confirm_cancel,
        name="desk-order-confirm-cancel",
    ),
    path("orders/<uuid:order_id>/<str:what>", views.change_order, name="desk-order-change"),
    path("guides/", guides.tours_without_guide, name="desk-guides"),
    path("groups/", groups.groups, name="desk-groups"),
    path("groups/<int:request_id>/", groups.group_page, name="desk-group"),
    path("groups/<int:request_id>/<str:what>", groups.change_group, name="desk-group-change"),
    path("members/", members.members, name="desk-members"),
    path("members/sell/", members.sell_member, name="desk-member-sell"),
    path("members/<uuid:membership_id>/", members.member_page, name="desk-member"),
    path("members/<uuid:membership_id>/renew", members.renew_member, name="desk-member-renew"),
    path("members/<uuid:membership_id>/visit", members.book_visit, name="desk-member-visit"),
    path("members/<uuid:membership_id>/card.pdf", members.member_card, name="desk-member-card"),
    path("members/<uuid:membership_id>/gift.pdf", members.gift_card, name="desk-member-gift-card"),
]
