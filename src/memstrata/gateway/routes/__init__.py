"""The native API under ``/v1``, one module per topic; each route parses, calls one facade method
and formats the result. Each is built from its operation's declaration (``declared``), but
health (no operation), status (it adds the proxy's counters) and forgetting a tenant (its own
rule for naming the tenant), written by hand beside them."""
