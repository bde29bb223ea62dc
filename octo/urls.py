from django.urls import path

from octo import views

urlpatterns = [
    path("supplier", views.SupplierView.as_view(), name="octo-supplier"),
    path("suppliers", views.SuppliersView.as_view(), name="octo-suppliers"),
    path("capabilities", views.CapabilitiesView.as_view(), name="octo-capabilities"),
    path("products", views.ProductsView.as_view(), name="octo-products"),
    path("products/<str:product_id>", views.ProductView.as_view(), name="octo-product"),
    path("availability", views.AvailabilityView.as_view(), name="octo-availability"),
    path("availability/calendar", views.CalendarView.as_view(), name="octo-calendar"),
    path("bookings", views.BookingsView.as_view(), name="octo-bookings"),
    path("bookings/<str:uuid>", views.BookingView.as_view(), name="octo-booking"),
    path("bookings/<str:uuid>/confirm", views.ConfirmView.as_view(), name="octo-confirm"),
    path("bookings/<str:uuid>/extend", views.ExtendView.as_view(), name="octo-extend"),
    path("bookings/<str:uuid>/cancel", views.CancelView.as_view(), name="octo-cancel"),
    path("webhooks", views.WebhooksView.as_view(), name="octo-webhooks"),
    path("webhooks/<str:webhook_id>", views.WebhookView.as_view(), name="octo-webhook"),
]
