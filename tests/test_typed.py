"""lib.io.typed: numbers typed by a user, one parser for the command line and the pages."""

from __future__ import annotations

import pytest

from lib.errors import SettingsError
from lib.io.typed import whole_numbers
from lib.planning.grid import parse_counts
from lib.selection.curve import parse_k_grid


def test_whole_numbers_keep_the_given_order_and_drop_repeats_and_blanks():
    assert whole_numbers(" 50, 25,,50 ,100", "--prompts") == [50, 25, 100]
    assert whole_numbers("", "--prompts") == []


@pytest.mark.parametrize("text", ["5, ten", "2.5", "1;2"])
def test_text_that_is_not_whole_numbers_names_the_field(text):
    with pytest.raises(SettingsError, match=r"--annotators must be whole numbers separated by commas"):
        whole_numbers(text, "--annotators")


def test_the_plan_and_selection_parsers_share_it_and_keep_their_own_rules():
    assert parse_counts("50,25", "--prompts") == [50, 25]  # the plan keeps the order given
    assert parse_k_grid("10, 5, 10", 20).tolist() == [5, 10]  # k values are sorted
    with pytest.raises(SettingsError, match="k values must be whole numbers"):
        parse_k_grid("5,x", 20)
    with pytest.raises(SettingsError, match="at least 1"):
        parse_counts("0,5", "--prompts")
