"""Importing litellm in the background as soon as the program starts.

The import costs about 4.5 s of CPU on a 2-core machine; started early in a thread, it is done
(or nearly) by the time the first model call needs it, and it never delays a first frame.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import threading
from types import ModuleType

_thread: threading.Thread | None = None
_lock = threading.Lock()


def _quiet_environment() -> None:
    # Without this, importing litellm fetches a price list from the network.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # litellm's own HTTP path for ``openai/`` models instead of the OpenAI SDK's. The SDK walks the
    # whole request through its TypedDict transforms on every call (O(conversation): ~110 ms of
    # CPU per call at 300 steps here) and builds a pydantic object per chunk before litellm builds
    # its own; litellm's path does neither (bench/loop_overhead.py). Set it to false to go back.
    os.environ.setdefault("EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER", "true")
    # litellm scans every string of the conversation for base64 to shorten in its logging payload
    # after each call; nothing here reads that payload. Read once, at import.
    os.environ.setdefault("MAX_BASE64_LENGTH_FOR_LOGGING", "0")


def _import() -> None:
    # litellm leaves some 300k objects that live as long as the process. Left to the collector,
    # they are traversed again by every full collection, during the import and after it: each
    # such pause took 175 ms here, holding the GIL while the TUI should be drawing. So collect
    # nothing during the import, then move everything that exists into the permanent generation.
    collecting = gc.isenabled()
    gc.disable()
    try:
        import litellm  # noqa: F401
    except Exception:  # noqa: BLE001 - the real import in load_litellm reports the error
        pass
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def start_background_import() -> None:
    """Begin importing litellm in a daemon thread (idempotent)."""
    global _thread
    if os.environ.get("AGENTCLI_NO_WARMUP"):
        return
    with _lock:
        if _thread is None:
            _quiet_environment()
            _thread = threading.Thread(target=_import, name="litellm-import", daemon=True)
            _thread.start()


async def load_litellm() -> ModuleType:
    """The configured litellm module, waiting for the background import without blocking the loop."""
    return await asyncio.to_thread(import_litellm)


def import_litellm() -> ModuleType:
    """The configured litellm module, waiting for the background import (blocking: off the loop)."""
    _quiet_environment()
    thread = _thread
    if thread is not None and thread.is_alive():
        thread.join()
    if "litellm" not in sys.modules:
        _import()
    import litellm

    # Without this litellm prints a "Provider List" banner to stdout on every unknown model.
    litellm.suppress_debug_info = True
    # Providers reject parameters they do not know (tool_choice on some); drop them instead.
    litellm.drop_params = True
    return litellm
