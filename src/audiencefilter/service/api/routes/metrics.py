"""`GET /metrics`: the Prometheus exposition of this application's registry.

Outside `/v4` like the health probes, and guarded by a token of its own
(`AUDIENCEFILTER_METRICS_TOKEN`, sent as `Authorization: Bearer <token>`), not by an API key:
an API key belongs to one account, and the metrics show every account's queues. Without the
setting the endpoint is off (404, saying how to turn it on). Run in the thread pool: the
states are read from the database at each scrape (`domain/service_state.py`).
"""

from __future__ import annotations

import hmac
from typing import cast

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ...ground.metrics import Metrics
from ...http.errors import error_response
from ...settings import Settings

router = APIRouter(tags=["health"])

OFF = (
    "Metrics are off: set AUDIENCEFILTER_METRICS_TOKEN to a secret and send it as "
    "`Authorization: Bearer <token>`"
)
REFUSED = (
    "Metrics need the metrics token: send `Authorization: Bearer <token>` with the value of "
    "AUDIENCEFILTER_METRICS_TOKEN (an API key does not open them)"
)


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    settings = cast(Settings, request.app.state.settings)
    if settings.metrics_token is None:
        return error_response(404, OFF)
    scheme, _, presented = request.headers.get("authorization", "").partition(" ")
    expected = settings.metrics_token.get_secret_value().encode()
    if scheme.lower() != "bearer" or not hmac.compare_digest(presented.strip().encode(), expected):
        return error_response(401, REFUSED, headers={"WWW-Authenticate": 'Bearer realm="metrics"'})
    registry = cast(Metrics, request.app.state.metrics).registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
