"""The one retry policy of the work that calls out (an order's email, a refund, a webhook
delivery lost with its worker)."""

import datetime as dt

from museum.lost_work import RETRY


def test_the_wait_doubles_from_a_minute_to_an_hour_for_thirty_attempts():
    minutes = [RETRY.wait(attempt) / dt.timedelta(minutes=1) for attempt in range(1, 10)]
    assert minutes == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    now = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    assert RETRY.next_run(29, now=now) == now + dt.timedelta(hours=1)
    assert RETRY.next_run(30, now=now) is None  # the last attempt was made
