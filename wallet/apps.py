from django.apps import AppConfig


class WalletConfig(AppConfig):
    """Passes in the visitor's phone: Apple Wallet's .pkpass and Google Wallet's save links for
    tickets, member cards and gift cards, carrying the signed tokens the door already reads, and
    kept true when what they show changes (an app above the sale and admission, whose services
    it calls; the sale tells it of changes through its signals)."""

    name = "wallet"
    verbose_name = "Wallet passes"

    def ready(self):
        from museum.health import register_reported
        from orders.wallet_links import register_wallet_links
        from wallet import checks, links, receivers

        checks.register()
        register_reported("wallet_apple", checks.apple_state)
        register_reported("wallet_google", checks.google_state)
        register_reported("wallet_apple_push", checks.apns_state)
        receivers.connect()
        # The emails' "Add to ... Wallet" links (orders.wallet_links).
        register_wallet_links(links.wallet_links)
