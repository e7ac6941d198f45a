"""The daemon's HTTP API (FastAPI): the app (app.py), its request and answer models, one
routes module per resource (routes/), the error mapping, and the ASGI pieces in front of
FastAPI (the bearer token, the lookup fast path, request metrics).

See docs/http-api.md for the routes and their answers.
"""
