"""The API's request bodies (validated by FastAPI) and answer models. The answers document
the routes' JSON in the OpenAPI schema; the routes themselves return the CLI's JSON as
bytes, without validating it against these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from metastore.catalog.lookup import PartitionQuery, TupleList
from optimizer.cost.params import CostParams
from optimizer.estimate.predicates import Level
from pruner.prune import PruneReport
from servers.http.formats import Text

MAX_BUCKETS = 10_000  # histogram buckets one request may ask for

# --- request bodies -------------------------------------------------------------------

Scalar = Text | int | float | bool | None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TupleRows(_Strict):
    """`(keys...) IN rows`: exactly these combinations of key values."""

    keys: list[str] = Field(min_length=1, examples=[["dt", "region"]])
    rows: list[list[Scalar]] = Field(
        description="one value per key, in the order of `keys`; null is the default partition",
        examples=[[["2024-03-05", "emea"]]],
    )


class Selection(_Strict):
    """Which partitions: per-key IN lists, exact tuples and a condition, all conjoined
    (every partition when all are absent)."""

    in_: dict[str, list[Scalar]] = Field(
        default_factory=dict,
        alias="in",
        description="the values of each key (1 to 1,000,000 of them); "
        "null or __HIVE_DEFAULT_PARTITION__ is the default partition",
        examples=[{"dt": ["2024-03-05", "2024-03-06"], "region": ["emea"]}],
    )
    tuples: list[TupleRows] = Field(default_factory=list)
    where: Text | None = Field(
        default=None,
        description="an SQL condition on keys, as in Spark SQL",
        examples=["dt >= '2024-03-01' AND region <> 'emea'"],
    )

    def query(self) -> PartitionQuery:
        return PartitionQuery(
            tuple(self.in_.items()),
            tuple(TupleList(tuple(t.keys), t.rows) for t in self.tuples),
            self.where,
        )


class StatisticsRequest(Selection):
    columns: list[str] | None = Field(default=None, description="only these columns (all)")
    buckets: int = Field(default=64, ge=1, le=MAX_BUCKETS, description="histogram buckets")


Dialect = Literal["spark", "hive"]


class EstimateRequest(_Strict):
    sql: Text = Field(examples=["SELECT * FROM sales WHERE dt = '2024-03-05'"])
    dialect: Dialect = "spark"
    level: Level = "sketch"


class ExplainRequest(_Strict):
    sql: Text = Field(
        examples=[
            "SELECT s.name, count(*) FROM sales f JOIN stores s ON f.store = s.id GROUP BY s.name"
        ]
    )
    dialect: Dialect = "spark"
    config: dict[str, str] = Field(
        default_factory=dict,
        description="cost variables and thresholds, as `statlas explain --config KEY=VALUE`",
    )
    emit: Literal["spark"] | None = Field(
        default=None, description="also return the query as Spark SQL with join hints"
    )
    level: Level = "sketch"


class PruneRequest(_Strict):
    sql: Text
    dialect: Dialect = "spark"
    run: bool = Field(default=False, description="also run the pruned query (adds rows)")
    max_values: int | None = Field(
        default=None,
        ge=1,
        description="distinct values per key before a [min, max] range "
        "is used instead (default 10,000)",
    )
    map_join_threshold: int | None = Field(
        default=None,
        ge=0,
        description="largest small side of a map join, bytes: `statlas explain`'s "
        f"map_join_threshold (default {CostParams.map_join_threshold:,.0f})",
    )


# --- answers (documentation: the routes return the CLI's JSON as bytes) ----------------

JsonScalar = str | int | float | bool | None


class ErrorOut(BaseModel):
    error: str


class HealthOut(BaseModel):
    status: Literal["ok", "degraded"]
    database: Literal["ok", "unavailable"]
    error: str | None = None


class ColumnOut(BaseModel):
    name: str
    type: str
    nullable: bool


class KeyOut(BaseModel):
    name: str
    type: str


class BucketingOut(BaseModel):
    num_buckets: int
    columns: list[str]
    sort_columns: list[list[str]]


class TableSummaryOut(BaseModel):
    database: str
    rows: int | None = Field(description="summed over the partitions with statistics")
    bytes: int
    files: int
    collected_partitions: int
    stale_partitions: int = Field(
        description="partitions without statistics or changed since they were collected"
    )
    last_collection: str | None = Field(description="end of the latest succeeded run")
    last_run_status: str | None
    statistics_served: str


class TableOut(BaseModel):
    name: str
    location: str
    format: str
    columns: list[ColumnOut]
    partition_keys: list[KeyOut]
    bucketing: BucketingOut | None
    properties: dict[str, Any]
    partitions: int
    summary: TableSummaryOut | None = Field(default=None, description="with `summary=true`")


class TablesOut(BaseModel):
    tables: list[TableOut]


class PartitionOut(BaseModel):
    values: dict[str, JsonScalar]
    location: str


class PartitionsOut(BaseModel):
    table: str
    count: int
    partitions: list[PartitionOut]


class PagedPartitionOut(BaseModel):
    name: str
    values: list[JsonScalar]
    location: str
    files: int
    bytes: int
    modified: str
    rows: int | None
    collected: str | None
    stale: bool


class PartitionPageOut(BaseModel):
    table: str
    keys: list[str]
    total: int
    offset: int
    limit: int
    partitions: list[PagedPartitionOut]


class HistogramOut(BaseModel):
    bounds: list[JsonScalar]
    counts: list[float]


class ColumnStatisticsOut(BaseModel):
    type: str
    null_count: int
    min: JsonScalar
    max: JsonScalar
    ndv: int | None
    ndv_source: str | None
    avg_len: float | None
    max_len: int | None
    mcv: list[list[JsonScalar]] = Field(description="[value, count] pairs")
    equi_depth: HistogramOut | None
    equi_width: HistogramOut | None
    uniform: HistogramOut | None


class StatisticsOut(BaseModel):
    table: str
    partitions: int
    row_count: int
    columns: dict[str, ColumnStatisticsOut]


class PlanNodeOut(BaseModel):
    op: str
    rows: float
    source: str
    precision: str
    row_size: float
    detail: str
    columns: dict[str, dict[str, Any]]
    children: list[PlanNodeOut]


class EstimateOut(BaseModel):
    rows: float
    level: str
    plan: PlanNodeOut


class BeforeAfterOut(BaseModel):
    before: int
    after: int


class ExplainOut(BaseModel):
    jobs: BeforeAfterOut
    shuffles: BeforeAfterOut
    scans: BeforeAfterOut
    cost: dict[str, float]
    level: str
    plan: dict[str, Any]
    spark_sql: str | None = None


class RejectedOut(BaseModel):
    join: str
    reason: str


def answer_of(record: type, name: str, json_types: Mapping[str, Any]) -> type[BaseModel]:
    """The answer model `name` of a dataclass's fields, as its JSON writes them: those
    whose metadata says "json": False left out, a field defaulting to None optional (left
    out when None), the others required; a field's type as given in `json_types` where
    its JSON form differs, its metadata's "description" its description."""
    hints = get_type_hints(record)
    definitions: dict[str, Any] = {}
    for f in fields(record):
        if not f.metadata.get("json", True):
            continue
        info: dict[str, Any] = {"default": None} if f.default is None else {}
        if "description" in f.metadata:
            info["description"] = f.metadata["description"]
        definitions[f.name] = (json_types.get(f.name, hints[f.name]), Field(**info))
    return create_model(name, **definitions)


PruneOut = answer_of(
    PruneReport,
    "PruneOut",
    {"partitions": list[PartitionOut], "rejected": list[RejectedOut]},
)


class RunOut(BaseModel):
    id: int
    table: str
    started: str
    finished: str | None
    status: str
    partitions_scanned: int
    partitions_skipped: int
    partitions_removed: int
    rows: int
    error: str | None


class RunsOut(BaseModel):
    runs: list[RunOut]


class DaemonOut(BaseModel):
    node: str = Field(description='"host:pid"')
    host: str
    pid: int
    url: str = Field(description="where its HTTP API answers")
    thrift_port: int | None = Field(description="its Hive Metastore port (None: not served)")
    version: str
    started: str
    heartbeat: str = Field(description="its latest heartbeat")
    state: str = Field(
        description="serving; silent (no heartbeat for silent_after_seconds: died, hangs or "
        "cut off from the database); stopped (cleanly)"
    )
    leader: bool = Field(description="it runs the schedules (only a serving daemon leads)")
    leader_since: str | None
    stopped: str | None


class DaemonsOut(BaseModel):
    heartbeat_seconds: float
    silent_after_seconds: float
    leader: str | None = Field(description="the node that leads, if one is serving")
    daemons: list[DaemonOut]
