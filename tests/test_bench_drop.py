"""bench.drop's arithmetic, without its load: the figures it writes into docs/performance.md are
only as right as these (`make drop` runs the load itself; not part of the suite)."""

import math
import random

import pytest

from bench import crowd, drop


def test_the_module_imports_with_its_defaults():
    args = drop.parse_args([])
    assert (args.buyers, args.places, args.outflow) == (10_000, 1_000, 600)
    assert drop.parse_args(["--buyers", "1000", "--places", "100"]).places == 100


def test_percentile_is_the_nearest_rank():
    values = list(range(100, 0, -1))  # 1..100, unsorted
    assert crowd.percentile(values, 0.5) == 50
    assert crowd.percentile(values, 0.99) == 99
    assert crowd.percentile(values, 1.0) == 100
    assert crowd.percentile([7.0], 0.99) == 7.0
    assert math.isnan(crowd.percentile([], 0.5))


def test_tied_values_share_the_mean_of_their_ranks():
    assert crowd.ranks([30, 10, 20, 20]) == [4.0, 1.0, 2.5, 2.5]


def test_spearman_reads_order_not_distance():
    xs = [1, 2, 3, 4, 5]
    assert crowd.spearman(xs, [1, 4, 9, 16, 1000]) == pytest.approx(1.0)
    assert crowd.spearman(xs, [5, 4, 3, 2, 1]) == pytest.approx(-1.0)
    # 1 - 6 * sum(d^2) / (n (n^2 - 1)) without ties: d = (0, 0, 1, -1, 0) gives 1 - 12/120.
    assert crowd.spearman(xs, [1, 2, 4, 3, 5]) == pytest.approx(0.9)


def test_spearman_with_ties_is_pearson_of_the_mean_ranks():
    # Ranks (1, 2, 3, 4) against (1.5, 1.5, 3, 4): Pearson's r of those, worked by hand.
    assert crowd.spearman([1, 2, 3, 4], [0, 0, 5, 9]) == pytest.approx(4.5 / math.sqrt(5 * 4.5))


def test_spearman_without_spread_or_pairs_is_undefined():
    assert math.isnan(crowd.spearman([1, 2, 3], [7, 7, 7]))
    assert math.isnan(crowd.spearman([1], [2]))
    with pytest.raises(ValueError):
        crowd.spearman([1, 2], [1])


def test_arrival_fairness_reaches_its_best_when_the_first_are_served():
    arrivals = [3.0, 1.0, 4.0, 2.0, 5.0]
    first_two = [False, True, False, True, False]
    fairness, fifo = crowd.arrival_fairness(arrivals, first_two)
    assert fairness == pytest.approx(fifo)
    assert fifo > 0.8
    last_two = [False, False, True, False, True]
    assert crowd.arrival_fairness(arrivals, last_two)[0] == pytest.approx(-fifo)


def test_arrivals_split_before_and_after_the_opening():
    times = crowd.arrivals(1000, rng=random.Random(1), before=60, after=10, share_before=0.7)
    early = [t for t in times if t < 0]
    assert len(times) == 1000 and len(early) == 700
    assert all(-60 <= t < 10 for t in times)


def _buyer(n: int, **fields) -> crowd.Buyer:
    name = drop.BUYER.format(n)
    return crowd.Buyer(n=n, username=name, authorization="", arrives=float(n), wants=2, **fields)


def test_the_figures_of_a_line_come_from_the_server_clock_and_the_database():
    buyers = [
        _buyer(0, position=2, admitted_at=0.0, bought=2, outcome="bought", done_at=1.0),
        _buyer(1, position=1, admitted_at=0.0, outcome="bought", done_at=2.0),  # never told
        _buyer(2, position=3, admitted_at=6.0, outcome="sold_out", done_at=7.0),
        _buyer(3, position=4, outcome="unfinished", done_at=9.0),
    ]
    tally = crowd.Tally()
    tally.answers["poll", 200, "waiting"] = 6
    tally.answers["purchase", 201, ""] = 1
    tally.answers["purchase", "timeout", ""] = 1
    tally.answers["poll", 502, ""] = 1
    db = {
        "holders": {buyers[0].username, buyers[1].username},
        "capacity": 4,
        "sold": 4,
        "tickets": 4,
        "last_sale": 3.0,
    }
    result = {"buyers": buyers, "tally": tally, "db": db, "cpu_seconds": 0.2, "kind": "queue"}

    found = drop.figures(result)

    assert found["unseen"] == 2  # buyer 1's two tickets: sold, but its answer never came
    assert found["errors"] == 1
    assert found["timeouts"] == "1 / 0"
    assert found["requests"] == 9 / 4
    assert found["cpu_ms"] == 50
    assert found["rate"] == "20 (3 admitted)"  # two more in 6 s
    assert found["fairness"] == "0.866"  # positions 2, 1, 3 let in at 0, 0, 6 s
    assert found["unfinished"] == 1
    assert found["all_told"] == "9"


def test_a_buyer_without_answers_asks_less_and_less_often():
    line = crowd.Crowd(None, base="", day=None, run="test", opening=0.0, opening_at=None)
    waits = [line.backoff(failures) for failures in (1, 2, 3, 10)]
    assert 0.5 <= waits[0] <= 1.5 and 1 <= waits[1] <= 3 and 2 <= waits[2] <= 6
    assert 15 <= waits[3] <= 1.5 * crowd.BACKOFF_CAP
