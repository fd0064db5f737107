"""Parsed stylesheets kept between runs (agentcli/tui/css_cache.py) draw exactly what parsing does.

The app is drawn three times with the same session: parsing afresh, with an empty cache (which
it fills and saves after start-up) and with that cache; the three screens must be identical,
and the third must have parsed nothing. Then what must not be reused: other CSS variables (a
theme), a source with an error, a file that cannot be read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.color import Color
from textual.css.stylesheet import StylesheetParseError

from agentcli.llm.replay import ReplayModel
from agentcli.tui.app import AgentApp
from agentcli.tui.css_cache import CachedStylesheet, ParseCache
from tests.tui.helpers import make_app, make_session, recording, screen_settled, wait_for

DONE = recording(("Done.", [("complete", {"summary": "ok"})]))


class Parses:
    """Counts what Textual itself tokenizes (a cache miss) during one app run."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = CachedStylesheet.__mro__[1]._parse_rules  # Textual's Stylesheet._parse_rules

        def counted(stylesheet, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.count += 1
            return original(stylesheet, *args, **kwargs)

        monkeypatch.setattr(CachedStylesheet.__mro__[1], "_parse_rules", counted)


async def screen_of(project: Path, cache: ParseCache | None, size: tuple[int, int]) -> str:
    app = make_app(project, make_session(project, ReplayModel(DONE)), css_cache=cache)
    async with app.run_test(size=size) as pilot:
        app.prompt.input.cursor_blink = False
        await wait_for(pilot, lambda: screen_settled(app) and app.prompt.history is not None, what="the session")
        await pilot.pause()
        assert isinstance(app, AgentApp)
        return app.export_screenshot()


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_a_cached_stylesheet_draws_the_same_screen(project: Path, tmp_path: Path, size: tuple[int, int],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    parses = Parses(monkeypatch)
    parsed = await screen_of(project, None, size)
    assert parses.count > 0

    first = ParseCache(tmp_path / "css")
    filled = await screen_of(project, first, size)
    assert list((tmp_path / "css").glob("*.pickle")), "the cache was not saved after start-up"

    parses.count = 0
    second = ParseCache(tmp_path / "css")
    cached = await screen_of(project, second, size)
    assert parses.count == 0, "a source was parsed again with a warm cache"
    assert second.hits > 0
    assert filled == parsed
    assert cached == parsed


def test_other_variables_are_parsed_afresh_and_kept_apart(tmp_path: Path) -> None:
    css = "Static { color: $accent; }"
    dark, light = {"accent": "#ff0000"}, {"accent": "#0000ff"}
    cache = ParseCache(tmp_path)
    red = CachedStylesheet(cache, variables=dark)
    red.add_source(css, read_from=("test", "css"))
    red.parse()
    cache.save()

    again = ParseCache(tmp_path)
    blue = CachedStylesheet(again, variables=light)
    blue.add_source(css, read_from=("test", "css"))
    blue.parse()
    assert again.hits == 0
    [rule] = blue.rules
    assert rule.styles.color.hex == "#0000FF"

    again_dark = ParseCache(tmp_path)
    red_again = CachedStylesheet(again_dark, variables=dark)
    red_again.add_source(css, read_from=("test", "css"))
    red_again.parse()
    assert again_dark.hits == 1
    [rule] = red_again.rules
    assert rule.styles.color.hex == "#FF0000"


def test_a_source_with_an_error_is_never_kept(tmp_path: Path) -> None:
    for _ in range(2):
        cache = ParseCache(tmp_path)
        stylesheet = CachedStylesheet(cache, variables={})
        stylesheet.add_source("Static { colour: red; }", read_from=("test", "bad"))
        with pytest.raises(StylesheetParseError):
            stylesheet.parse()
        assert cache.hits == 0
        assert cache.save() is None  # nothing new to keep


def test_a_file_that_cannot_be_read_is_replaced(tmp_path: Path) -> None:
    cache = ParseCache(tmp_path)
    stylesheet = CachedStylesheet(cache, variables={})
    stylesheet.add_source("Static { color: red; }", read_from=("test", "css"))
    stylesheet.parse()
    path = cache.save()
    assert path is not None
    path.write_bytes(b"not a pickle")

    broken = ParseCache(tmp_path)
    stylesheet = CachedStylesheet(broken, variables={})
    stylesheet.add_source("Static { color: red; }", read_from=("test", "css"))
    stylesheet.parse()
    assert broken.hits == 0 and len(stylesheet.rules) == 1
    assert broken.save() == path
    assert ParseCache(tmp_path).get(("Static { color: red; }", ("test", "css"), False, 0, ""), {}) is not None


def test_a_source_no_longer_used_is_dropped_when_the_file_is_written(tmp_path: Path) -> None:
    def run(*sources: str) -> ParseCache:
        cache = ParseCache(tmp_path)
        stylesheet = CachedStylesheet(cache, variables={})
        for number, css in enumerate(sources):
            stylesheet.add_source(css, read_from=("test", str(number)))
        stylesheet.parse()
        cache.save()
        return cache

    old, new = "Static { color: red; }", "Static { color: blue; }"
    run(old)
    run(new)  # app.tcss edited: the old text is not used any more
    assert ParseCache(tmp_path).get((old, ("test", "0"), False, 0, ""), {}) is None
    assert ParseCache(tmp_path).get((new, ("test", "0"), False, 0, ""), {}) is not None


def styles_of(app: AgentApp) -> list[tuple[str, str | None, str, str]]:
    """Every widget's rules as applied and its resolved colours (no rendering involved)."""
    return [(type(node).__name__, node.id, node.styles.base.css, str(node.rich_style)) for node in app.query("*")]


async def test_a_theme_switched_at_run_time_looks_as_without_the_cache(project: Path, tmp_path: Path) -> None:
    async def switched(cache: ParseCache | None) -> tuple[list[tuple[str, str | None, str, str]], ...]:
        app = make_app(project, make_session(project, ReplayModel(DONE)), css_cache=cache, remember_themes=False)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: screen_settled(app) and app.prompt.history is not None, what="the session")
            dark = styles_of(app)
            light = app.get_theme("agentcli-light")
            assert light is not None and light.background is not None
            app.switch_theme("agentcli-light")
            # Textual restyles every widget in one go once the theme's CSS is parsed again.
            await wait_for(pilot, lambda: app.screen.styles.background.hex == Color.parse(light.background).hex,
                           what="the light theme applied")
            return dark, styles_of(app)

    plain = await switched(None)
    assert plain[0] != plain[1], "the switch changed nothing to compare"
    await switched(ParseCache(tmp_path / "css"))  # fills the cache
    assert await switched(ParseCache(tmp_path / "css")) == plain
