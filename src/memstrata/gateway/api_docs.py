"""The API's browsable docs: Swagger UI at ``/docs`` and ReDoc at ``/redoc``, their scripts and
styles served from the installed ``fastapi-offline`` package (no CDN: they work offline and
behind a firewall), and the OpenAPI schema at ``/openapi.json``.

With a key set the docs stay open while the API stays closed: the pages, their assets and the
schema describe routes and hold no data (the source is public anyway), and a browser cannot send
a Bearer header to load them. To try a call from the page, "Authorize" takes the key (the schema
declares the Bearer scheme), and every request the page sends then carries it.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"
SCHEMA = "/openapi.json"
PAGES = ("/docs", "/docs/oauth2-redirect", "/redoc", SCHEMA)
# Operations anyone may call (health): the schema says they need no key.
KEYLESS = ("/health", "/v1/health")


def mount(app: FastAPI) -> None:
    """Serve the docs pages, their local assets and a schema that declares the Bearer key.
    ``app`` must be created with ``docs_url=None, redoc_url=None`` (FastAPI's pages use a CDN)."""
    app.mount(ASSETS, StaticFiles(directory=str(files("fastapi_offline") / "static")), name="docs-assets")
    _declare_bearer(app)

    @app.get("/docs", include_in_schema=False)
    async def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=root + SCHEMA,
            title=f"{app.title} API",
            oauth2_redirect_url=root + "/docs/oauth2-redirect",
            swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
            # No validator badge: Swagger UI would fetch it from validator.swagger.io.
            swagger_ui_parameters={"persistAuthorization": True, "validatorUrl": None},
        )

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    async def oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=root + SCHEMA,
            title=f"{app.title} API",
            redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
            with_google_fonts=False,
        )


def is_docs(path: str) -> bool:
    """Whether ``path`` is a docs page, asset or the schema (open with a key set)."""
    return path in PAGES or path.startswith(ASSETS + "/")


def _declare_bearer(app: FastAPI) -> None:
    """The schema names the key (``Authorization: Bearer``) for every operation but health, so the
    docs page's "Authorize" sends it and clients generated from the schema know it."""
    generate = app.openapi

    def schema() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        built = generate()
        schemes = built.setdefault("components", {}).setdefault("securitySchemes", {})
        schemes["bearer"] = {
            "type": "http",
            "scheme": "bearer",
            "description": "MEMSTRATA_API_KEY or a scoped key (not needed when the server has none).",
        }
        built["security"] = [{"bearer": []}]
        for path in KEYLESS:
            for operation in built.get("paths", {}).get(path, {}).values():
                operation["security"] = []
        return built

    app.openapi = schema  # type: ignore[method-assign]
