"""Who may do what: visitors read and buy, staff manage the programme."""

from rest_framework.permissions import SAFE_METHODS, BasePermission, DjangoModelPermissions


class StaffManagesOrReadOnly(DjangoModelPermissions):
    """Any signed-in account reads; writes need `is_staff` or the model's add/change/delete perm."""

    def has_permission(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return False
        if request.method in SAFE_METHODS or request.user.is_staff:
            return True
        return super().has_permission(request, view)


class IsStaff(BasePermission):
    """Staff only: the door, the desk."""

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated and request.user.is_staff)
