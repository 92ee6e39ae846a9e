"""REST service and review page (extra ``service``): ``create_app`` builds the FastAPI application."""

from clinideid.service.settings import ServiceSettings

__all__ = ["ServiceSettings", "create_app"]


def create_app(settings: ServiceSettings, *, review: bool = True):
    from clinideid.service.app import create_app as _create

    return _create(settings, review=review)
