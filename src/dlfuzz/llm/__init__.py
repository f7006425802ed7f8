"""Optional LLM aid: an OpenAI-compatible client with a disk cache, TensorJSFuzz's
constraint extraction prompt and DLLens' counterpart synthesis with repair.

Nothing here is needed to fuzz: with no endpoint configured ``client_from_settings``
returns None and every caller goes on offline. Only light modules are imported here.
"""

from dlfuzz.llm.cache import ResponseCache
from dlfuzz.llm.client import LlmClient, client_from_settings

__all__ = ["LlmClient", "ResponseCache", "client_from_settings"]
