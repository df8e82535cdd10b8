"""The native API under ``/v1``, one module per topic; each route parses, calls one facade method
and formats the result."""
