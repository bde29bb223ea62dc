"""`make bench`: the service under load on PostgreSQL, measured against a bare DRF floor.

See docs/performance.md.
"""
