"""Queries on the hottest paths, built by the ORM once per process instead of on every call.

Working out a query (lookups, joins, the SQL text) costs the ORM more than running it does: on
this machine class ~450 µs against ~200 µs for one row by its key, on every request. A
PreparedQuery compiles its queryset once, with placeholder values, and then runs that SQL with
each call's values, turning the row into an instance as the ORM's ModelIterable does: the
database's values converted (SQLite keeps dates as text), annotations set as attributes.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connections
from django.db.models import Field, Model, QuerySet
from django.db.models.sql import UpdateQuery


@dataclass(frozen=True)
class _Compiled:
    sql: str
    parameters: int
    model: type[Model]
    field_positions: slice  # where the model's own columns sit in a row
    field_names: list[str]
    annotations: dict[str, int]  # attribute name -> position in a row
    converters: list  # (position, (converter functions, expression)), as the compiler has them
    using: str


class PreparedQuery:
    def __init__(self, build: Callable[[], QuerySet]):
        # `build` gives the queryset with placeholder values; its parameters are the values of
        # its filters, in the order the filter() calls add them.
        self._build = build

    @functools.cached_property
    def _compiled(self) -> _Compiled:
        queryset = self._build()
        compiler = queryset.query.get_compiler(using=queryset.db)
        sql, placeholders = compiler.as_sql()  # also fills select, klass_info, annotations
        select = [expression for expression, _, _ in compiler.select]
        first, last = (
            compiler.klass_info["select_fields"][0],
            compiler.klass_info["select_fields"][-1],
        )
        return _Compiled(
            sql=sql,
            parameters=len(placeholders),
            model=compiler.klass_info["model"],
            field_positions=slice(first, last + 1),
            field_names=[column.target.attname for column in select[first : last + 1]],
            annotations=dict(compiler.annotation_col_map),
            converters=list(compiler.get_converters(select).items()),
            using=compiler.using,
        )

    def first(self, *params) -> Model | None:
        compiled = self._compiled
        if len(params) != compiled.parameters:
            raise TypeError(f"The query takes {compiled.parameters} parameters, not {len(params)}")
        # This thread's connection: connections are per thread, the compiled query is not.
        connection = connections[compiled.using]
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            row = cursor.fetchone()
        if row is None:
            return None
        row = list(row)
        for position, (converters, expression) in compiled.converters:
            for convert in converters:
                row[position] = convert(row[position], expression, connection)
        instance = compiled.model.from_db(
            compiled.using, compiled.field_names, row[compiled.field_positions]
        )
        for name, position in compiled.annotations.items():
            setattr(instance, name, row[position])
        return instance


class PreparedUpdate:
    """`queryset.update(**values)`, its SQL built once; `run` gives the number of rows changed.

    `build` gives the queryset and the values with placeholders. `run` takes the parameters in
    the order the SQL does: the SET values first, then the filters' values, each as the
    database stores it (`db_value`). Like QuerySet.update, it sends no signals.
    """

    def __init__(self, build: Callable[[], tuple[QuerySet, dict]]):
        self._build = build

    @functools.cached_property
    def _compiled(self) -> tuple[str, int, str]:
        queryset, values = self._build()
        query = queryset.query.chain(UpdateQuery)
        query.add_update_values(values)
        compiler = query.get_compiler(using=queryset.db)
        sql, placeholders = compiler.as_sql()
        return sql, len(placeholders), compiler.using

    def run(self, *params) -> int:
        sql, parameters, using = self._compiled
        if len(params) != parameters:
            raise TypeError(f"The update takes {parameters} parameters, not {len(params)}")
        with connections[using].cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.rowcount


def db_value(field: Field, value, using: str = "default"):
    """`value` as the database stores it in `field` (a UUID is text on SQLite, say)."""
    return field.get_db_prep_value(value, connections[using])
