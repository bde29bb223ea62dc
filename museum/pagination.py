"""Paging by `page` and `limit` as the contract has it: the body stays a plain JSON array.

Where the page sits in the whole travels in headers: `X-Total-Count` and RFC 8288 `Link`
(`next`, `prev`). A page past the end is an empty list; a bad `page` or `limit` is a 400.
"""

from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from museum.query import DEFAULT_LIMIT, MAX_LIMIT, PageQuerySerializer, validated_query


class PagePagination(BasePagination):
    def paginate_queryset(self, queryset, request, view=None):
        query = validated_query(PageQuerySerializer, request)
        self.page, self.limit = query["page"], query["limit"]
        self.request = request
        self.total = queryset.count()
        offset = (self.page - 1) * self.limit
        # Past the end there is nothing to fetch; skipping the query also keeps absurd page
        # numbers away from the database's OFFSET.
        return list(queryset[offset : offset + self.limit]) if offset < self.total else []

    def get_paginated_response(self, data):
        headers = {"X-Total-Count": str(self.total)}
        links = [
            f'<{url}>; rel="{rel}"'
            for rel, url in (("next", self._page_url(1)), ("prev", self._page_url(-1)))
            if url
        ]
        if links:
            headers["Link"] = ", ".join(links)
        return Response(data, headers=headers)

    def _page_url(self, step: int) -> str | None:
        page = self.page + step
        if page < 1 or (page - 1) * self.limit >= self.total:
            return None
        url = self.request.build_absolute_uri()
        if page == 1:
            return remove_query_param(url, "page")
        return replace_query_param(url, "page", page)

    def get_paginated_response_schema(self, schema):
        return schema

    def get_schema_operation_parameters(self, view):
        return [
            _param("page", "Page number to retrieve.", 1, minimum=1),
            _param(
                "limit", "Number of items per page.", DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT
            ),
        ]


def _param(name: str, description: str, default: int, **bounds) -> dict:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": {"type": "integer", "default": default, **bounds},
    }
