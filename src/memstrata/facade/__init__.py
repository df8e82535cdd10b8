"""The facade's methods by topic; ``memstrata.memory.AsyncMemory`` puts them together. Every topic
class derives from ``core.FacadeCore`` alone (a flat mix, no diamond); what more than one topic
does lives once in the core. Each public method is built from its declaration in
``memstrata.operations`` (``core.operation``).

core       the parts, the pipeline, the checks, and the shared steps (capture, recall, end a
           session, run everything, write an import)
capture    L0 in                       reads      every layer out
search     search and recall           pipeline   run, end_session, status, repair, reindex
imports    sessions, seeds, TDAI dirs  exporting  export, and an export back in
edits      record-level reads and edits (methods; their logic in ``edits.records``)
forgetting forget, pin, time to live, sweep, rebuild scenes
turns      before_prompt / turn_committed (the host turn lifecycle)
"""
