"""The site's routes."""

from django.urls import path

from djangosite import views

urlpatterns = [
    path("signup/<str:email>", views.signup),
    path("jobs/<str:job_id>", views.job_status),
]
