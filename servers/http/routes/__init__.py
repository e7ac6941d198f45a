"""The API's routes, one module per resource, each a `router(...)` of an APIRouter.
app.create_app includes the service's own; the daemon adds /schedules and /scheduler."""
