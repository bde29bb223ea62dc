"""Django's PostgreSQL backend, with its parameters bound by the server (museum/settings.py).

A statement bound by the server takes at most 65,535 parameters (the protocol counts them in 16
bits), where one bound by the client has no such limit, and Django's PostgreSQL backend sizes
its batches as if there were none. This subclass, Django's documented way to adapt a backend,
caps the batches Django sizes itself: a deletion's look for related rows (deleting many days or
tickets in the admin) and `bulk_update`. (`bulk_create` sends one array per field.)

After a migration changes a column's type, a statement a connection prepared before it fails
with "cached plan must not change result type" until the connection forgets it. Outside a
transaction the statement is run again at once, after `DEALLOCATE ALL` (which psycopg sees and
forgets its own record of them too). Inside one the transaction is lost: the error becomes an
OperationalError, which the API answers with a 503 and Retry-After like any database outage; the
transaction's rollback made psycopg deallocate them already, so the retry finds a fresh plan.
"""

import psycopg
from django.db import NotSupportedError, OperationalError
from django.db.backends import utils
from django.db.backends.postgresql import base, operations

STALE_PLAN = "cached plan must not change result type"

# The protocol's limit on the parameters of one statement.
MAX_PARAMETERS = 65_535


class DatabaseOperations(operations.DatabaseOperations):
    def bulk_batch_size(self, fields, objs):
        return max(1, min(len(objs), MAX_PARAMETERS // max(len(fields), 1)))


def _stale_plan(exc: Exception) -> bool:
    cause = exc.__cause__
    return isinstance(cause, psycopg.errors.FeatureNotSupported) and STALE_PLAN in str(cause)


class _RetriesStalePlans:
    db: "DatabaseWrapper"

    def execute(self, sql, params=None):
        try:
            return super().execute(sql, params)  # type: ignore[misc]
        except NotSupportedError as exc:
            if not _stale_plan(exc):
                raise
            if self.db.in_atomic_block:
                raise OperationalError(STALE_PLAN) from exc
            with self.db.connection.cursor() as cursor:
                cursor.execute("DEALLOCATE ALL")
            return super().execute(sql, params)  # type: ignore[misc]


class CursorWrapper(_RetriesStalePlans, utils.CursorWrapper):
    pass


class CursorDebugWrapper(_RetriesStalePlans, utils.CursorDebugWrapper):
    pass


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def make_cursor(self, cursor):
        return CursorWrapper(cursor, self)

    def make_debug_cursor(self, cursor):
        return CursorDebugWrapper(cursor, self)
