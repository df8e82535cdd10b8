"""L2 scenes and the L3 persona, per tenant: when they run (``rules``, ``scheduler``) and what each
run does (``l2_runner``, ``l3_runner``)."""
