"""Synthetic data whose join fan-outs are correlated (issue 47): one entity table referenced by
four large tables through a Zipf-distributed key.

    python benchmarks/correlated_data.py [--variants correlated,anti] [--scale 1]
                                         [--out benchmarks/.data]

Writes, under OUT/correlated/<variant>/ (a `_COMPLETE` marker when done; a finished variant
is not written again; a different --scale goes to OUT/correlated-<scale>/, one exponent for
all four owner keys, --zipf S, to OUT/correlated-zS/):

  owners/                     20,000 rows, unpartitioned: o_id, o_region, o_created (date)
  posts/p_day=YYYY-MM-DD/     300,000 rows: p_id, p_owner, p_score, p_day
  comments/c_day=.../         600,000 rows: c_id, c_owner, c_post, c_day
  votes/v_day=.../            600,000 rows: v_id, v_owner, v_post, v_kind, v_day
  badges/b_day=.../           200,000 rows: b_id, b_owner, b_day

(row counts times --scale; the large tables are partitioned by their day, 40 days from
2025-01-01, uniform). Each referencing table draws its owner key from a Zipf law over the
owners in an order of its own (P(rank r) ~ 1/r^s, s = 1.2 posts, 1.1 comments, 1.1 votes,
1.3 badges):

  correlated  the same order in every table: the owners heavy in posts are heavy in
              comments, votes and badges, so sum_k deg_A(k) deg_B(k) is far above
              |A| |B| / #owners
  anti        posts in the base order, comments in the reversed one, votes in the base order
              rotated by half the owners, badges in a random order of their own: the heavy
              owners of one table are light (or average) in the others

Comments and votes also reference a post (c_post, v_post) drawn from a Zipf law (s = 1.1) over
the posts ordered by "popularity": in `correlated` the posts of the heaviest posters are the
most popular, in `anti` those of the lightest. Two filters are correlated with the keys in
both variants: p_score grows with the post's popularity (plus geometric noise), and among
the 1% heaviest posters o_region is 'europe' with probability 0.6 (1/6 elsewhere).
v_kind is 1-4 with probabilities 0.7, 0.2, 0.08, 0.02. Everything is drawn from one seeded
numpy generator per variant: the data are the same on every run.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.data import write

DEFAULT_OUT = Path(__file__).resolve().parent / ".data"
VARIANTS = ("correlated", "anti")
SEED = 20261128
OWNERS = 20_000
ROWS = {"posts": 300_000, "comments": 600_000, "votes": 600_000, "badges": 200_000}
ZIPF = {"posts": 1.2, "comments": 1.1, "votes": 1.1, "badges": 1.3}
POST_ZIPF = 1.1
DAYS = 40
FIRST_DAY = datetime.date(2025, 1, 1)
REGIONS = ("europe", "asia", "namerica", "samerica", "africa", "oceania")
TABLES = ("owners", "posts", "comments", "votes", "badges")
PARTITION_KEYS = {"posts": "p_day", "comments": "c_day", "votes": "v_day", "badges": "b_day"}


def suffix(scale: float | str, zipf: float | None = None) -> str:
    """ "" at scale 1 with the default exponents, else "-<scale>" and/or "-z<exponent>"."""
    text = "" if float(scale) == 1.0 else f"-{float(scale):g}"
    return text + ("" if zipf is None else f"-z{zipf:g}")


def data_dir(root: Path, scale: float | str, variant: str, zipf: float | None = None) -> Path:
    """OUT/correlated<suffix>/<variant>."""
    return root / f"correlated{suffix(scale, zipf)}" / variant


def zipf_ranks(size: int, domain: int, s: float, rng: np.random.Generator) -> np.ndarray:
    """`size` ranks in [0, domain) with P(r) proportional to 1/(r+1)^s."""
    weights = np.arange(1, domain + 1, dtype=np.float64) ** -s
    weights /= weights.sum()
    return rng.choice(domain, size=size, p=weights)


def owner_orders(variant: str, base: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per referencing table, the owner ids from heaviest to lightest."""
    if variant == "correlated":
        return dict.fromkeys(ROWS, base)
    if variant == "anti":
        return {
            "posts": base,
            "comments": base[::-1],
            "votes": np.roll(base, len(base) // 2),
            "badges": rng.permutation(base),
        }
    raise ValueError(f"unknown variant {variant!r}")


def days(size: int, rng: np.random.Generator) -> pa.Array:
    offsets = rng.integers(0, DAYS, size)
    epoch = (FIRST_DAY - datetime.date(1970, 1, 1)).days
    return pa.array((offsets + epoch).astype(np.int32), pa.date32())


def generate(
    variant: str, scale: float = 1.0, seed: int = SEED, zipf: float | None = None
) -> dict[str, pa.Table]:
    """The variant's five tables (deterministic for a seed); `zipf` replaces the four
    owner-key exponents by one."""
    exponents = ZIPF if zipf is None else dict.fromkeys(ZIPF, zipf)
    rng = np.random.default_rng([seed, VARIANTS.index(variant)])
    owners = max(int(OWNERS * scale), 100)
    rows = {table: max(int(count * scale), 1000) for table, count in ROWS.items()}
    ids = np.arange(1, owners + 1, dtype=np.int64)
    base = rng.permutation(ids)
    orders = owner_orders(variant, base, rng)

    # owners: region skewed to 'europe' among the heaviest posters
    region = rng.integers(0, len(REGIONS), owners)
    heavy = base[: max(owners // 100, 1)] - 1
    region[heavy] = np.where(
        rng.random(len(heavy)) < 0.6, 0, rng.integers(0, len(REGIONS), len(heavy))
    )
    created_epoch = (datetime.date(2015, 1, 1) - datetime.date(1970, 1, 1)).days
    created = rng.integers(0, 3650, owners) + created_epoch
    tables = {
        "owners": pa.table(
            {
                "o_id": pa.array(ids),
                "o_region": pa.array(np.array(REGIONS)[region]),
                "o_created": pa.array(created.astype(np.int32), pa.date32()),
            }
        )
    }

    def owner_keys(table: str) -> np.ndarray:
        return orders[table][zipf_ranks(rows[table], owners, exponents[table], rng)]

    # posts; popularity order: by the owner's rank in posts (heaviest first, or lightest
    # first in `anti`), ties in random order
    post_owner = owner_keys("posts")
    post_ids = np.arange(1, rows["posts"] + 1, dtype=np.int64)
    rank_of_owner = np.empty(owners, dtype=np.int64)
    rank_of_owner[base - 1] = np.arange(owners)
    owner_rank = rank_of_owner[post_owner - 1]
    if variant == "anti":
        owner_rank = -owner_rank
    popularity = np.lexsort((rng.random(rows["posts"]), owner_rank))  # most popular first
    popular_rank = np.empty(rows["posts"], dtype=np.int64)
    popular_rank[popularity] = np.arange(rows["posts"])
    score = rng.geometric(0.15, rows["posts"]) - 1 + (200 / np.sqrt(popular_rank + 1)).astype(int)
    tables["posts"] = pa.table(
        {
            "p_id": pa.array(post_ids),
            "p_owner": pa.array(post_owner),
            "p_score": pa.array(score.astype(np.int64)),
            "p_day": days(rows["posts"], rng),
        }
    )

    def post_keys(size: int) -> np.ndarray:
        return post_ids[popularity[zipf_ranks(size, rows["posts"], POST_ZIPF, rng)]]

    tables["comments"] = pa.table(
        {
            "c_id": pa.array(np.arange(1, rows["comments"] + 1, dtype=np.int64)),
            "c_owner": pa.array(owner_keys("comments")),
            "c_post": pa.array(post_keys(rows["comments"])),
            "c_day": days(rows["comments"], rng),
        }
    )
    kind = rng.choice(4, size=rows["votes"], p=[0.7, 0.2, 0.08, 0.02]) + 1
    tables["votes"] = pa.table(
        {
            "v_id": pa.array(np.arange(1, rows["votes"] + 1, dtype=np.int64)),
            "v_owner": pa.array(owner_keys("votes")),
            "v_post": pa.array(post_keys(rows["votes"])),
            "v_kind": pa.array(kind.astype(np.int64)),
            "v_day": days(rows["votes"], rng),
        }
    )
    tables["badges"] = pa.table(
        {
            "b_id": pa.array(np.arange(1, rows["badges"] + 1, dtype=np.int64)),
            "b_owner": pa.array(owner_keys("badges")),
            "b_day": days(rows["badges"], rng),
        }
    )
    return tables


def build(
    variant: str, root: Path = DEFAULT_OUT, scale: float = 1.0, zipf: float | None = None
) -> Path:
    """The variant written as Parquet (cached: a complete directory is kept)."""
    directory = data_dir(root, scale, variant, zipf)
    if (directory / "_COMPLETE").exists():
        return directory
    directory.mkdir(parents=True, exist_ok=True)
    for table, data in generate(variant, scale, zipf=zipf).items():
        write(data, directory / table, PARTITION_KEYS.get(table))
    (directory / "_COMPLETE").write_text("")
    return directory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--zipf", type=float, default=None, help="one exponent for all tables")
    args = parser.parse_args()
    for variant in [v for v in args.variants.split(",") if v]:
        print(f"{variant}: {build(variant, args.out, args.scale, args.zipf)}")


if __name__ == "__main__":
    main()
