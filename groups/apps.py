from django.apps import AppConfig


class GroupsConfig(AppConfig):
    """Groups and schools: a request that holds its places, staff's answer, the group order it
    becomes (confirmed, invoiced, paid later), its guided tour and guides, and the day itself (an
    app above `orders`, `giftcards` and `vouchers`, whose services it calls; below the door,
    which admits a group by its order's code)."""

    name = "groups"
    verbose_name = "Groups and schools"

    def ready(self):
        from groups.history import register_descriptions
        from groups.tasks import group_emails_sent
        from orders.services.limits import register_email_counter

        register_descriptions()
        register_email_counter(group_emails_sent)
