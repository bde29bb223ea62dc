"""Who may do what in the API: every signed-in account reads; writes need Django permissions.

`is_staff` grants nothing here: it only opens the admin's login (museum/accounts.py, roles).
"""

from rest_framework.permissions import BasePermission, DjangoModelPermissions


class StaffManagesOrReadOnly(DjangoModelPermissions):
    """Any signed-in account reads; a write needs the model's add, change or delete permission."""


class HasPermission(BasePermission):
    """A signed-in account holding one named Django permission, e.g. `orders.check_in_ticket`."""

    permission = ""

    def has_permission(self, request, view):
        user = request.user
        return bool(user and user.is_authenticated and user.has_perm(self.permission))


class MayCheckIn(HasPermission):
    """The door: staff and door staff."""

    permission = "orders.check_in_ticket"
