"""The facade's methods by topic; ``memstrata.memory.AsyncMemory`` puts them together.

core       the parts and the pipeline built from them; checks shared by writing methods
capture    L0 in                       reads      every layer out
search     search and recall           pipeline   run, end_session, status, repair, reindex
imports    sessions and TDAI dirs      edits      record-level reads and edits (data plane)
turns      before_prompt / turn_committed (the host turn lifecycle)
"""
