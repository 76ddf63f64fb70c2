"""Audiences: create, list, read, update, delete, and preview a filter without saving it.

The rules of the specification answer its string-form 400s, checked in this order: `name` and
`listId` present, the list is the caller's (404 otherwise), then the filters: both forms given,
invalid, empty or missing for smart mode. `filters` (a JSON string or object) or `filtersText`
(text syntax) are read by the filter library and stored as canonical JSON; a smart audience's
members are stored (`domain/membership/store.py`).

A new or changed filter's members are evaluated in a read transaction before the write, which
only stores them (`domain/membership/snapshot.py`); writes commit first and the response is
read afterwards in a read transaction: neither a large evaluation nor a large `subs` is
computed while the SQLite write lock is held.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import Audience
from ...db.queries import count, owned_audience, owned_list, page_of
from ...domain import changes, custom_fields, references, relations
from ...domain.audience_filters import (
    ABSENT,
    EMPTY,
    FILTERS_EMPTY,
    FILTERS_REQUIRED,
    LIST_REQUIRED,
    NAME_AND_LIST_REQUIRED,
    FilterInput,
    check_list_room,
    filters_as,
    read_filters,
    warnings_for,
)
from ...domain.explanations import explain_contact
from ...domain.membership import snapshot as membership_snapshot
from ...domain.membership.members import (
    MANUAL,
    SMART,
    audience_filter,
    audience_sizes,
    filter_in_use,
    member_condition,
)
from ...domain.membership.snapshot import Snapshot
from ...ground import clock
from ...ground.errors import AudienceRuleError, NotFound
from ...http.errors import ApiError
from ...http.idempotency import RetryDep, once_then
from ...http.responses import JSONResponse, data
from ...settings import Settings
from ..deps import DatabaseDep, PrivateKey, SettingsDep
from ..openapi import RULE_ERROR_RESPONSES
from ..pages import ContactPages
from ..schemas.audiences import (
    AudienceChangeResponse,
    AudienceCreate,
    AudienceListQuery,
    AudiencePreview,
    AudienceResponse,
    AudiencesResponse,
    AudienceUpdate,
    DeletedAudienceResponse,
    PreviewQuery,
    PreviewResponse,
    SubsQuery,
)
from ..schemas.views import audience_view, pagination

router = APIRouter(prefix="/audiences", tags=["audiences"])


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


def _declared_early(database: Database, account_id: str, list_id: str) -> dict[str, str]:
    """The list's custom fields, read before its lock to read a filter with (the write checks
    they did not change meanwhile); none when the list is not there: the write says so."""
    try:
        with database.reading() as session:
            return custom_fields.declared(owned_list(session, account_id, list_id))
    except NotFound:
        return {}


def _read_early(
    body: AudienceCreate, declared: dict[str, str]
) -> tuple[FilterInput, AudienceRuleError | None]:
    """The filter read before any lock, or the problem to raise once the list is known."""
    try:
        return read_filters(body.filters, body.filtersText, declared, body.filtersFormat), None
    except AudienceRuleError as exc:
        return ABSENT, exc


def _update_input(body: AudienceUpdate, declared: dict[str, str]) -> FilterInput:
    """`null` for the filters of an update clears them (empty), where absence keeps them."""
    cleared = {"filters", "filtersText"} & body.model_fields_set
    if cleared and body.filters is None and body.filtersText is None:
        return EMPTY
    return read_filters(body.filters, body.filtersText, declared, body.filtersFormat)


def _read_update_early(
    database: Database, account_id: str, audience_id: str, body: AudienceUpdate
) -> tuple[FilterInput, AudienceRuleError | None]:
    """The update's filter read before any lock, with its list's custom fields, or the
    problem to raise once the audience is known (a 404 comes first, as before)."""
    declared: dict[str, str] = {}
    try:
        with database.reading() as session:
            declared = custom_fields.declared(owned_audience(session, account_id, audience_id)[1])
    except NotFound:
        pass
    try:
        return _update_input(body, declared), None
    except AudienceRuleError as exc:
        return ABSENT, exc


def _evaluate_early(
    database: Database, account_id: str, list_id: str, mode: str, given: FilterInput
) -> Snapshot | None:
    """A new smart audience's members, evaluated before the write transaction so that its
    lock (on SQLite, the whole database's) is held only to store them
    (`domain/membership/snapshot.py`). None when there is nothing to evaluate or the write
    will refuse the request anyway: the write gives the answer."""
    if mode != SMART or given.filter is None or given.canonical is None:
        return None
    try:
        with database.reading() as session:
            lst = owned_list(session, account_id, list_id)
    except NotFound:
        return None
    return membership_snapshot.evaluate(database, lst.id, given.filter, given.canonical)


def _evaluate_update_early(
    database: Database, account_id: str, audience_id: str, body: AudienceUpdate, given: FilterInput
) -> Snapshot | None:
    """An audience's members after an update that changes its filter in use, evaluated before
    the write transaction; None when the update leaves them alone or will be refused."""
    try:
        with database.reading() as session:
            audience, _ = owned_audience(session, account_id, audience_id)
        mode = body.mode or audience.mode
        filters = _stored(mode, given, audience.filters)
    except (NotFound, AudienceRuleError):
        return None
    flt = filter_in_use(mode, filters, _stored_fields(given, audience.fields))
    if flt is None or filters is None or (audience.mode, audience.filters) == (mode, filters):
        return None
    return membership_snapshot.evaluate(database, audience.listId, flt, filters)


def _with_subs(
    database: Database, settings: Settings, account_id: str, audience_id: str, query: SubsQuery
) -> tuple[Audience, dict[str, Any]]:
    with database.reading() as session:
        audience, lst = owned_audience(session, account_id, audience_id)
        result = ContactPages(session, lst, settings).page(
            [member_condition(audience)],
            page=query.page,
            limit=query.limit,
            sort=query.sort,
            order=query.order,
        )
    shown = filters_as(audience_filter(audience), query.filtersAs)
    view = audience_view(audience, subs=result["contacts"], **shown)
    return audience, {"audience": view, "pagination": result["pagination"]}


def _check_room(session: Session, settings: Settings, list_id: str) -> None:
    held = count(session, Audience, Audience.listId == list_id)
    if held >= settings.max_audiences_per_list:
        raise ApiError(409, f"A list holds at most {settings.max_audiences_per_list} audiences")


@router.post(
    "",
    status_code=201,
    response_model=AudienceChangeResponse,
    summary="Create an audience",
    responses=RULE_ERROR_RESPONSES,
)
def create_audience(
    body: AudienceCreate,
    query: Annotated[SubsQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
    retry: RetryDep,
) -> Response:
    if not body.name or not body.listId:
        raise AudienceRuleError(NAME_AND_LIST_REQUIRED)
    name, list_id = body.name, body.listId

    # Read (and budget) the filter before the list's lock is taken: a large filter's reading
    # holds no writer of the list, nor, on SQLite, of the database.
    # The list is still checked first: a filter's problem is raised after it, as before.
    given, problem = _read_early(body, _declared_early(database, principal.account_id, list_id))
    mode = body.mode or (SMART if given.given else MANUAL)
    # Its members too: the list's contacts are judged in a read transaction, and the write
    # only stores the answer and judges again the contacts written meanwhile.
    evaluated = (
        None if problem else _evaluate_early(database, principal.account_id, list_id, mode, given)
    )

    def create(session: Session) -> str:
        lst = changes.locked_list(session, principal.account_id, list_id)
        if problem is not None:
            raise problem
        filters, fields = _stored(mode, given, None), _stored_fields(given, None)
        custom_fields.check_unchanged(lst, fields)
        _check_room(session, settings, lst.id)
        if given.filter is not None:
            check_list_room(session, lst.id, given, excluding=None)
        references.check(session, lst.id, None, filter_in_use(mode, filters, fields))
        audience = Audience(listId=lst.id, name=name, mode=mode, filters=filters, fields=fields)
        session.add(audience)
        session.flush()
        changes.audience_created(session, audience, evaluated)
        return audience.id

    def respond(audience_id: str) -> Response:
        audience, payload = _with_subs(database, settings, principal.account_id, audience_id, query)
        payload["warnings"] = warnings_for(audience_filter(audience))
        return data(payload, 201)

    return once_then(database, retry.claim(principal.account_id, body), create, respond)


@router.get("", response_model=AudiencesResponse, summary="List the audiences of a list")
def list_audiences(
    query: Annotated[AudienceListQuery, Query()], principal: PrivateKey, database: DatabaseDep
) -> JSONResponse:
    with database.reading() as session:
        lst = owned_list(session, principal.account_id, query.listId)
        statement = (
            select(Audience)
            .where(Audience.listId == lst.id)
            .order_by(Audience.createdAt.desc(), Audience.id)
        )
        audiences = session.scalars(page_of(statement, query.page, query.limit)).all()
        total = count(session, Audience, Audience.listId == lst.id)
        sizes = audience_sizes(session, audiences)
    return data(
        {
            "audiences": [audience_view(a, subsCount=sizes[a.id]) for a in audiences],
            "pagination": pagination(total, query.page, query.limit),
        }
    )


@router.post(
    "/preview",
    response_model=PreviewResponse,
    summary="Preview a smart audience without saving it",
    description="The number of contacts a filter selects now and a page of them (100 by "
    "default), for audience builders.",
    responses=RULE_ERROR_RESPONSES,
)
def preview_audience(
    body: AudiencePreview,
    query: Annotated[PreviewQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    if not body.listId:
        raise AudienceRuleError(LIST_REQUIRED)
    with database.reading() as session:
        lst = owned_list(session, principal.account_id, body.listId)
        declared = custom_fields.declared(lst)
        flt = read_filters(body.filters, body.filtersText, declared, body.filtersFormat)
        if flt.empty:
            raise AudienceRuleError(FILTERS_EMPTY)
        if flt.filter is None:
            raise AudienceRuleError(FILTERS_REQUIRED)
        now = clock.now()
        result = ContactPages(session, lst, settings).page(
            [relations.condition(flt.filter, now)],
            page=query.page,
            limit=query.limit,
            sort=query.sort,
            order=query.order,
        )
        explanation = None
        if body.explainContactId is not None:
            explanation = explain_contact(session, lst.id, flt.filter, body.explainContactId, now)
    return data(
        {
            "count": result["pagination"]["total"],
            **result,
            "filters": flt.filter.to_json(),
            "filtersText": flt.filter.to_text(),
            **filters_as(flt.filter, query.filtersAs),
            "warnings": warnings_for(flt.filter),
            "explanation": explanation,
        }
    )


@router.get(
    "/{id}",
    response_model=AudienceResponse,
    summary="Retrieve an audience and its contacts",
    description="`subs` lists the contacts in the audience now, by default all of them (up to "
    "20000); `limit`, `page`, `sort` and `order` page through them like the contacts listing.",
)
def get_audience(
    id: str,
    query: Annotated[SubsQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    _, payload = _with_subs(database, settings, principal.account_id, id, query)
    return data(payload)


@router.patch(
    "/{id}",
    response_model=AudienceChangeResponse,
    summary="Update an audience",
    responses=RULE_ERROR_RESPONSES,
)
def update_audience(
    id: str,
    body: AudienceUpdate,
    query: Annotated[SubsQuery, Query()],
    principal: PrivateKey,
    database: DatabaseDep,
    settings: SettingsDep,
) -> JSONResponse:
    given, problem = _read_update_early(database, principal.account_id, id, body)
    evaluated = None
    if problem is None:
        evaluated = _evaluate_update_early(database, principal.account_id, id, body, given)
    with database.transaction() as session:
        audience, lst = changes.locked_audience(session, principal.account_id, id)
        if problem is not None:
            raise problem
        mode = body.mode or audience.mode
        filters = _stored(mode, given, audience.filters)
        fields = _stored_fields(given, audience.fields)
        custom_fields.check_unchanged(lst, fields)
        if given.filter is not None:
            check_list_room(session, audience.listId, given, excluding=audience.id)
        in_use = filter_in_use(mode, filters, fields)
        references.check(session, audience.listId, audience.id, in_use)
        if body.name is not None:
            audience.name = body.name
        membership = (audience.mode, audience.filters) != (mode, filters)
        audience.mode = mode
        audience.filters, audience.fields = filters, fields
        session.flush()
        changes.audience_updated(session, audience, membership=membership, evaluated=evaluated)
    audience, payload = _with_subs(database, settings, principal.account_id, id, query)
    payload["warnings"] = warnings_for(audience_filter(audience))
    return data(payload)


@router.delete("/{id}", response_model=DeletedAudienceResponse, summary="Delete an audience")
def delete_audience(id: str, principal: PrivateKey, database: DatabaseDep) -> JSONResponse:
    with database.transaction() as session:
        audience, _ = changes.locked_audience(session, principal.account_id, id)
        references.check_deletable(session, audience)
        view = audience_view(audience, subsCount=audience_sizes(session, [audience])[id])
        changes.audience_deleting(session, audience)
        session.execute(
            delete(Audience).where(Audience.id == id).execution_options(synchronize_session=False)
        )
    return data({"audience": view})
