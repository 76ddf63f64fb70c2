"""A domain refusal's places as a response writes them: the domain gives a path in the
request's document (`RequestProblem`), `http/errors.py` the JSON pointer, escaped once."""

from __future__ import annotations

from audiencefilter.service.ground.errors import Conflict, Invalid, RequestProblem
from audiencefilter.service.http.errors import issue_of, refusal


def test_a_path_becomes_a_pointer_into_its_part_of_the_request() -> None:
    assert issue_of(RequestProblem(("contactIds", 3), "x")).pointer == "/body/contactIds/3"
    assert issue_of(RequestProblem(("at",), "x", part="query")).pointer == "/query/at"
    assert issue_of(RequestProblem(("data", "k"), "x"), within=()).pointer == "/data/k"


def test_a_key_is_escaped_once() -> None:
    """RFC 6901: `~` as `~0`, then `/` as `~1`; a key already holding `~1` keeps its `~`."""
    problem = RequestProblem(("data", "utm/source~1"), "x")
    assert issue_of(problem).pointer == "/body/data/utm~1source~01"


def test_the_rest_of_the_problem_is_kept_as_it_is() -> None:
    problem = RequestProblem(("increase",), "too big", expected="a", found="b", suggestion="c")
    issue = issue_of(problem)
    assert (issue.detail, issue.expected, issue.found, issue.suggestion) == (
        "too big",
        "a",
        "b",
        "c",
    )


def test_a_cited_message_goes_on_with_each_place_and_problem() -> None:
    problems = [RequestProblem(("publicFields", 0), "one"), RequestProblem(("data",), "two")]
    message, issues = refusal(
        Conflict("Not a custom field of this list", errors=problems, cited=True)
    )
    assert message == "Not a custom field of this list: /body/publicFields/0: one; /body/data: two"
    assert [issue.pointer for issue in issues] == ["/body/publicFields/0", "/body/data"]
    assert (
        refusal(Invalid("Invalid request: two", errors=problems[1:]))[0] == "Invalid request: two"
    )
