"""MemstrataStore and MemoryNodes in real LangGraph graphs: what memstrata adds beyond the
BaseStore suite (ranked search with the relevance floor, time to live, tenants apart, items that
outlive the objects that wrote them), over the library and the HTTP client, sync and async."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph.graph")

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.base import BaseStore

from memstrata import AsyncMemory, BlockingMemoryApi, FakeClock, Memory
from memstrata.client import MemoryClient
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.errors import ConfigError
from memstrata.integrations.langgraph import MemoryNodes, MemstrataStore
from tests.support.live_server import LiveServer


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script and keeps every prompt it was sent."""

    replies: list[str]
    prompts: list[list[BaseMessage]]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **_: Any
    ) -> ChatResult:
        self.prompts.append(list(messages))
        reply = self.replies[len(self.prompts) - 1]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(reply))])


NOTED = "I will remember that your sister Wilhelmina breeds alpacas."
REPLY = "Your sister Wilhelmina breeds alpacas in Peru."


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    context: str


def _graph(nodes: MemoryNodes, model: ScriptedChatModel, *, asynchronous: bool = False) -> Any:
    def answer(state: State) -> dict[str, Any]:
        system = SystemMessage(f"You are helpful.\n\n{state.get('context', '')}")
        return {"messages": [model.invoke([system, *state["messages"]])]}

    g: StateGraph[Any] = StateGraph(State)
    g.add_node("recall", nodes.arecall if asynchronous else nodes.recall)
    g.add_node("model", answer)
    g.add_node("capture", nodes.acapture if asynchronous else nodes.capture)
    g.add_edge(START, "recall")
    g.add_edge("recall", "model")
    g.add_edge("model", "capture")
    g.add_edge("capture", END)
    return g.compile()


def _fact_then_question(
    mem: BlockingMemoryApi, user: str, *, other: str
) -> tuple[ScriptedChatModel, ScriptedChatModel]:
    first = ScriptedChatModel(replies=[NOTED], prompts=[])
    config = {"configurable": {"user_id": user, "thread_id": "t1"}}
    _graph(MemoryNodes(mem), first).invoke(
        {"messages": [HumanMessage("My sister Wilhelmina breeds alpacas in Peru.")]}, config
    )
    mem.run_all()  # the pipeline turns the conversation into memory (here, at once)
    later = ScriptedChatModel(replies=[REPLY], prompts=[])
    ask = {"messages": [HumanMessage("What does Wilhelmina breed?")]}
    _graph(MemoryNodes(mem), later).invoke(ask, {"configurable": {"user_id": user, "thread_id": "t2"}})
    stranger = ScriptedChatModel(replies=["I don't know."], prompts=[])
    _graph(MemoryNodes(mem), stranger).invoke(ask, {"configurable": {"user_id": other, "thread_id": "t3"}})
    return later, stranger


def test_a_fact_said_in_one_graph_run_is_recalled_in_a_later_one(empty_memory: Memory) -> None:
    later, stranger = _fact_then_question(empty_memory, "alice", other="bob")
    assert "alpacas" in str(later.prompts[0][0].content)
    assert "alpacas" not in str(stranger.prompts[0][0].content)  # bob's graph never sees alice's
    said = [m.content for m in empty_memory.messages(user_id="alice", agent_id="langgraph")]
    assert said == [
        "My sister Wilhelmina breeds alpacas in Peru.",
        NOTED,
        "What does Wilhelmina breed?",
        REPLY,
    ]


def test_the_nodes_work_over_the_http_client(gateway_client: MemoryClient) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    later, stranger = _fact_then_question(gateway_client, user, other=user + "-other")
    assert "alpacas" in str(later.prompts[0][0].content)
    assert "alpacas" not in str(stranger.prompts[0][0].content)


async def test_the_async_nodes_capture_and_recall(home: Path, clock: FakeClock) -> None:
    mem = await AsyncMemory.open(home, clock=clock, embedder=HashingEmbedder(64))
    try:
        model = ScriptedChatModel(replies=["Noted.", "Alpacas."], prompts=[])
        graph = _graph(MemoryNodes(mem, user_id="carol"), model, asynchronous=True)
        await graph.ainvoke({"messages": [HumanMessage("I keep bees on my roof in Lisbon.")]})
        await mem.run_all()
        await graph.ainvoke({"messages": [HumanMessage("Where do I keep my bees?")]})
        assert "Lisbon" in str(model.prompts[1][0].content)
    finally:
        await mem.close()


def test_a_sync_node_refuses_an_async_memory_by_name(home: Path) -> None:
    mem = AsyncMemory.__new__(AsyncMemory)  # never opened: the check reads only its methods
    with pytest.raises(ConfigError, match="async"):
        MemoryNodes(mem).recall({"messages": [HumanMessage("hi")]}, {})


# --- the store ----------------------------------------------------------------------------------


