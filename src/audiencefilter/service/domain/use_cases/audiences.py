"""Audiences: create, page through, read with their members, update, delete, and preview a
filter without saving it.

The rules of the specification refuse with its string-form errors (`AudienceRuleError`),
checked in this order: `name` and `listId` present, the list is the caller's (`NotFound`
otherwise), then the filters: both forms given, invalid, empty or missing for smart mode.
`filters` (a JSON string or object) or `filtersText` (text syntax) are read by the filter
library and stored as canonical JSON; a smart audience's members are stored
(`membership/store.py`).

A new or changed filter is read (and budgeted) and its members evaluated in read transactions
before the write, which only stores them (`membership/snapshot.py`): neither a large filter's
reading nor a large evaluation holds the list's writers, nor, on SQLite, the database's write
lock. Problems found that early are raised once the write has found the list or the audience,
so a 404 still comes first. The answer with `subs` is read after the commit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from .... import Filter
from ...db.engine import Database
from ...db.models import Audience, Contact, List
from ...db.queries import count, owned_audience, owned_list, page_of
from ...ground import clock
from ...ground.errors import (
    FILTERS_EMPTY,
    FILTERS_REQUIRED,
    NAME_AND_LIST_REQUIRED,
    AudienceRuleError,
    Conflict,
    NotFound,
)
from ...settings import Settings
from .. import (
    audience_names,
    audience_versions,
    custom_fields,
    experiments,
    list_lock,
    references,
    relations,
    write_effects,
)
from ..audience_filters import (
    ABSENT,
    EMPTY,
    LIST_REQUIRED,
    FilterInput,
    check_list_room,
    filters_as,
    read_filters,
    warnings_for,
)
from ..contact_pages import ContactPages, Paging
from ..events import CAUSE_AUDIENCE_UPDATED
from ..explanations import explain_contact
from ..list_filters import read_of_list
from ..membership import build, snapshot
from ..membership.build import Progress
from ..membership.members import (
    MANUAL,
    SMART,
    audience_filter,
    audience_sizes,
    filter_in_use,
    member_condition,
    member_test,
    stored_members,
)
from ..membership.snapshot import Snapshot
from . import membership_turns
from .unit import Page, Writes

R = TypeVar("R")


@dataclass(frozen=True)
class AudienceChange:
    """What a create or an update says of an audience; None: not sent. `cleared`: the update
    sent `filters` or `filtersText` as null (with neither given, the filters are emptied)."""

    name: str | None = None
    list_id: str | None = None
    mode: str | None = None
    filters: Any = None
    filters_text: str | None = None
    filters_format: str | None = None
    cleared: bool = False
    wait: bool = False
    experiment: experiments.Requested | None = None
    experiment_sent: bool = False  # an update named `experiment`, maybe as null
    key_id: str | None = None  # the API key making the change, kept with the version it makes
    restored_from: int | None = None  # the version a restore sends again


@dataclass(frozen=True)
class Subs:
    """The page of members an answer carries, and the format its filter is also shown in."""

    paging: Paging
    filters_as: str | None = None


@dataclass(frozen=True)
class Read:
    """An audience with a page of its members (`contacts`, `pagination`) and its filter in the
    format asked for (`shown`: `{"filtersAs": ...}` or nothing)."""

    audience: Audience
    contacts: list[dict[str, Any]]
    pagination: dict[str, int]
    shown: dict[str, Any]
    progress: Progress | None = None

    def warnings(self) -> list[dict[str, str]]:
        """Advice about its filter (a written audience's answer carries it)."""
        return warnings_for(audience_filter(self.audience))


@dataclass(frozen=True)
class Listed:
    """A page of a list's audiences, with the number of members of each."""

    page: Page[Audience]
    sizes: dict[str, int]
    progress: dict[str, Progress]


@dataclass(frozen=True)
class Preview:
    """What a filter selects now: a page of contacts, the filter read, why one contact is in
    or out (`explanation`, when asked), its other format and advice."""

    filter: Filter
    contacts: dict[str, Any]
    shown: dict[str, Any]
    warnings: list[dict[str, str]]
    explanation: dict[str, Any] | None


def _stored(mode: str, given: FilterInput, current: str | None) -> str | None:
    """The canonical filters to store after a change, enforcing the smart-mode rules."""
    if given.filter is not None:
        filters: str | None = given.canonical
    else:
        filters = None if given.given else current
    if mode == SMART:
        if given.empty:
            raise AudienceRuleError(FILTERS_EMPTY)
        if filters is None:
            raise AudienceRuleError(FILTERS_REQUIRED)
    return filters


def _stored_fields(given: FilterInput, current: str | None) -> str | None:
    """The custom fields read by the filter stored after a change (`_stored`'s twin)."""
    if given.filter is not None:
        return given.fields
    return None if given.given else current


Reading = tuple[dict[str, str], str]
"""What a list's filters are read with: its custom fields (key to type) and its time zone."""


def _reading(lst: List) -> Reading:
    return custom_fields.declared(lst), lst.timeZone


def _declared_early(database: Database, account_id: str, list_id: str) -> Reading:
    """The list's custom fields and zone, read before its lock to read a filter with (the
    write checks they did not change meanwhile); none when the list is not there: the write
    says so."""
    try:
        with database.reading() as session:
            return _reading(owned_list(session, account_id, list_id))
    except NotFound:
        return {}, "UTC"


def _read(change: AudienceChange, reading: Reading) -> FilterInput:
    """`null` for the filters of an update clears them (empty), where absence keeps them."""
    if change.cleared and change.filters is None and change.filters_text is None:
        return EMPTY
    declared, zone = reading
    return read_filters(
        change.filters, change.filters_text, declared, change.filters_format, zone=zone
    )


def _read_early(
    change: AudienceChange, reading: Reading
) -> tuple[FilterInput, AudienceRuleError | None]:
    """The filter read before any lock, or the problem to raise once the write found its list
    or audience."""
    try:
        return _read(change, reading), None
    except AudienceRuleError as exc:
        return ABSENT, exc


def _by_id_early(
    database: Database,
    find: Callable[[Session], List],
    read: tuple[FilterInput, AudienceRuleError | None],
) -> tuple[FilterInput, AudienceRuleError | None]:
    """The filter read before any lock with the audiences it names by name named by id
    (`audience_names.by_id`, as a preview reads it), or the problem to raise once the write
    found its list (`find`: the list, NotFound when it is not the account's)."""
    given, problem = read
    if problem is not None or not audience_names.names_audiences(given.filter):
        return read
    try:
        with database.reading() as session:
            lst = find(session)
            return audience_names.by_id(session, lst.id, given, _reading(lst)), None
    except NotFound:
        return read  # the write says so
    except AudienceRuleError as exc:
        return ABSENT, exc


def _evaluate_early(
    database: Database, account_id: str, list_id: str, mode: str, given: FilterInput
) -> Snapshot | None:
    """A new smart audience's members, evaluated before the write transaction; None when
    there is nothing to evaluate or the write will refuse the request anyway."""
    if mode != SMART or given.filter is None or given.canonical is None:
        return None
    try:
        with database.reading() as session:
            lst = owned_list(session, account_id, list_id)
    except NotFound:
        return None
    return snapshot.evaluate(database, lst.id, given.filter, given.canonical, given.fields)


def _in_background(database: Database, settings: Settings, list_id: str, wait: bool) -> bool:
    """Whether a smart audience of this list is built in the background (`build.py`):
    when its list holds more contacts than `audience_build_background_above`, unless the
    client asked to wait. The size is the bound, not a timer: the same request is answered
    the same way whatever the machine's load."""
    above = settings.audience_build_background_above
    if wait or not above:
        return False
    with database.reading() as session:
        return count(session, Contact, Contact.listId == list_id) > above


def _check_room(session: Session, settings: Settings, list_id: str) -> None:
    held = count(session, Audience, Audience.listId == list_id)
    if held >= settings.max_audiences_per_list:
        raise Conflict(f"A list holds at most {settings.max_audiences_per_list} audiences")


@dataclass(frozen=True)
class _New:
    """A creation as read before the write: its list, mode and filter, and the members
    evaluated early, or the filter's problem to raise once the list is found."""

    account_id: str
    list_id: str
    name: str
    mode: str
    given: FilterInput
    problem: AudienceRuleError | None
    evaluated: Snapshot | None
    background: bool = False
    experiment: experiments.Requested | None = None
    key_id: str | None = None


def _prepare(
    database: Database, settings: Settings, account_id: str, change: AudienceChange
) -> _New:
    if not change.name or not change.list_id:
        raise AudienceRuleError(NAME_AND_LIST_REQUIRED)
    list_id = change.list_id
    declared = _declared_early(database, account_id, list_id)
    given, problem = _by_id_early(
        database,
        lambda session: owned_list(session, account_id, list_id),
        _read_early(change, declared),
    )
    mode = change.mode or (SMART if given.given else MANUAL)
    evaluated, background = None, False
    if problem is None and mode == SMART and given.filter is not None:
        background = _in_background(database, settings, change.list_id, change.wait)
    if problem is None and not background:
        evaluated = _evaluate_early(database, account_id, change.list_id, mode, given)
    return _New(
        account_id,
        change.list_id,
        change.name,
        mode,
        given,
        problem,
        evaluated,
        background,
        change.experiment,
        change.key_id,
    )


def _insert(session: Session, settings: Settings, new: _New) -> str:
    """The write of a creation, under the list's lock; the new audience's id."""
    lst = list_lock.locked_list(session, new.account_id, new.list_id)
    if new.problem is not None:
        raise new.problem
    filters, fields = _stored(new.mode, new.given, None), _stored_fields(new.given, None)
    custom_fields.check_unchanged(lst, fields, filters is not None)
    _check_room(session, settings, lst.id)
    if new.given.filter is not None:
        check_list_room(session, lst.id, new.given, excluding=None)
    references.check(session, lst.id, None, filter_in_use(new.mode, filters, fields))
    experiment = experiments.read(new.experiment).to_json() if new.experiment else None
    audience = Audience(
        listId=lst.id,
        name=new.name,
        mode=new.mode,
        filters=filters,
        fields=fields,
        experiment=experiment,
    )
    session.add(audience)
    session.flush()
    audience_versions.record(session, audience, new.key_id)
    background = new.background and filter_in_use(new.mode, filters, fields) is not None
    write_effects.audience_created(session, audience, new.evaluated, background=background)
    return audience.id


def create(
    database: Database,
    settings: Settings,
    account_id: str,
    change: AudienceChange,
    writes: Writes[str, R],
) -> R:
    """A new audience; `writes` gets its id once committed (`read` answers it with members)."""
    new = _prepare(database, settings, account_id, change)
    return writes(lambda session: _insert(session, settings, new))


def read(
    database: Database, settings: Settings, account_id: str, audience_id: str, subs: Subs
) -> Read:
    """The audience, a page of its members (judged now) and its filter in the form asked for."""
    with database.reading() as session:
        audience, lst = owned_audience(session, account_id, audience_id)
        pages = ContactPages(session, lst, settings)
        where, counted, short = [member_condition(audience)], None, None
        if stored_members(audience):
            # Counted on its memberships alone, as the list of audiences counts its sizes: the
            # same number, without joining the members to the contacts (72 ms of a new
            # audience's answer at 200,000 contacts on PostgreSQL, 8 ms so). A large audience
            # is then paged by walking the list, not by sorting its members; sorted after all
            # when the walk meets its bound.
            members = audience_sizes(session, [audience])[audience.id]
            counted = lambda: members  # noqa: E731
            bound = pages.walk_bound(subs.paging, members)
            if bound is not None:
                where, short = [pages.first(bound, subs.paging), member_test(audience)], where
        result = pages.paged(where, subs.paging, counted, short)
        building = None
        if audience.mode == SMART:  # only a smart audience builds
            building = build.progress(session, [audience.id]).get(audience.id)
    shown = filters_as(audience_filter(audience), subs.filters_as)
    return Read(audience, result["contacts"], result["pagination"], shown, building)


def page(database: Database, account_id: str, list_id: str, number: int, limit: int) -> Listed:
    """The list's audiences, newest first, with their sizes."""
    with database.reading() as session:
        lst = owned_list(session, account_id, list_id)
        statement = (
            select(Audience)
            .where(Audience.listId == lst.id)
            .order_by(Audience.createdAt.desc(), Audience.id)
        )
        audiences = session.scalars(page_of(statement, number, limit)).all()
        total = count(session, Audience, Audience.listId == lst.id)
        building = build.progress(session, [a.id for a in audiences])
        return Listed(Page(audiences, total), audience_sizes(session, audiences), building)


@dataclass(frozen=True)
class _Changed:
    """An update as read before the write: its filter and the members evaluated early, or the
    filter's problem to raise once the audience is found."""

    account_id: str
    audience_id: str
    change: AudienceChange
    given: FilterInput
    problem: AudienceRuleError | None
    evaluated: Snapshot | None
    background: bool = False


def _read_update_early(
    database: Database, account_id: str, audience_id: str, change: AudienceChange
) -> tuple[FilterInput, AudienceRuleError | None]:
    """The update's filter read before any lock, with its list's custom fields."""
    reading: Reading = ({}, "UTC")
    try:
        with database.reading() as session:
            reading = _reading(owned_audience(session, account_id, audience_id)[1])
    except NotFound:
        pass
    return _by_id_early(
        database,
        lambda session: owned_audience(session, account_id, audience_id)[1],
        _read_early(change, reading),
    )


def _evaluate_update_early(
    database: Database, settings: Settings, new: _Changed
) -> tuple[Snapshot | None, bool]:
    """The members after an update that changes the filter in use, evaluated before the write
    transaction (None when the update leaves them alone or will be refused), and whether they
    are built in the background instead."""
    try:
        with database.reading() as session:
            audience, _ = owned_audience(session, new.account_id, new.audience_id)
        mode = new.change.mode or audience.mode
        filters = _stored(mode, new.given, audience.filters)
    except (NotFound, AudienceRuleError):
        return None, False
    fields = _stored_fields(new.given, audience.fields)
    flt = filter_in_use(mode, filters, fields)
    if flt is None or filters is None or (audience.mode, audience.filters) == (mode, filters):
        return None, False
    if _in_background(database, settings, audience.listId, new.change.wait):
        return None, True
    return snapshot.evaluate(database, audience.listId, flt, filters, fields), False


def _prepare_update(
    database: Database,
    settings: Settings,
    account_id: str,
    audience_id: str,
    change: AudienceChange,
) -> _Changed:
    given, problem = _read_update_early(database, account_id, audience_id, change)
    new = _Changed(account_id, audience_id, change, given, problem, None)
    if problem is not None:
        return new
    evaluated, background = _evaluate_update_early(database, settings, new)
    return _Changed(account_id, audience_id, change, given, problem, evaluated, background)


def _apply(session: Session, new: _Changed) -> bool:
    """The write of an update, under the list's lock; True when the new members are left to
    be stored in turns."""
    audience, lst = list_lock.locked_audience(session, new.account_id, new.audience_id)
    if new.problem is not None:
        raise new.problem
    _check_experiment(new.change, audience.experiment)
    mode = new.change.mode or audience.mode
    filters = _stored(mode, new.given, audience.filters)
    fields = _stored_fields(new.given, audience.fields)
    custom_fields.check_unchanged(lst, fields, filters is not None)
    if new.given.filter is not None:
        check_list_room(session, audience.listId, new.given, excluding=audience.id)
    references.check(session, audience.listId, audience.id, filter_in_use(mode, filters, fields))
    before = audience_versions.shape(audience)
    if new.change.name is not None:
        audience.name = new.change.name
    membership = (audience.mode, audience.filters) != (mode, filters)
    audience.mode = mode
    audience.filters, audience.fields = filters, fields
    session.flush()
    audience_versions.after_update(
        session, audience, before, new.change.key_id, new.change.restored_from
    )
    background = new.background and filter_in_use(mode, filters, fields) is not None
    return write_effects.audience_updated(
        session, audience, membership=membership, evaluated=new.evaluated, background=background
    )


def _check_experiment(change: AudienceChange, stored: str | None) -> None:
    """An update may repeat the audience's experiment, never change, add or end it."""
    if not change.experiment_sent:
        return
    if change.experiment is None:
        if stored is not None:
            raise experiments.fixed(stored)
        return
    experiments.read(change.experiment)  # a malformed one is a 400 first
    if not change.experiment.same_as(experiments.stored(stored)):
        raise experiments.fixed(stored)


def update(
    database: Database,
    settings: Settings,
    account_id: str,
    audience_id: str,
    change: AudienceChange,
    subs: Subs,
) -> Read:
    """The audience changed as sent; then read with its members, after the commit."""
    new = _prepare_update(database, settings, account_id, audience_id, change)
    with database.transaction() as session:
        in_turns = _apply(session, new)
    if in_turns and new.evaluated is not None:
        membership_turns.store(database, audience_id, new.evaluated, CAUSE_AUDIENCE_UPDATED)
        membership_turns.finish(database, audience_id, new.evaluated)
    return read(database, settings, account_id, audience_id, subs)


def remove(
    database: Database, account_id: str, audience_id: str
) -> tuple[Audience, int, Progress | None]:
    """Deletes the audience (refused while others' filters name it, and ending its build if
    one runs); it, its size and its build's progress then."""
    with database.transaction() as session:
        audience, _ = list_lock.locked_audience(session, account_id, audience_id)
        references.check_deletable(session, audience)
        size = audience_sizes(session, [audience])[audience_id]
        building = build.progress(session, [audience_id]).get(audience_id)
        write_effects.audience_deleting(session, audience)
        session.execute(
            delete(Audience)
            .where(Audience.id == audience_id)
            .execution_options(synchronize_session=False)
        )
    return audience, size, building


@dataclass(frozen=True)
class PreviewRequest:
    """A filter to try on a list, in either form; the page of contacts; a contact to explain."""

    list_id: str | None
    filters: Any
    filters_text: str | None
    filters_format: str | None
    explain: str | None
    subs: Subs


def preview(
    database: Database, settings: Settings, account_id: str, request: PreviewRequest
) -> Preview:
    """What the filter selects now, without saving anything."""
    if not request.list_id:
        raise AudienceRuleError(LIST_REQUIRED)
    with database.reading() as session:
        lst = owned_list(session, account_id, request.list_id)
        flt = read_of_list(
            session, lst, request.filters, request.filters_text, request.filters_format
        )
        now = clock.now()
        where = [relations.condition(flt, now)]
        found = ContactPages(session, lst, settings).paged(where, request.subs.paging)
        explanation = None
        if request.explain is not None:
            explanation = explain_contact(session, lst.id, flt, request.explain, now)
    shown = filters_as(flt, request.subs.filters_as)
    return Preview(flt, found, shown, warnings_for(flt), explanation)
