"""URL configuration: everything lives under the admin."""

from __future__ import annotations

from django.contrib import admin
from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

admin.site.site_header = "AI QA Lab"
admin.site.site_title = "AI QA Lab"
admin.site.index_title = "AI QA Lab administration"

urlpatterns = [
    path("", RedirectView.as_view(url="/admin/runs/run/", permanent=False)),
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on every page, whatever the page's <link rel="icon"> says.
    path("favicon.ico", RedirectView.as_view(url=static("qalab/favicon.svg"), permanent=True)),
]