@pytest.fixture
def notes_store(empty_memory: Memory, clock: FakeClock) -> MemstrataStore:
    """A store holding three notes of alice and one of bob."""
    store = MemstrataStore(empty_memory, now_ms=clock.now_ms)
    store.put(("memories", "alice"), "pet", {"text": "Alice has a cat named Biscuit", "kind": "pet"})
    store.put(("memories", "alice"), "food", {"text": "Alice loves spicy ramen", "kind": "food"})
    store.put(("memories", "alice", "work"), "job", {"text": "Alice repairs violins", "kind": "job"})
    store.put(("memories", "bob"), "pet", {"text": "Bob has a parrot named Kiwi", "kind": "pet"})
    return store


def test_a_query_ranks_the_namespace_by_relevance(notes_store: MemstrataStore) -> None:
    found = notes_store.search(("memories", "alice"), query="cat named Biscuit")
    assert found[0].key == "pet"
    assert found[0].score is not None and found[0].score > 0
    assert all(tuple(i.namespace)[:2] == ("memories", "alice") for i in found)
    assert [
        i.key for i in notes_store.search(("memories", "alice"), query="Biscuit", filter={"kind": "food"})
    ] == []


def test_a_query_about_nothing_stored_finds_nothing(notes_store: MemstrataStore) -> None:
    assert notes_store.search(("memories", "alice"), query="quantum chromodynamics lattice") == []


def test_tenants_stay_apart(notes_store: MemstrataStore, empty_memory: Memory) -> None:
    assert [i.value["text"] for i in notes_store.search(("memories", "bob"), query="cat Biscuit")] == []
    hits = empty_memory.search("parrot Kiwi", user_id="alice", agent_id="langgraph")
    assert all("Kiwi" not in h.content for h in hits)
    bob = empty_memory.search("parrot Kiwi", user_id="bob", agent_id="langgraph")
    assert "Kiwi" in bob[0].content  # the items are memory: memstrata's own search finds them


def test_items_outlive_the_store_and_memory_objects(home: Path, clock: FakeClock) -> None:
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(64)) as mem:
        MemstrataStore(mem).put(("memories", "dora"), "k", {"text": "Dora is allergic to peanuts"})
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(64)) as mem:
        item = MemstrataStore(mem).get(("memories", "dora"), "k")
    assert item is not None and item.value == {"text": "Dora is allergic to peanuts"}


def test_an_item_with_a_ttl_expires_and_a_read_refreshes_it(empty_memory: Memory, clock: FakeClock) -> None:
    store = MemstrataStore(empty_memory, now_ms=clock.now_ms)
    ns = ("memories", "erin")
    store.put(ns, "short", {"v": 1}, ttl=2)
    store.put(ns, "kept", {"v": 2})
    clock.advance(90)
    assert store.get(ns, "short") is not None  # read at 1.5 min: the 2 minutes start again
    clock.advance(90)
    assert store.get(ns, "short", refresh_ttl=False) is not None
    clock.advance(60)
    assert store.get(ns, "short") is None
    assert [i.key for i in store.search(ns)] == ["kept"]
    assert [i.key for i in store.search(ns, query="v")] in ([], ["kept"])


def _store_graph(store: BaseStore, model: ScriptedChatModel) -> Any:
    """A graph that keeps what the user says in the store and reads it back into the prompt."""

    def answer(state: State, *, store: BaseStore) -> dict[str, Any]:
        said = str(state["messages"][-1].content)
        known = [i.value["text"] for i in store.search(("memories", "gus"), query=said, limit=3)]
        store.put(("memories", "gus"), uuid.uuid4().hex, {"text": said})
        prompt = [SystemMessage("Known: " + "; ".join(known)), *state["messages"]]
        return {"messages": [model.invoke(prompt)]}

    g = StateGraph(State)
    g.add_node("model", answer)
    g.add_edge(START, "model")
    g.add_edge("model", END)
    return g.compile(store=store)


def test_a_compiled_graph_uses_the_store_over_http(gateway: LiveServer) -> None:
    model = ScriptedChatModel(replies=["ok", "ok"], prompts=[])
    with Memory.open(gateway.url) as mem:
        _store_graph(MemstrataStore(mem), model).invoke({"messages": [HumanMessage("I play the oboe")]})
    with Memory.open(gateway.url) as mem:  # a new client, store and graph
        _store_graph(MemstrataStore(mem), model).invoke({"messages": [HumanMessage("what do I play, oboe?")]})
    assert "I play the oboe" in str(model.prompts[1][0].content)


async def test_the_async_store_over_the_async_http_client(gateway: LiveServer) -> None:
    mem = await AsyncMemory.open(gateway.url)
    try:
        store = MemstrataStore(mem)
        ns = ("memories", f"u-{uuid.uuid4().hex[:8]}")
        await store.aput(ns, "k", {"text": "prefers window seats", "n": [1, 2.5, None]})
        item = await store.aget(ns, "k")
        assert item is not None and item.value == {"text": "prefers window seats", "n": [1, 2.5, None]}
        assert [i.key for i in await store.asearch(ns, query="window seats")] == ["k"]
        with pytest.raises(ConfigError):
            store.get(ns, "k")  # the sync API needs a blocking memory
    finally:
        await mem.close()
