"""The native API under ``/v1``, one module per topic; each route parses, calls one facade method
and formats the result. Most are built from their operations' declarations (``declared``); the
ones with checks of their own are written by hand beside them."""
