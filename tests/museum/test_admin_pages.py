"""What the admin's reports share: their CSV files write money and dates one way."""

import datetime as dt
from decimal import Decimal

from museum.admin_pages import csv_response


def test_a_csv_writes_money_with_two_places_and_dates_as_iso_8601():
    rows = [["Adult", Decimal("7.5"), dt.date(2030, 6, 12), 3], ["Child", Decimal("0"), "", 0]]

    response = csv_response("sales.csv", ["what", "takings", "date", "sold"], rows)

    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="sales.csv"'
    assert response.content.decode().splitlines() == [
        "what,takings,date,sold",
        "Adult,7.50,2030-06-12,3",
        "Child,0.00,,0",
    ]
