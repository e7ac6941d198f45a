"""A join key's degrees (issue 47; optimizer.estimate.key_degrees): read off a scan's row
sample, multiplied at a join, and carried to the other columns of the joined scan, so a
second join through a shared key meets the keys heavy in both earlier tables."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from metastore.statistics.samples import Sample
from optimizer.estimate.carried_degrees import Reweighted, degrees_of, rescaled
from optimizer.estimate.key_degrees import JoinedDegrees, KeyDegrees, joined, scan_degrees
from optimizer.estimate.peer_pooling import POOL_SUPPORT_LEAST
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.values import ESTIMATED, Estimate


def scan(
    table: str, weights: float = 1.0, passed: list[bool] | None = None, **columns: list[Any]
) -> ScanSample:
    """A scan of `table` over a sample of the columns, each row standing for `weights`."""
    arrays = {
        name: np.array(values, dtype=np.float64 if isinstance(values[0], float) else object)
        for name, values in columns.items()
    }
    size = len(next(iter(arrays.values())))
    sample = Sample(arrays, np.full(size, weights), 1)
    mask = None if passed is None else np.array(passed)
    return ScanSample(table[0], lambda: sample, mask, table=table)


def as_dict(degrees: KeyDegrees) -> dict[object, float]:
    pairs = zip(degrees.values.tolist(), degrees.rows.tolist(), strict=True)
    return dict(pairs)


def degrees(side: ScanSample, name: str = "k") -> KeyDegrees:
    found = scan_degrees(side, name)
    assert found is not None
    return found


def join(left: KeyDegrees, right: KeyDegrees) -> JoinedDegrees:
    found = joined(left, right)
    assert found is not None
    return found


def test_a_scans_degrees_are_its_kept_sampled_rows_weighted() -> None:
    # a sample of one row in three: each sampled row stands for three; the filter drops one
    posts = scan("posts", 3.0, [True, True, True, False], owner=[1.0, 1.0, 2.0, 2.0])
    found = degrees(posts, "owner")
    assert as_dict(found) == {1.0: 6.0, 2.0: 3.0}
    assert not found.exact


def test_a_join_of_whole_samples_is_the_sum_over_keys_of_the_products() -> None:
    rng = np.random.default_rng(7)
    left_keys = rng.zipf(1.5, 2_000).clip(max=50).astype(float).tolist()
    right_keys = rng.zipf(1.3, 3_000).clip(max=50).astype(float).tolist()
    found = join(degrees(scan("comments", k=left_keys)), degrees(scan("votes", k=right_keys)))
    a, b = Counter(left_keys), Counter(right_keys)
    assert found.rows == pytest.approx(sum(a[k] * b[k] for k in a))
    # the joined rows' degrees: a key's product, its heaviest first among the MCVs
    assert as_dict(found.degrees)[1.0] == pytest.approx(a[1.0] * b[1.0])
    assert found.degrees.most_common(found.rows, "bigint")[0][0] == 1


def test_three_tables_through_one_key_multiply_the_three_degrees() -> None:
    # the owners heavy in posts are heavy in comments and badges too: the star's rows are
    # the sum over owners of the product of the three degrees, far above the average's
    posts = degrees(scan("posts", k=[1.0] * 50 + [2.0] * 5 + [3.0]))
    comments = degrees(scan("comments", k=[1.0] * 40 + [2.0] * 4 + [3.0] * 2))
    badges = degrees(scan("badges", k=[1.0] * 10 + [2.0] + [3.0]))
    star = join(join(posts, comments).degrees, badges)
    assert star.rows == pytest.approx(50 * 40 * 10 + 5 * 4 * 1 + 1 * 2 * 1)


def test_strings_join_as_strings_and_never_with_numbers() -> None:
    left = degrees(scan("a", k=["x", "x", "y"]))
    found = join(left, degrees(scan("b", k=["x", "z"])))
    assert found.rows == pytest.approx(2.0)
    assert found.degrees.most_common(found.rows, "string") == (("x", 1.0),)
    assert joined(left, degrees(scan("c", k=[1.0, 2.0]))) is None


def test_samples_that_meet_nowhere_give_weak_rows() -> None:
    # no sampled row of one side met one of the other: zero rows is not to be believed
    found = join(degrees(scan("a", 4.0, k=[1.0, 2.0])), degrees(scan("b", 4.0, k=[3.0])))
    assert found.rows == 0.0
    assert found.weak
    assert not join(degrees(scan("a", k=[1.0])), degrees(scan("b", k=[3.0]))).weak


def test_a_self_join_of_whole_samples_multiplies_the_degrees_as_they_are() -> None:
    first = degrees(scan("posts", k=[1.0, 1.0, 2.0]))
    second = degrees(scan("posts", k=[1.0, 1.0, 2.0]))
    assert join(first, second).rows == pytest.approx(2 * 2 + 1 * 1)


def test_a_sampled_self_join_meets_each_half_of_the_rows_with_the_other() -> None:
    # 20,000 rows, 4 per key: the self-join has 80,000 rows. A sample of one row in four,
    # multiplied with itself, counts each sampled row's pair with itself 4 x 4 times where
    # it stands for 4: 80,000 + 20,000 x 3 on average. Halves of the rows do not share one.
    rng = np.random.default_rng(11)
    keys = np.repeat(np.arange(5_000.0), 4)
    ids = np.arange(20_000.0)
    drawn = rng.random(20_000) < 0.25
    sample = Sample({"k": keys[drawn], "id": ids[drawn]}, np.full(int(drawn.sum()), 4.0), 1)
    first = degrees(ScanSample("a", lambda: sample, table="t"))
    second = degrees(ScanSample("b", lambda: sample, table="t"))
    assert join(first, second).rows == pytest.approx(80_000, rel=0.1)
    assert float((first.rows * second.rows).sum()) == pytest.approx(140_000, rel=0.1)


def test_a_table_read_again_after_a_join_meets_the_halves_the_join_carried() -> None:
    # (the scans held, as a request's plan holds them: degrees read their halves from
    # their scan when asked)
    scans = [scan("posts", 2.0, k=[1.0, 2.0], id=[1.0, 2.0]) for _ in range(2)]
    posts, again = degrees(scans[0]), degrees(scans[1])
    first = join(posts, degrees(scan("owners", k=[1.0, 2.0])))
    # the product carries the posts' halves: a second scan of posts can still be met
    assert set(first.degrees.halves) == {"posts"}
    assert joined(first.degrees, again) is not None
    without = replace(first.degrees, half_tables=frozenset(), halves_of=None)
    assert joined(without, again) is None


def test_a_column_of_the_joined_scan_weighs_its_rows_by_the_other_sides_degrees() -> None:
    # votes JOIN posts ON v_post = p_id: a post's owner counts once per vote of the post
    posts = scan("posts", id=[1.0, 2.0, 3.0, 4.0], owner=[10.0, 10.0, 20.0, 30.0])
    votes = degrees(scan("votes", post=[1.0, 1.0, 1.0, 3.0, 4.0, 4.0]), "post")
    owners = Reweighted(posts, "owner", ()).then("id", votes, 3.0).resolved()
    assert owners is not None
    assert as_dict(owners) == {10.0: 3.0, 20.0: 1.0, 30.0: 2.0}


def test_an_even_key_sampled_sparsely_weighs_rows_by_its_average() -> None:
    # every post has one comment, but a sample of one comment in six shows a sixth of the
    # posts with six comments each: as degrees, that is noise (its spread is what sampling
    # alone gives), so each post weighs the average, and each owner's 200 posts 200 comments
    rng = np.random.default_rng(5)
    posts = scan(
        "posts", id=[float(i) for i in range(600)], owner=[float(i % 3) for i in range(600)]
    )
    drawn = rng.choice(600, size=100, replace=False).astype(float).tolist()
    comments = degrees(scan("comments", 6.0, post=drawn), "post")
    trust, mean = comments.shrinkage(600.0)
    assert trust == pytest.approx(0.0, abs=0.05)
    assert mean == pytest.approx(1.0)
    owners = Reweighted(posts, "owner", ()).then("id", comments, 600.0).resolved()
    assert owners is not None
    assert owners.rows == pytest.approx([200.0, 200.0, 200.0], rel=0.05)


def test_a_skewed_key_keeps_its_sampled_degrees() -> None:
    # one post has 600 comments, the others one each: the spread is far beyond sampling's
    keys = [0.0] * 100 + [float(i) for i in range(1, 100)]
    comments = degrees(scan("comments", 6.0, post=keys), "post")
    trust, _ = comments.shrinkage(600.0)
    assert trust > 0.9


def test_a_weighed_column_carries_the_halves_of_the_table_that_weighed_it() -> None:
    # votes JOIN posts on the post, then the owner: a later second read of votes meets the
    # owner's degrees through the votes' halves
    posts = scan("posts", id=[1.0, 2.0, 3.0, 4.0], owner=[10.0, 10.0, 20.0, 30.0])
    votes_scan = scan("votes", 2.0, post=[1.0, 1.0, 3.0, 4.0], id=[1.0, 2.0, 3.0, 4.0])
    votes = degrees(votes_scan, "post")
    owners = Reweighted(posts, "owner", ()).then("id", votes, 4.0).resolved()
    assert owners is not None
    assert set(owners.halves) == {"votes"}
    first, second = owners.halves["votes"]
    # each half of the votes' rows weighs twice: the halves add up to twice the degrees
    assert first + second == pytest.approx(2 * owners.rows)


def test_a_joins_product_is_multiplied_only_when_read() -> None:
    # what decides whether the degrees give a join's rows needs no product: it is
    # multiplied when first read, and once
    found = join(degrees(scan("a", 2.0, k=[1.0, 2.0])), degrees(scan("b", 2.0, k=[2.0])))
    assert "degrees" not in vars(found)
    assert not found.exact
    assert "degrees" not in vars(found)
    assert found.rows == pytest.approx(2.0 * 2.0)
    assert found.degrees is found.degrees


def test_the_shorter_side_is_looked_up_in_the_longer_with_the_same_product() -> None:
    rng = np.random.default_rng(3)
    many = rng.integers(0, 400, 3_000).astype(float).tolist()
    few = rng.integers(0, 400, 40).astype(float).tolist()
    long, short = degrees(scan("long", 3.0, k=many)), degrees(scan("short", 5.0, k=few))
    one, other = join(long, short).degrees, join(short, long).degrees
    for field in ("values", "rows", "support"):
        assert np.array_equal(getattr(one, field), getattr(other, field))
    # sampled sides are pooled first: values one side's sample missed meet its peers' rows
    assert set(many) & set(few) <= set(as_dict(one)) <= set(many) | set(few)


def test_a_scans_degrees_know_their_sampling_variance() -> None:
    # each sampled row drawn with probability 1/w adds w (w - 1) to its value's variance
    found = degrees(scan("comments", 6.0, k=[1.0, 1.0, 2.0]))
    assert found.noise() == pytest.approx([2 * 6.0 * 5.0, 6.0 * 5.0])
    assert not degrees(scan("owners", k=[1.0, 2.0])).noise().any()  # exact


def test_a_light_key_of_a_sampled_side_meets_its_peers_rows_not_a_zero() -> None:
    # 16 owners with 10 posts each (a whole sample) have one comment each; a sample of one
    # comment in four shows 4 of them with 4 comments and 12 with none. Multiplied as drawn,
    # the 12 meet nothing and the 4 meet four times their comments (a star of such tables
    # multiplies those zeros and fours); pooled among the owners with as many posts, each
    # meets one comment
    owners = [float(k) for k in range(16)]
    posts = degrees(scan("posts", 1.0, k=[k for k in owners for _ in range(10)]))
    comments = degrees(scan("comments", 4.0, k=owners[:4]))
    found = join(posts, comments)
    assert as_dict(found.degrees) == pytest.approx(dict.fromkeys(owners, 10.0))
    assert found.rows == pytest.approx(160.0)  # the sum over the peers is kept


def test_a_forced_key_the_filter_removed_has_no_rows_its_peers_would_fill_in() -> None:
    # as above, but the comments' sample holds every comment of owners 4 and 5 (forced
    # keys: rows weighing one), and the filter keeps neither: they have none, known, where
    # the owners the sample missed meet their peers' rows
    owners = [float(k) for k in range(16)]
    posts = degrees(scan("posts", 1.0, k=[k for k in owners for _ in range(10)]))
    drawn = [*owners[:4], 4.0, 5.0]
    sample = Sample(
        {"k": np.array(drawn)}, np.array([4.0] * 4 + [1.0, 1.0]), 1, {"k": np.array([4.0, 5.0])}
    )
    kept = np.array([True] * 4 + [False, False])
    comments = degrees(ScanSample("c", lambda: sample, kept, table="comments"))
    assert comments.absent is not None
    assert comments.absent.tolist() == [4.0, 5.0]
    found = as_dict(join(posts, comments).degrees)
    assert 4.0 not in found
    assert 5.0 not in found
    assert found[6.0] > 0  # missed, not known: its peers' rows
    # without the forced keys' list, owners 4 and 5 are missed like the others
    unknown = Sample({"k": np.array(drawn)}, np.array([4.0] * 4 + [1.0, 1.0]), 1)
    comments = degrees(ScanSample("c", lambda: unknown, kept, table="comments"))
    assert as_dict(join(posts, comments).degrees)[4.0] > 0


def test_a_figure_of_rows_forced_in_is_known_and_not_pooled() -> None:
    # owner 0's three comments are forced in (weight one, no sampling variance); its peers'
    # were drawn one in four and spread widely: pooling draws theirs to the group's average,
    # not owner 0's
    owners = [float(k) for k in range(16)]
    posts = degrees(scan("posts", 1.0, k=[k for k in owners for _ in range(10)]))
    keys = [0.0] * 3 + [k for k in owners[1:] for _ in range(int(k) % 4)]
    weights = [1.0] * 3 + [4.0] * (len(keys) - 3)
    comments = degrees(
        ScanSample("c", lambda: Sample({"k": np.array(keys)}, np.array(weights), 1), None)
    )
    found = as_dict(join(posts, comments).degrees)
    assert found[0.0] == pytest.approx(30.0)  # 10 posts x its 3 comments, as they are


def test_pooling_keeps_the_correlation_of_the_two_sides() -> None:
    # 8 owners with 64 posts have about 20 comments each, 8 with two posts about one: owner
    # 0, none of whose comments was sampled, is drawn towards its heavy peers' average (the
    # owners with as many posts), not everyone's
    heavy, light = [float(k) for k in range(8)], [float(k) for k in range(8, 16)]
    posts = degrees(scan("posts", 2.0, k=[k for k in heavy for _ in range(32)] + light))
    drawn = [k for k in heavy[1:] for _ in range(10)] + light[:2]
    comments = degrees(scan("comments", 2.0, k=drawn))
    found = join(posts, comments)
    peers, everyone = 2.0 * 70 / 8, 2.0 * len(drawn) / 16
    assert as_dict(found.degrees)[0.0] > 64 * peers / 4  # not zero
    # the light owners meet the light ones' comments (those of everyone: 2 x 9 each)
    assert max(as_dict(found.degrees).get(k, 0.0) for k in light) < 2 * everyone / 4
    # in all, about what the drawn figures give (each group's figures keep their sum)
    assert found.rows == pytest.approx(64 * 2.0 * 70 + 2 * 2.0 * 2, rel=0.05)


def test_a_key_of_a_sampled_side_is_not_pooled() -> None:
    # p_id is a key of posts: a post the sample does not show may be filtered out, and its
    # peers cannot say whether it is there; only the posts the sample shows meet comments
    ids = [float(k) for k in range(0, 60, 3)]
    posts_scan = scan("posts", 3.0, k=ids)
    column = SimpleNamespace(
        degrees=None,
        origin=(posts_scan, "k"),
        ndv=Estimate(60.0, ESTIMATED, "t"),
        null_fraction=0.0,
    )
    posts = degrees_of(column, 60.0)
    assert posts is not None
    assert posts.keyed
    assert not degrees(posts_scan).keyed  # as a scan's degrees alone: not known
    comments = degrees(scan("comments", 2.0, k=[float(k) for k in range(60)] * 2))
    found = join(posts, comments).degrees
    assert set(as_dict(found)) == set(as_dict(posts))
    assert found.keyed  # and so its products, for the joins after


def test_sides_sampled_too_sparsely_are_multiplied_as_drawn() -> None:
    # one sampled row over 40 owners: no group's spread tells its noise
    posts = degrees(scan("posts", 2.0, k=[float(k) for k in range(40)] * 2))
    comments = degrees(scan("comments", 100.0, k=[7.0]))
    assert POOL_SUPPORT_LEAST > 1.0 / 40
    assert as_dict(join(posts, comments).degrees) == {7.0: 4.0 * 100.0}


def test_sampled_pairs_count_the_sampled_rows_that_meet() -> None:
    found = join(degrees(scan("a", 2.0, k=[1.0, 1.0, 2.0])), degrees(scan("b", 3.0, k=[1.0, 3.0])))
    assert found.sampled_pairs == 2.0
    assert join(degrees(scan("a", k=[1.0])), degrees(scan("b", 3.0, k=[1.0]))).sampled_pairs == 0


def test_a_key_joined_again_meets_the_rows_a_later_join_gave_its_scans_rows() -> None:
    # posts p1 JOIN posts p2 ON the owner, then p2 JOIN comments ON the post: owner 10's
    # posts have 3 comments each, owner 20's none; the owners' joint degrees (4 and 1) are
    # rescaled by what comments gave each owner's posts
    def posts() -> ScanSample:
        return scan("posts", id=[1.0, 2.0, 3.0], owner=[10.0, 10.0, 20.0])

    p1, p2 = posts(), posts()
    owners = join(degrees(p1, "owner"), degrees(p2, "owner")).degrees
    assert as_dict(owners) == {10.0: 4.0, 20.0: 1.0}
    comments = degrees(scan("comments", post=[1.0, 1.0, 1.0, 2.0, 2.0, 2.0]), "post")
    found = rescaled(owners, p2, "owner", ("id", comments, 2.0))
    assert found is not None
    assert as_dict(found) == {10.0: 12.0, 20.0: 0.0}


def test_a_weighed_columns_variance_is_its_sampled_rows_clusters() -> None:
    # a post drawn one in three, with 100 votes: its owner's 300 rows rest on that one draw
    # (variance (1 - 1/3) x 300 squared), not on 300 votes drawn one by one
    posts = scan("posts", 3.0, id=[1.0, 2.0], owner=[10.0, 20.0])
    votes = degrees(scan("votes", post=[1.0] * 100 + [2.0]), "post")
    owners = Reweighted(posts, "owner", ()).then("id", votes, 2.0).resolved()
    assert owners is not None
    assert as_dict(owners) == {10.0: 300.0, 20.0: 3.0}
    assert owners.noise() == pytest.approx([(1 - 1 / 3) * 300.0**2, (1 - 1 / 3) * 3.0**2])
