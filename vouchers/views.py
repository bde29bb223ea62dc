"""Staff's API of vouchers (docs/vouchers.md): each operation one service of vouchers.services,
under the voucher permission of its kind (view, add, change, delete)."""

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response

from museum.admin_pages import csv_response
from museum.idempotency import IDEMPOTENCY_KEY_PARAMETER, idempotent
from museum.query import StrictQueryParameters, parameter_names, validated_query
from museum.renderers import MuseumJSONRenderer
from museum.schema import problems
from museum.throttling import VoucherRateThrottle
from orders.models import Voucher
from orders.services import vouchers
from orders.services.memberships import membership_for
from orders.services.sale import quote_order
from vouchers import csv_files, services
from vouchers.serializers import (
    CreateVoucherRequestSerializer,
    UpdateVoucherRequestSerializer,
    VoucherBatchRequestSerializer,
    VoucherBatchSerializer,
    VoucherCheckRequestSerializer,
    VoucherCheckSerializer,
    VoucherImportRequestSerializer,
    VoucherListQuerySerializer,
    VoucherSerializer,
    VouchersImportedSerializer,
    VoucherStatsQuerySerializer,
    VoucherTagStatsSerializer,
)

VOUCHER_ID = OpenApiParameter("voucherId", OpenApiTypes.INT, OpenApiParameter.PATH)
# What each operation asks of staff: the voucher's Django permission of that kind.
PERMISSION_OF_ACTION = {
    "list": "orders.view_voucher",
    "metadata": "orders.view_voucher",  # OPTIONS
    "retrieve": "orders.view_voucher",
    "export": "orders.view_voucher",
    "stats": "orders.view_voucher",
    "create": "orders.add_voucher",
    "batch": "orders.add_voucher",
    "import_file": "orders.add_voucher",
    "partial_update": "orders.change_voucher",
    "destroy": "orders.delete_voucher",
}
# How much a CSV file may weigh: 1000 rows of long comments.
MAX_FILE_BYTES = 2_000_000


class ManagesVouchers(BasePermission):
    """Staff holding the voucher permission the operation needs."""

    def has_permission(self, request, view):
        user = request.user
        needed = PERMISSION_OF_ACTION.get(getattr(view, "action", None) or "")
        return bool(user and user.is_authenticated and needed and user.has_perm(needed))


class CSVParser(BaseParser):
    """A CSV file sent as the body: its text."""

    media_type = "text/csv"

    def parse(self, stream, media_type=None, parser_context=None):
        body = stream.read(MAX_FILE_BYTES + 1) if stream is not None else b""
        if len(body) > MAX_FILE_BYTES:
            raise ParseError("The file is larger than 2 MB.")
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            raise ParseError("The file is not UTF-8 text.") from None


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


CSV_FILE = OpenApiResponse(OpenApiTypes.BINARY, "The vouchers, a row each (docs/vouchers.md).")


