"""The footer, fitted to the terminal: what does not fit goes, least needed first.

Textual's footer lays its keys out left to right and cuts the last ones off mid-word when the
terminal is narrow: at 80 columns with the timeline focused, the pane keys lost their "Panes"
label. Here the bindings named in ``DROP_ORDER`` are left out, in that order, until the rest
fits; the keys still work, and ``f1`` lists them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Resize
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

DROP_ORDER: tuple[str, ...] = (
    "agentcli.pane.",
    "agentcli.session.new",
)
"""Binding id prefixes, least needed first: the pane toggles (the side panes are hidden under
110 columns anyway) and a new session (also in the palette)."""


def key_width(key_display: str, description: str) -> int:
    """Cells a footer key takes: `` key `` and ``description `` (Textual's paddings)."""
    return cell_len(key_display) + 2 + (cell_len(description) + 1 if description else 0)


class FittedFooter(Footer):
    """A footer that drops its least needed keys rather than cutting the last ones off."""

    def __init__(self) -> None:
        super().__init__()
        self.dropped: tuple[str, ...] = ()
        """The ``DROP_ORDER`` prefixes left out at the current width (for tests)."""
        self._fitted_width = -1

    def _needed(self, bindings: Iterable[Binding]) -> int:
        width = 0
        groups: set[object] = set()
        for binding in bindings:
            key = self.app.get_key_display(binding)
            if binding.group is not None and binding.group.compact:
                # Compact group: keys side by side, the group's label once.
                width += cell_len(key) + 2
                if binding.group not in groups:
                    groups.add(binding.group)
                    width += cell_len(binding.group.description) + 2
            else:
                width += key_width(key, binding.description)
        palette = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE and palette is not None:
            width += key_width(self.app.get_key_display(palette.binding), palette.binding.description) + 2
        return width

    def _shown(self) -> list[tuple[Binding, bool, str]]:
        """The shown bindings, one per action, in the footer's order (focused widget first)."""
        shown: dict[str, tuple[Binding, bool, str]] = {}
        for _, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.show:
                shown.setdefault(binding.action, (binding, enabled, tooltip))
        return list(shown.values())

    def _key(self, key: FooterKey) -> FooterKey:
        """A key in the footer's style, set before it mounts. Textual's compose binds each key's
        ``compact`` to the footer's, whose first assignment restyled every key twice (its own
        default, then the footer's): ~1 ms a key on each compose, for a value this app never
        changes while the footer shows."""
        key.set_reactive(FooterKey.compact, self.compact)
        key.set_class(self.compact, "-compact", update=False)
        return key

    def compose(self) -> ComposeResult:
        # Textual's Footer.compose, on the bindings that fit.
        if not self._bindings_ready:
            return
        bindings = self._shown()
        dropped: list[str] = []
        for prefix in DROP_ORDER:
            if self._needed(binding for binding, _, _ in bindings) <= self.size.width:
                break
            bindings = [entry for entry in bindings if not (entry[0].id or "").startswith(prefix)]
            dropped.append(prefix)
        self.dropped = tuple(dropped)
        self._fitted_width = self.size.width
        for group, grouped in groupby(bindings, lambda entry: entry[0].group):
            entries = list(grouped)
            if group is not None and len(entries) > 1:
                with KeyGroup(classes="-compact" if group.compact else ""):
                    for binding, enabled, tooltip in entries:
                        yield self._key(FooterKey(binding.key, self.app.get_key_display(binding), "", binding.action,
                                                  disabled=not enabled, tooltip=tooltip or binding.description,
                                                  classes="-grouped"))
                yield FooterLabel(group.description)
                continue
            for binding, enabled, tooltip in entries:
                yield self._key(FooterKey(binding.key, self.app.get_key_display(binding), binding.description,
                                          binding.action, disabled=not enabled, tooltip=tooltip))
        palette = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE and palette is not None:
            binding = palette.binding
            yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                            classes="-command-palette", disabled=not palette.enabled,
                            tooltip=binding.tooltip or binding.description)

    async def on_resize(self, event: Resize) -> None:
        # What fits depends on the width: compose again when it changes.
        if self._bindings_ready and event.size.width != self._fitted_width:
            await self.recompose()
