"""The request-building core of the HTTP client: one method per facade method, same name and
parameters, returning a ``Call`` (what to send, how to read the answer). The sync and async
clients run the same calls over their own transport; nothing here does I/O. The methods live by
topic, as the facade's do."""

from memstrata.client.calls.base import Call
from memstrata.client.calls.edits import EditsCalls
from memstrata.client.calls.forgetting import ForgettingCalls
from memstrata.client.calls.keys import KeysCalls
from memstrata.client.calls.pipeline import PipelineCalls
from memstrata.client.calls.records import RecordsCalls
from memstrata.client.calls.search import SearchCalls
from memstrata.client.calls.turns import TurnsCalls


class Calls(RecordsCalls, SearchCalls, PipelineCalls, EditsCalls, ForgettingCalls, TurnsCalls, KeysCalls):
    """Every call of the facade."""


__all__ = ["Call", "Calls"]
