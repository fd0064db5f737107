"""The `[progress]` table: defaults, validation and the errors a user reads."""

from __future__ import annotations

import tomllib

import pytest
from pydantic import ValidationError

from agentcli.progress import ProgressConfig


def test_the_defaults_match_the_issue() -> None:
    config = ProgressConfig()

    assert config.same_error_repeats == 3
    assert config.identical_call_repeats == 3
    assert (config.cycle_min_len, config.cycle_max_len) == (2, 5)
    assert config.no_progress_window == 10
    assert (config.recent_actions, config.recent_errors) == (20, 10)
    assert config.summary_every == 10


def test_a_progress_table_loads_from_toml() -> None:
    table = tomllib.loads(
        """
        [progress]
        same_error_repeats = 4
        disabled_rules = ["checks_stalled"]
        """
    )["progress"]

    config = ProgressConfig.model_validate(table)

    assert config.same_error_repeats == 4
    assert config.disabled_rules == frozenset({"checks_stalled"})
    assert not config.rule_enabled("checks_stalled")
    assert config.rule_enabled("cycle")


def test_a_misspelt_key_is_rejected_by_name() -> None:
    with pytest.raises(ValidationError, match="same_eror_repeats"):
        ProgressConfig.model_validate({"same_eror_repeats": 4})


def test_an_unknown_rule_is_rejected() -> None:
    with pytest.raises(ValidationError, match="disabled_rules"):
        ProgressConfig.model_validate({"disabled_rules": ["loops"]})


def test_a_threshold_that_would_flag_every_call_is_rejected() -> None:
    with pytest.raises(ValidationError, match="same_error_repeats"):
        ProgressConfig(same_error_repeats=1)


def test_an_empty_cycle_range_is_explained() -> None:
    with pytest.raises(ValidationError, match="cycle_max_len \\(3\\) is smaller than progress.cycle_min_len \\(4\\)"):
        ProgressConfig(cycle_min_len=4, cycle_max_len=3)


def test_a_window_too_small_for_its_repeats_is_explained() -> None:
    with pytest.raises(ValidationError, match="could never fire"):
        ProgressConfig(identical_call_repeats=5, identical_call_window=4)


def test_field_docs_reach_the_schema() -> None:
    schema = ProgressConfig.model_json_schema()

    assert "same error" in schema["properties"]["same_error_repeats"]["description"]
