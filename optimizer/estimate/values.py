"""Numbers that say where they came from and how sure they are (DataFusion's Precision):
`exact` (counted), `estimated` (derived from statistics), `default` (a named guess).
Combining values keeps the weakest precision."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Precision = Literal["exact", "estimated", "default"]
EXACT: Final = "exact"
ESTIMATED: Final = "estimated"
DEFAULT: Final = "default"
_RANK: dict[Precision, int] = {EXACT: 0, ESTIMATED: 1, DEFAULT: 2}


def weakest(*precisions: Precision) -> Precision:
    return max(precisions, key=_RANK.__getitem__, default=EXACT)


@dataclass(frozen=True)
class Estimate:
    value: float
    precision: Precision
    source: str

    def scaled(self, factor: Estimate) -> Estimate:
        """This estimate times a selectivity: the source is the selectivity's."""
        return Estimate(
            max(0.0, self.value * factor.value),
            weakest(self.precision, factor.precision),
            factor.source,
        )

    def as_json(self) -> dict[str, object]:
        return {"value": round(self.value, 3), "precision": self.precision, "source": self.source}


def exact(value: float, source: str) -> Estimate:
    return Estimate(float(value), EXACT, source)


def default(value: float, source: str) -> Estimate:
    return Estimate(float(value), DEFAULT, source)


def clamp_fraction(value: float) -> float:
    return min(1.0, max(0.0, value))