@extend_schema(tags=["Vouchers"])
class VoucherViewSet(StrictQueryParameters, viewsets.GenericViewSet):
    queryset = Voucher.objects.none()  # what the schema reads
    serializer_class = VoucherSerializer
    permission_classes = [ManagesVouchers]
    lookup_url_kwarg = "voucherId"
    lookup_value_converter = "int"
    list_query_serializer = VoucherListQuerySerializer
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_permissions(self):
        if self.action == "check":
            return [IsAuthenticated()]
        return super().get_permissions()

    def get_throttles(self):
        throttles = super().get_throttles()
        if self.action == "check":
            throttles.append(VoucherRateThrottle())
        return throttles

    def accepted_query_parameters(self) -> frozenset[str]:
        if self.action in ("export", "stats"):
            return parameter_names(VoucherStatsQuerySerializer)
        return super().accepted_query_parameters()

    @extend_schema(
        operation_id="listVouchers",
        summary="Vouchers, newest first",
        description="Staff (`orders.view_voucher`); `tag` exactly, `code` contained, any case.",
        parameters=[VoucherListQuerySerializer],
        responses={200: VoucherSerializer(many=True), **problems(400, 401, 403)},
    )
    def list(self, request):
        query = validated_query(VoucherListQuerySerializer, request)
        found = services.vouchers(tag=query.get("tag"), code=query.get("code"))
        page = self.paginate_queryset(found)
        return self.get_paginated_response(VoucherSerializer(page, many=True).data)

    @extend_schema(
        operation_id="createVoucher",
        summary="Make a voucher",
        description=(
            "Staff (`orders.add_voucher`). The code is kept upper-case; one another voucher or "
            "a gift card has is refused (409 `voucher_code_taken`)."
        ),
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=CreateVoucherRequestSerializer,
        responses={201: VoucherSerializer, **problems(400, 401, 403, 409, 415, 422)},
    )
    @idempotent
    def create(self, request):
        data = _validated(CreateVoucherRequestSerializer, request)
        voucher = services.create_voucher(by=request.user, **data)
        location = reverse("vouchers-detail", kwargs={"voucherId": voucher.pk})
        return Response(
            VoucherSerializer(services.voucher_of(voucher.pk)).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )

    @extend_schema(
        operation_id="getVoucher",
        summary="A voucher, its uses and the discount it gave",
        parameters=[VOUCHER_ID],
        responses={200: VoucherSerializer, **problems(401, 403, 404)},
    )
    def retrieve(self, request, voucherId):
        return Response(VoucherSerializer(services.voucher_of(voucherId)).data)

    @extend_schema(
        operation_id="updateVoucher",
        summary="Change a voucher",
        description=(
            "Staff (`orders.change_voucher`): any of its settings, never its code or counters; "
            "a maximum of uses or a budget below what it has used or given is refused."
        ),
        parameters=[VOUCHER_ID],
        request=UpdateVoucherRequestSerializer,
        responses={200: VoucherSerializer, **problems(400, 401, 403, 404, 415)},
    )
    def partial_update(self, request, voucherId):
        if request.stream is None:
            raise ParseError("Send the fields to change as a JSON object.")
        data = _validated(UpdateVoucherRequestSerializer, request)
        voucher = services.update_voucher(voucher_id=voucherId, by=request.user, **data)
        return Response(VoucherSerializer(voucher).data)

    @extend_schema(
        operation_id="deleteVoucher",
        summary="Delete a voucher never used",
        description="One used (409 `voucher_used`) is ended instead: set its `validUntil`.",
        parameters=[VOUCHER_ID],
        responses={204: None, **problems(401, 403, 404, 409)},
    )
    def destroy(self, request, voucherId):
        services.delete_voucher(voucher_id=voucherId, by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        operation_id="createVoucherBatch",
        summary="Make many vouchers at once",
        description=(
            "Staff (`orders.add_voucher`): `count` new codes with `prefix`, or the `codes` "
            "given, all with the same settings, all or none: a code given twice, or taken by "
            "another voucher or a gift card, makes none (409 `voucher_code_taken`, naming it). "
            "With `emails`, one code is mailed to each address after the commit, each within "
            "its mailbox's daily limit of emails."
        ),
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request=VoucherBatchRequestSerializer,
        responses={201: VoucherBatchSerializer, **problems(400, 401, 403, 409, 413, 415, 422)},
    )
    @action(detail=False, methods=["post"])
    @idempotent
    def batch(self, request):
        data = _validated(VoucherBatchRequestSerializer, request)
        emails = data.pop("emails", [])
        made = services.create_vouchers(by=request.user, emails=emails, **data)
        answer = {"count": len(made), "codes": [v.code for v in made], "emailed": len(emails)}
        return Response(VoucherBatchSerializer(answer).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="exportVouchers",
        summary="Vouchers as a CSV file",
        description="Staff (`orders.view_voucher`); of one `tag`, or all.",
        parameters=[VoucherStatsQuerySerializer],
        responses={(200, "text/csv"): CSV_FILE, **problems(400, 401, 403)},
    )
    @action(
        detail=False,
        methods=["get"],
        url_path="export.csv",
        renderer_classes=[MuseumJSONRenderer, CSVRenderer],
    )
    def export(self, request):
        tag = validated_query(VoucherStatsQuerySerializer, request).get("tag")
        rows = csv_files.rows_of(services.vouchers(tag=tag).order_by("code"))
        return csv_response("vouchers.csv", csv_files.HEADER, rows)

    @extend_schema(
        operation_id="importVouchers",
        summary="Make vouchers from a CSV file",
        description=(
            "Staff (`orders.add_voucher`): the file as the body (`text/csv`) or as the part "
            "`file` of a form, in the shape export.csv writes; all or none, a refusal naming "
            "its row (`row 3.maxUses`)."
        ),
        parameters=[IDEMPOTENCY_KEY_PARAMETER],
        request={
            "text/csv": OpenApiTypes.BINARY,
            "multipart/form-data": VoucherImportRequestSerializer,
        },
        responses={
            201: VouchersImportedSerializer,
            **problems(400, 401, 403, 409, 413, 415, 422),
        },
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        parser_classes=[CSVParser, MultiPartParser],
    )
    @idempotent
    def import_file(self, request):
        made = services.import_vouchers(by=request.user, rows=csv_files.read(_csv_text(request)))
        answer = {"count": len(made), "codes": [voucher.code for voucher in made]}
        return Response(VouchersImportedSerializer(answer).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="voucherStats",
        summary="Vouchers per tag: issued, used, discount given",
        description="Staff (`orders.view_voucher`): what the vouchers' valid tickets took.",
        parameters=[VoucherStatsQuerySerializer],
        responses={200: VoucherTagStatsSerializer(many=True), **problems(400, 401, 403)},
    )
    @action(detail=False, methods=["get"], pagination_class=None)
    def stats(self, request):
        tag = validated_query(VoucherStatsQuerySerializer, request).get("tag")
        return Response(VoucherTagStatsSerializer(services.stats(tag=tag), many=True).data)

    @extend_schema(
        operation_id="checkVoucher",
        summary="Whether a voucher applies to an order, and what the order would cost",
        description=(
            "Any account, MUSEUM_THROTTLE_VOUCHER_RATE (10) a minute: the order as POST /orders "
            "takes it with its `voucher`, priced by the sale's own rules (the quote of "
            "`dryRun`); nothing is taken, no use counted. A code that does not apply is 409 "
            "`voucher_not_applicable`, an unknown code alike (staff are told why), "
            "`voucher_used_up` or `voucher_budget_spent` when it has too little left, "
            "`voucher_is_gift_card` for a gift card's code."
        ),
        request=VoucherCheckRequestSerializer,
        responses={200: VoucherCheckSerializer, **problems(400, 401, 404, 409, 415, 429)},
    )
    @action(detail=False, methods=["post"])
    def check(self, request):
        data = _validated(VoucherCheckRequestSerializer, request)
        if "membership" in data:
            data["membership"] = membership_for(data["membership"])
        with vouchers.reasons_for(request.user):
            quote = quote_order(buyer=request.user, **data)
        answer = {"voucher": vouchers.normalized(data["voucher"]), "applies": True, "quote": quote}
        return Response(VoucherCheckSerializer(answer).data)


def _validated(serializer_class, request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _csv_text(request) -> str:
    if isinstance(request.data, str):
        return request.data
    upload = request.FILES.get("file")
    if upload is None:
        raise ParseError("Send the CSV file as the body or as the part `file`.")
    if upload.size > MAX_FILE_BYTES:
        raise ParseError("The file is larger than 2 MB.")
    try:
        return upload.read().decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError("The file is not UTF-8 text.") from None
