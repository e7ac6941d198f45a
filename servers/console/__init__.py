"""The web console: plain HTML, CSS and JavaScript the daemon serves at `/`, drawn from the
HTTP API's own routes (docs/console.md)."""
