"""`/docs` and `/redoc` work offline: every asset they load is served by the service itself."""

from __future__ import annotations

import re

import pytest

from .conftest import ApiClient

_ASSET = re.compile(
    r"""(?:src|href)=["']([^"']+)["']|url: ?['"]([^'"]+)['"]|spec-url=["']([^"']+)"""
)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_page_loads_only_local_assets(client: ApiClient, page: str) -> None:
    response = client.get(page)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    urls = [next(u for u in match.groups() if u) for match in _ASSET.finditer(html)]
    assert "/openapi.json" in urls
    assets = [url for url in urls if url != "/openapi.json"]
    assert assets, html
    for url in assets:
        assert url.startswith("/docs/assets/"), url
        fetched = client.get(url)
        assert fetched.status_code == 200, url
        assert len(fetched.content) > 1000, url


def test_pages_name_no_other_host(client: ApiClient) -> None:
    for page in ("/docs", "/redoc"):
        html = client.get(page).text
        assert re.findall(r"https?://", html) == [], page


def test_pages_are_not_operations_of_the_api(client: ApiClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert not any(path.startswith(("/docs", "/redoc")) for path in paths)
