"""Filter budgets: what one audience, one list and one request may ask of the database and the CPU.

The library's limits (10,000 conditions, 10,000 values per array, depth 32) bound what it can
parse; they do not say what an engine can run. SQLite reads `a OR b OR c ...` as a left-deep tree
and refuses an expression deeper than 1,000, every engine caps the bound parameters of one
statement (SQLite 32,766), and each page of contacts runs every smart filter of the list on every
row in memory. So the service decides when a filter arrives (audience create and update,
`GET /v4/contacts?filters=`), never when it is read: a filter that fits its budget runs on every
supported engine, and a stored one never turns a read into an error.

The cost of a filter is the library's (`Filter.cost`, one walker over the tree, beside the
writers whose output it prices); of its measures the budgets read three:
- `conditions`: nodes of the tree, what the in-memory predicate visits per contact;
- `values`: items of `in`/`notIn` arrays plus JSON path steps, an upper bound of the bound
  parameters beyond one per condition;
- `depth`: the nesting of the SQL expression (an n-ary AND/OR of k items counts k levels).

Budgets per filter bound one statement (and, with `ANALYSIS_STEPS`, the CPU of comparing two
filters); budgets per list (the sum over its audiences' stored
filters, smart or not, since a manual audience may become smart by a PATCH that sends no filter)
bound the statement that counts every audience of a list and the CPU of one page of contacts.
"""

from __future__ import annotations

from ... import Cost, Filter
from ..ground.errors import AudienceRuleError

MAX_CONDITIONS = 500
MAX_VALUES = 5_000
MAX_SQL_DEPTH = 300
# A write judges only the audiences reading what it changed, and a page reads stored
# memberships: what bounds a list now is the filters that change with time alone, which every
# page runs on each of its rows (LIST_MAX_LIVE_CONDITIONS), and the values bound per statement.
LIST_MAX_CONDITIONS = 50_000
LIST_MAX_LIVE_CONDITIONS = 2_000
LIST_MAX_VALUES = 100_000
# The CPU of one compare: the library's algebra is bounded in steps by construction (each step
# a few microseconds, docs/algebra.md "Bounded"); a compare asks five questions (its relation
# three, `canMatch` one per side), each given its share, so a compare of any two filters within
# MAX_CONDITIONS ends within ANALYSIS_STEPS, its answer `unknown` past them.
ANALYSIS_STEPS = 120_000
QUESTIONS_PER_COMPARE = 5
QUESTION_STEPS = ANALYSIS_STEPS // QUESTIONS_PER_COMPARE

FILTER_TOO_LARGE = "Filters exceed the service's budget for one filter"
LIST_TOO_LARGE = "Filters exceed the service's budget for the audiences of one list"
NOTHING = Cost(0, 0, 0)


def cost_of(flt: Filter) -> Cost:
    """The filter's cost as the library estimates it (`Filter.cost`)."""
    return flt.cost()


def check_filter(flt: Filter) -> Cost:
    """The filter's cost; raises `AudienceRuleError` (a 400) naming each budget it exceeds."""
    cost = cost_of(flt)
    details = []
    where = cost.widest or "(the whole filter)"
    if cost.depth > MAX_SQL_DEPTH:
        details.append(
            _detail(
                where,
                f"the SQL expression would nest {cost.depth} levels deep; the budget is "
                f"{MAX_SQL_DEPTH} (an AND/OR of k items counts k levels)",
                "write a long OR of equalities on one field as `in`, or split the group",
            )
        )
    if cost.conditions > MAX_CONDITIONS:
        details.append(
            _detail(
                "(the whole filter)",
                f"{cost.conditions} conditions and groups; the budget is {MAX_CONDITIONS}",
                "merge equalities on one field into `in`, or split the audience",
            )
        )
    if cost.values > MAX_VALUES:
        details.append(
            _detail(
                "(the whole filter)",
                f"{cost.values} values in `in`/`notIn` arrays; the budget is {MAX_VALUES}",
                "keep such long lists as a manual audience (POST /audiences/{id}/members)",
            )
        )
    if details:
        raise AudienceRuleError(FILTER_TOO_LARGE, details)
    return cost


def check_list(others: Cost, new: Cost, live_others: int = 0, live_new: int = 0) -> None:
    """Refuse a filter that would take its list's audiences past the budget per list;
    `live_*`: the conditions of filters that change with time alone (run on every page)."""
    total = others + new
    details = _live_details(live_others, live_new)
    if total.conditions > LIST_MAX_CONDITIONS:
        details.append(
            _detail(
                "(the list's audiences)",
                f"{total.conditions} conditions and groups over the list's audiences with this "
                f"filter ({others.conditions} without it); the budget is {LIST_MAX_CONDITIONS}",
                "simplify or delete other audiences of the list",
            )
        )
    if total.values > LIST_MAX_VALUES:
        details.append(
            _detail(
                "(the list's audiences)",
                f"{total.values} `in`/`notIn` values over the list's audiences with this filter "
                f"({others.values} without it); the budget is {LIST_MAX_VALUES}",
                "keep long lists of contacts as manual audiences",
            )
        )
    if details:
        raise AudienceRuleError(LIST_TOO_LARGE, details)


def _live_details(others: int, new: int) -> list[dict[str, str]]:
    if others + new <= LIST_MAX_LIVE_CONDITIONS:
        return []
    return [
        _detail(
            "(the list's audiences)",
            f"{others + new} conditions in filters that change with time alone (relative "
            f"dates), which every page of contacts runs on each row ({others} without this "
            f"filter); the budget is {LIST_MAX_LIVE_CONDITIONS}",
            "use absolute dates where the audience allows, or delete other such audiences",
        )
    ]


def _detail(path: str, message: str, suggestion: str) -> dict[str, str]:
    return {"path": path, "message": message, "suggestion": suggestion}
