"""One pydantic error formatter (pqlab.validation) for params, deployments, input tables and metrics: the path, the
message without pydantic's prefix, the value given unless the message shows it."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import AfterValidator, BaseModel, Field, ValidationError

from pqlab.validation import dotted, first_problem


def _refuse(value):
    raise ValueError(f"{value!r} is not a scheme")


class Inner(BaseModel):
    runs: int = Field(ge=1)
    name: Annotated[str, AfterValidator(_refuse)] | None = None


class Outer(BaseModel):
    inner: list[Inner]
    table: dict[str, int] = {}


def _problem(data):
    with pytest.raises(ValidationError) as caught:
        Outer.model_validate(data)
    return first_problem(caught.value)


def test_a_range_error_names_the_path_and_the_value_given():
    problem = _problem({"inner": [{"runs": 1}, {"runs": 0}]})
    assert problem.line() == "inner[1].runs: Input should be greater than or equal to 1 (got 0)"
    assert problem.line("params.yaml: x") == "params.yaml: x: Input should be greater than or equal to 1 (got 0)"


def test_a_validators_message_is_its_own_without_the_prefix_or_the_value_again():
    problem = _problem({"inner": [{"runs": 1, "name": "ML-DSA-99"}]})
    assert problem.loc == ("inner", 0, "name")  # pydantic's "function-after[...]" step is not a field
    assert problem.line() == "inner[0].name: 'ML-DSA-99' is not a scheme"


def test_a_missing_field_shows_no_value_and_the_count_of_errors():
    problem = _problem({"inner": [{}], "table": {"a": "x"}})
    assert problem.line() == "inner[0].runs: Field required" and problem.count == 2


def test_paths_stay_on_one_line_and_short():
    assert dotted(("transport", "scenarios", "bad\nname", "[key]")) == "transport.scenarios.'bad\\nname' (the name)"
    long = dotted(("section", "x" * 200))
    assert long.startswith("section.'xxx") and long.endswith("...") and len(long) == len("section.") + 80
