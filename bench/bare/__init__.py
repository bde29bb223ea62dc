"""The bare floor: a Django + DRF project of its own, with nothing of the museum's.

`make bench` serves it with the same server command as the service, measures it with the same wrk
in the same turns, and reports every endpoint against it as well as against the service's own
floor (bench/floor.py): the difference between the two floors is what the service's own settings
and middleware cost every request before any API work (docs/performance.md, "Two floors").
"""
