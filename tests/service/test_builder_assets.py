"""`GET /builder` is served with a strict Content-Security-Policy, runs no inline code, loads
nothing from another host, and its files ship in the package (and in a wheel)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from audiencefilter.service.api.routes.builder import STATIC_DIRECTORY

from .conftest import ApiClient

ROOT = Path(__file__).resolve().parents[2]
IN_PACKAGE = "audiencefilter/service/static/builder"
ASSETS = (
    "index.html",
    "app.js",
    "api.js",
    "model.js",
    "render.js",
    "csvimport.js",
    "builder.css",
    "favicon.svg",
)


def _directives(header: str) -> dict[str, str]:
    pairs = (part.strip().split(" ", 1) for part in header.split(";") if part.strip())
    return {name: value for name, value in pairs}


def test_the_page_has_a_strict_content_security_policy(client: ApiClient) -> None:
    response = client.get("/builder")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    policy = _directives(response.headers["content-security-policy"])
    assert policy["default-src"] == "'self'"
    assert policy["script-src"] == "'self'"
    assert policy["style-src"] == "'self'"
    assert policy["connect-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"
    assert policy["object-src"] == "'none'"
    assert "unsafe" not in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"


def test_the_page_runs_no_inline_script_or_style(client: ApiClient) -> None:
    html = client.get("/builder").text
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, flags=re.S)
    assert scripts, html
    for attributes, body in scripts:
        assert 'src="builder/assets/' in attributes and body.strip() == ""
    assert "<style" not in html
    assert not re.search(r"\sstyle=", html)
    assert not re.search(r"\son[a-z]+=", html)  # no inline event handlers
    assert "javascript:" not in html


def test_every_file_the_page_loads_comes_from_the_service(client: ApiClient) -> None:
    html = client.get("/builder").text
    urls = re.findall(r'(?:src|href)="([^"]+)"', html)
    local = [url for url in urls if url.startswith("builder/assets/")]
    assert {url.rsplit("/", 1)[1] for url in local} == set(ASSETS) - {
        "index.html",
        "api.js",
        "model.js",
        "render.js",
    }
    fragments = {url for url in urls if url.startswith("#")}  # links within the page
    assert set(urls) - set(local) - fragments == {"docs"}  # and back to the API documentation
    for name in ASSETS:
        fetched = client.get(f"/builder/assets/{name}")
        assert fetched.status_code == 200, name
        if name.endswith(".js"):
            assert "javascript" in fetched.headers["content-type"], name
            text = fetched.text
            # Modules import one another by relative path only.
            for imported in re.findall(r'from "([^"]+)"', text):
                assert imported.startswith("./") and (STATIC_DIRECTORY / imported[2:]).exists()
        if not name.endswith(".svg"):
            assert not re.search(r"https?://", fetched.text), name


def test_the_docs_page_links_to_the_builder(client: ApiClient) -> None:
    description = client.get("/openapi.json").json()["info"]["description"]
    assert "(/builder)" in description
    assert not any(
        path.startswith("/builder") for path in client.get("/openapi.json").json()["paths"]
    )


def test_the_package_holds_the_builder_files() -> None:
    for name in ASSETS:
        assert (STATIC_DIRECTORY / name).is_file(), name


def test_a_wheel_ships_the_builder_files(tmp_path: Path) -> None:
    builders = pytest.importorskip("hatchling.builders.wheel")
    wheel = Path(next(iter(builders.WheelBuilder(str(ROOT)).build(directory=str(tmp_path)))))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for name in (*ASSETS, *SIGNUP_ASSETS):
            path = f"{IN_PACKAGE}/{name}"
            assert path in names, path
            assert archive.read(path) == (STATIC_DIRECTORY / name).read_bytes()


SIGNUP_ASSETS = ("signup.html", "signup.js", "signup.css")


def test_the_signup_page_has_the_builders_headers_and_no_inline_code(client: ApiClient) -> None:
    page = client.get("/signup")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert (
        page.headers["content-security-policy"]
        == client.get("/builder").headers["content-security-policy"]
    )
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["x-frame-options"] == "DENY"
    html = page.text
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, flags=re.S)
    assert [attributes for attributes, _ in scripts] == [
        ' type="module" src="builder/assets/signup.js"'
    ]
    assert all(body.strip() == "" for _, body in scripts)
    assert "<style" not in html and not re.search(r"\s(style|on[a-z]+)=", html)
    urls = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert set(urls) == {
        "builder/assets/favicon.svg",
        "builder/assets/signup.css",
        "builder/assets/signup.js",
        "docs",
    }
    for name in SIGNUP_ASSETS:
        assert (STATIC_DIRECTORY / name).is_file(), name
        fetched = client.get(f"/builder/assets/{name}")
        assert fetched.status_code == 200, name
        assert fetched.headers["x-content-type-options"] == "nosniff"
        assert not re.search(r"https?://", fetched.text), name
