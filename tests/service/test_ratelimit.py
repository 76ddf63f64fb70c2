"""Rate limits per account and plan, moving window, with IETF RateLimit headers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .conftest import ApiClient, make_tenant, sqlite_settings


def _small_limits(factory: Callable[..., ApiClient], **extra: str) -> ApiClient:
    return factory(rate_limit_free="3/minute", rate_limit_pro="5/minute", **extra)


def test_free_account_gets_three_then_429_with_headers(
    app_factory: Callable[..., ApiClient],
) -> None:
    api = _small_limits(app_factory)
    tenant = make_tenant(api)
    for remaining in (2, 1, 0):
        response = tenant.call("GET", "/v4/lists")
        assert response.status_code == 200
        assert response.headers["ratelimit-policy"] == '"free";q=3;w=60'
        assert response.headers["ratelimit"].startswith(f'"free";r={remaining};t=')
    refused = tenant.call("GET", "/v4/lists")
    assert refused.status_code == 429
    assert refused.json() == {
        "error": 429,
        "message": "Rate limit of 3 requests per 60 s exceeded",
        "status": 429,
        "detail": "Rate limit of 3 requests per 60 s exceeded",
    }
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert refused.headers["ratelimit"].startswith('"free";r=0;t=')


def test_limits_count_per_account_across_keys_and_plans(
    app_factory: Callable[..., ApiClient],
) -> None:
    api = _small_limits(app_factory)
    tenant, neighbour, big = make_tenant(api), make_tenant(api), make_tenant(api, plan="pro")
    assert tenant.call("GET", "/v4/lists").status_code == 200
    # the public key spends the account's public budget, never the private keys' quota
    assert tenant.call("GET", "/v4/lists", headers=tenant.public_headers).status_code == 403
    assert tenant.call("GET", "/v4/lists").status_code == 200
    assert tenant.call("GET", "/v4/lists").status_code == 200
    assert tenant.call("GET", "/v4/lists").status_code == 429
    assert neighbour.call("GET", "/v4/lists").status_code == 200
    statuses = [big.call("GET", "/v4/lists").status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    assert big.call("GET", "/v4/lists").headers["ratelimit-policy"] == '"pro";q=5;w=60'


def test_unauthenticated_and_health_requests_carry_no_rate_headers(
    app_factory: Callable[..., ApiClient],
) -> None:
    api = _small_limits(app_factory)
    assert "ratelimit" not in api.get("/v4/lists").headers
    assert "ratelimit" not in api.get("/health/live").headers


@pytest.mark.redis
def test_redis_storage_shares_counters_between_app_instances(
    app_factory: Callable[..., ApiClient], redis_url: str
) -> None:
    first = _small_limits(app_factory, rate_limit_storage=redis_url)
    # a second app on the same database and Redis: another worker process, in effect
    second = app_factory(
        sqlite_settings(
            first.app.state.settings.database_url.removeprefix("sqlite:///"),
            rate_limit_free="3/minute",
            rate_limit_storage=redis_url,
        )
    )
    tenant = make_tenant(first)
    statuses = []
    for index in range(4):
        api = first if index % 2 == 0 else second
        statuses.append(api.get("/v4/lists", headers=tenant.headers).status_code)
    assert statuses == [200, 200, 200, 429]
