from django.apps import AppConfig


class GiftCardsConfig(AppConfig):
    """Gift cards: sold as orders of the sale, spent as payments of it (an app above `orders`,
    which it reaches through `orders`' registry of providers and its signals)."""

    name = "giftcards"
    verbose_name = "Gift cards"

    def ready(self):
        from giftcards import services
        from giftcards.notifications import send_gift_card_email
        from giftcards.provider import GiftCardProvider
        from orders.models import OrderKind
        from orders.notifications import register_email
        from orders.providers import register
        from orders.services.vouchers import register_other_codes
        from orders.signals import order_confirmed, refunds_to_gift_card

        register(GiftCardProvider())
        order_confirmed.connect(services.issue_on_confirmation, dispatch_uid="giftcards-issue")
        refunds_to_gift_card.connect(services.issue_for_refunds, dispatch_uid="giftcards-refund")
        register_email(OrderKind.GIFT_CARD, send_gift_card_email)
        # A gift card's code typed as a voucher is told it is a gift card.
        register_other_codes(services.as_voucher_code)
