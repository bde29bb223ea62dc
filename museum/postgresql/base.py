"""Django's PostgreSQL backend, with its parameters bound by the server (museum/settings.py).

A statement bound by the server takes at most 65,535 parameters (the protocol counts them in 16
bits), where one bound by the client has no such limit, and Django's PostgreSQL backend sizes
its batches as if there were none. This subclass, Django's documented way to adapt a backend,
caps the batches Django sizes itself: a deletion's look for related rows (deleting many days or
tickets in the admin) and `bulk_update`. (`bulk_create` sends one array per field.)
"""

from django.db.backends.postgresql import base, operations

# The protocol's limit on the parameters of one statement.
MAX_PARAMETERS = 65_535


class DatabaseOperations(operations.DatabaseOperations):
    def bulk_batch_size(self, fields, objs):
        return max(1, min(len(objs), MAX_PARAMETERS // max(len(fields), 1)))


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
