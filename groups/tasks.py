"""A group's emails (owned by the requests helper; a stub until then)."""


def mail_group(group, kind: str) -> None:
    """Mail the group (and, for some kinds, staff) about `kind`, enqueued in the caller's
    transaction."""
