"""L1, per session: when extraction runs (``rules``, ``scheduler``) and what it does (``runner``,
``commit``)."""
