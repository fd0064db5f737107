"""A command's output kept within a bound while it arrives: its head and its tail, the middle counted.

A command can print far more than anyone reads (``yes``, a runaway log, ``cat`` of a disk image).
Reading all of it before cutting it down held it all in memory: 8 seconds of ``yes`` left
agentcli 15.8 GB resident, and joining and decoding that took longer than the command's own
timeout. The model is only ever shown the head and the tail (:func:`truncate_middle`), so only
those are kept; the middle is counted as it goes by.
"""

from __future__ import annotations

from agentcli.tools.text import truncate_middle

_CONTINUATION = bytes(range(0x80, 0xC0))
"""UTF-8's continuation bytes: every other byte starts a character (or is one undecodable byte,
shown as one replacement character), so counting the others counts characters."""


class OutputCapture:
    """Feed it the bytes as they come; :meth:`text` gives what the model reads, cut in the middle."""

    def __init__(self, limit_chars: int) -> None:
        self.limit_chars = limit_chars
        # A character takes at most 4 bytes, and truncate_middle keeps limit/2 characters of each
        # end: 2 * limit bytes per end always hold them, whatever the text is made of.
        self._keep = 2 * limit_chars
        self._head = bytearray()
        self._tail = bytearray()
        self.dropped_chars = 0
        self.dropped_lines = 0
        """Characters and newlines that went by between the head and the tail, not kept."""

    def feed(self, data: bytes) -> None:
        room = self._keep - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail += data
        excess = len(self._tail) - self._keep
        if excess > self._keep:  # let the tail grow to twice its size, then drop in one piece
            gone = bytes(self._tail[:excess])
            self.dropped_lines += gone.count(b"\n")
            self.dropped_chars += len(gone.translate(None, _CONTINUATION))
            del self._tail[:excess]

    def text(self) -> str:
        """The output decoded (bytes that are not UTF-8 replaced), its middle cut to the limit."""
        if not self.dropped_chars:
            return truncate_middle((self._head + self._tail).decode("utf-8", errors="replace"), self.limit_chars)
        # Each end decoded alone: a character split where a piece was dropped becomes a
        # replacement character inside the cut, never in what is shown.
        text = self._head.decode("utf-8", errors="replace") + self._tail.decode("utf-8", errors="replace")
        return truncate_middle(text, self.limit_chars, unseen_chars=self.dropped_chars,
                               unseen_lines=self.dropped_lines)
