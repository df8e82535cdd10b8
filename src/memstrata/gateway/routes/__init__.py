"""The native API under ``/v1``, one module per topic; each route parses, calls one facade method
and formats the result. Each is built from its operation's declaration (``declared``) but health,
written by hand beside them: it runs no operation (it answers from the status shared by probes,
without a key)."""
