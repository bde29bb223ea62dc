"""`make bench`: the service under load on PostgreSQL, measured against two floors: its own and
a bare Django + DRF project's.

See docs/performance.md.
"""

# Where both floors answer (bench/floor.py, bench/bare/): under the API's prefix, so that the
# service's passes through its middleware as an API request does.
FLOOR_PATH = "/v1.1/bench/floor"
