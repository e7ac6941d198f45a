"""The JSON form of the column statistics an engine writes (a `ColumnStatisticsObj`, e.g.
Trino's update_table_column_statistics), stored as given and served back unchanged: the
struct field by field after its Thrift spec, and back."""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from typing import Any

from hive_metastore import ttypes
from thrift.Thrift import TType


def column_statistics_to_json(obj: Any) -> dict[str, Any]:
    """A ColumnStatisticsObj (as an engine wrote it, e.g. Trino's
    update_table_column_statistics) as JSON, field by field after its Thrift spec: binary
    fields (bitVectors, Decimal.unscaled) in Base64, unset fields left out."""
    return _struct_to_json(obj)


def column_statistics_from_json(data: Mapping[str, Any]) -> Any:
    """The ColumnStatisticsObj that column_statistics_to_json gave `data` for."""
    result = _struct_from_json(ttypes.ColumnStatisticsObj, data)
    result.validate()
    return result


def _struct_to_json(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for spec in obj.thrift_spec:
        if spec is None:
            continue
        value = getattr(obj, spec[2])
        if value is not None:
            out[spec[2]] = _value_to_json(spec[1], spec[3], value)
    return out


def _value_to_json(ttype: int, arg: Any, value: Any) -> Any:
    if ttype == TType.STRUCT:
        return _struct_to_json(value)
    if ttype == TType.STRING and arg == "BINARY":
        return base64.b64encode(value).decode("ascii")
    if ttype in (TType.LIST, TType.SET):
        return [_value_to_json(arg[0], arg[1], v) for v in value]
    if ttype == TType.DOUBLE and not math.isfinite(value):
        return repr(value)  # JSON has no NaN or infinities: kept as text, read back
    return value


def _struct_from_json(cls: Any, data: Mapping[str, Any]) -> Any:
    fields = {}
    for spec in cls.thrift_spec:
        if spec is None or spec[2] not in data:
            continue
        fields[spec[2]] = _value_from_json(spec[1], spec[3], data[spec[2]])
    unknown = set(data) - set(fields)
    if unknown:
        raise ValueError(f"unknown fields of {cls.__name__}: {', '.join(sorted(unknown))}")
    return cls(**fields)


def _value_from_json(ttype: int, arg: Any, value: Any) -> Any:
    if ttype == TType.STRUCT:
        return _struct_from_json(arg[0], value)
    if ttype == TType.STRING and arg == "BINARY":
        return base64.b64decode(value)
    if ttype in (TType.LIST, TType.SET):
        return [_value_from_json(arg[0], arg[1], v) for v in value]
    if ttype == TType.DOUBLE:
        return float(value)
    if ttype in (TType.I08, TType.I16, TType.I32, TType.I64):
        return int(value)
    return value
