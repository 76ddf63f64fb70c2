"""Analyses of audiences without saving anything: the overlap of a list's audiences, the size
of a filter estimated from a sample, and the comparison of two audiences or filters.

The use cases are `domain/use_cases/overlaps.py`, `estimates.py` and `comparisons.py`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from ...domain.use_cases import comparisons, estimates, overlaps
from ...http.responses import JSONResponse, data
from ..deps import DatabaseDep, PrivateKey, SettingsDep
from ..heavy import HEAVY
from ..openapi import RULE_ERROR_RESPONSES
from ..schemas.analysis import (
    CompareRequest,
    CompareResponse,
    CompareSide,
    EstimateRequest,
    EstimateResponse,
    OverlapQuery,
    OverlapResponse,
)

router = APIRouter(prefix="/audiences", tags=["audiences"])
lists_router = APIRouter(prefix="/lists", tags=["lists"])


@lists_router.get(
    "/{id}/overlap",
    dependencies=[HEAVY],
    response_model=OverlapResponse,
    summary="Shared members of a list's audiences",
    description="The matrix of how many contacts each pair of the audiences shares (the "
    "diagonal: their sizes), for up to 50 audiences of the list, from the stored membership "
    "in one query. An id that is not an audience of the list is a 400.",
)
def audience_overlap(
    id: str, query: Annotated[OverlapQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    found = overlaps.overlap(database, principal.account_id, id, query.audiences)
    sizes = [found.matrix[i][i] for i in range(len(found.audiences))]
    return data(
        {
            "listId": found.list_id,
            "audiences": found.audiences,
            "sizes": sizes,
            "matrix": found.matrix,
            "building": found.building,
        }
    )


@router.post(
    "/estimate",
    dependencies=[HEAVY],
    response_model=EstimateResponse,
    summary="Estimate the size of a filter",
    description="How many contacts of the list a filter selects, estimated with a 95 % "
    "interval from a uniform random sample of the list kept with it (its contacts with the "
    "smallest ids, which are random): the same sample from one request to the next, judged "
    "in one query whatever the list's size. On a list no larger than the sample the estimate "
    "is the count. `exact: true` also counts the filter on the whole list.",
    responses=RULE_ERROR_RESPONSES,
)
def estimate_audience(
    body: EstimateRequest, principal: PrivateKey, database: DatabaseDep, settings: SettingsDep
) -> JSONResponse:
    request = estimates.EstimateRequest(
        body.listId, body.filters, body.filtersText, body.filtersFormat, body.exact
    )
    found = estimates.estimate(database, settings, principal.account_id, request)
    size = found.size
    return data(
        {
            "estimate": size.estimate,
            "low": size.low,
            "high": size.high,
            "confidence": 0.95,
            "sampleSize": size.sampled,
            "sampleMatches": size.matches,
            "listSize": size.population,
            "exact": found.exact,
            "filters": found.filter.to_json(),
            "filtersText": found.filter.to_text(),
        }
    )


COMPARE_DESCRIPTION = (
    "Two saved audiences or filters of one list compared. `relation` is what their definitions "
    "prove of every contact there could be (the library's `compare`: `equivalent`, `subset`, "
    "`superset` and `disjoint` are proofs; `unknown` when not decided, or for a manual "
    "audience), with a made-up example contact (`witnesses`) for each region shown to hold "
    "one, checked against both filters. `counts` are the contacts in both, in `a` only and in "
    "`b` only now: from the stored membership for saved audiences, the filter judged on the "
    "list for one sent. `canMatch` says of each side whether it can select anyone at all: "
    "`holds: false` is a proof whose `reason` names the conditions that cannot hold together; "
    "`holds: true` comes with an example contact it selects. `listId` is needed when "
    "neither side is a saved audience."
)


def _side(side: CompareSide | None) -> comparisons.Side:
    if side is None:
        return comparisons.Side()
    return comparisons.Side(side.audienceId, side.filters, side.filtersText, side.filtersFormat)


@router.post(
    "/compare",
    dependencies=[HEAVY],
    response_model=CompareResponse,
    summary="Compare two audiences or filters",
    description=COMPARE_DESCRIPTION,
    responses=RULE_ERROR_RESPONSES,
)
def compare_audiences(
    body: CompareRequest, principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    found = comparisons.compare_sides(
        database, principal.account_id, body.listId, _side(body.a), _side(body.b)
    )
    sides = [{"audienceId": id_, "filters": filters} for id_, filters in found.sides]
    return data(
        {
            "listId": found.list_id,
            "relation": found.relation,
            "reason": found.reason,
            "witnesses": _camel(found.witnesses),
            "counts": _camel(found.counts),
            "a": sides[0],
            "b": sides[1],
            "canMatch": found.can_match,
        }
    )


def _camel(regions: dict[str, Any]) -> dict[str, Any]:
    return {"both": regions["both"], "aOnly": regions["a_only"], "bOnly": regions["b_only"]}
