"""Liveness and readiness probes, outside `/v4` and without a key."""

from __future__ import annotations

from typing import cast

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from ...db.engine import Database
from ...http.errors import error_response, logger
from ...http.responses import JSONResponse, data
from ..schemas.resources import HealthData

router = APIRouter(prefix="/health", tags=["health"])


@router.get("/live", response_model=HealthData, summary="The process is up")
async def live() -> JSONResponse:
    return data({"status": "ok"})


@router.get("/ready", response_model=HealthData, summary="The database answers")
async def ready(request: Request) -> JSONResponse:
    database = cast(Database, request.app.state.db)
    try:
        await run_in_threadpool(database.ping)
    except Exception as exc:  # any failure to reach the database means "not ready"
        logger.warning("readiness check failed: %s", exc)
        return error_response(503, "The database is unreachable")
    return data({"status": "ok"})
