"""Memory for agents built in a framework, one adapter per framework, each behind its extra:

langgraph       ``MemstrataStore`` (a LangGraph ``BaseStore``) and ``memory_node`` (recall the
                latest human message, capture the turn)           ``memstrata[langgraph]``
openai_agents   ``MemstrataSession`` (an Agents SDK ``Session``)   ``memstrata[openai-agents]``
pydantic_ai     ``memstrata_history`` (a history processor) and ``memstrata_tools``
                                                                  ``memstrata[pydantic-ai]``

Nothing here is imported by ``import memstrata``: each module imports its framework. Every
adapter takes a memory opened by ``Memory.open`` / ``AsyncMemory.open`` (a path, a database URL
or an ``http://`` gateway): it calls only the public methods, so the library and the HTTP client
serve it alike (``calling.call``)."""
