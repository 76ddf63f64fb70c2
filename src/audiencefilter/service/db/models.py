"""ORM tables of the service (SQLAlchemy 2 declarative, typed `Mapped` attributes).

Resource tables name their attributes exactly like the interface's JSON fields (`firstName`,
`isGDPR`, ...) so that a filter compiled by `Filter.to_sqlalchemy(Contact)` finds the columns by
the names users write. The database columns keep snake_case names, which read naturally in SQL.

Ids are short random strings with a type prefix (`con_...`), so a log line says what it names.
Timestamps are set in Python, in UTC, with microseconds: sign-up order decides waitlist positions,
and SQLite's `CURRENT_TIMESTAMP` has only whole seconds.

Deleting a list deletes its contacts, audiences and actions through `ON DELETE CASCADE`; the ORM
defines no relationships, so nothing loads rows behind a query's back.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy import false as sql_false
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from ..ground import clock
from ..ground.fields import DEFAULT_PUBLIC_FIELDS

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
ID_LENGTH = 32
SHORT_TEXT = 255


class JsonDocument(TypeDecorator[Any]):
    """A JSON column whose value changes when its JSON does: SQLAlchemy writes a changed
    attribute only if the new value is not `==` the old one, and Python's `==` holds between
    `{"optin": true}` and `{"optin": 1}` (`True == 1`), which a filter tells apart. Compared as
    JSON text, a contact's `data` set from `true` to `1` is written, as it is by an import."""

    impl = JSON
    cache_ok = True

    def compare_values(self, x: Any, y: Any) -> bool:
        return json_text(x) == json_text(y)


def json_text(value: Any) -> str:
    """A JSON value as text with sorted keys: equal exactly when the values are the same JSON
    (`1`, `1.0` and `true` three values)."""
    return json.dumps(value, sort_keys=True)


def utcnow() -> datetime:
    """Now on the service's clock (`ground/clock.py`), which tests may stop and move."""
    return clock.now()


REFERRAL_FIRST = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def new_referral_code() -> str:
    """A contact's referral code: 72 random bits, URL-safe, never starting with `-` (nor `=`,
    `+`, `@`), the start a spreadsheet reads as a formula: a code pasted into one, or written
    by an export, stays the text it is."""
    code = secrets.token_urlsafe(9)
    return code if code[0] in REFERRAL_FIRST else secrets.choice(REFERRAL_FIRST) + code[1:]


def new_id(prefix: str) -> str:
    """A random identifier: a type prefix and 20 hex characters (80 bits)."""
    return f"{prefix}_{secrets.token_hex(10)}"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def _id(prefix: str) -> Mapped[str]:
    return mapped_column(String(ID_LENGTH), primary_key=True, default=lambda: new_id(prefix))


def _created() -> Mapped[datetime]:
    return mapped_column("created_at", DateTime(timezone=True), default=utcnow, nullable=False)


def _updated() -> Mapped[datetime]:
    return mapped_column(
        "updated_at", DateTime(timezone=True), default=utcnow, onupdate=utcnow, nullable=False
    )


def _text(column: str, length: int = SHORT_TEXT) -> Mapped[str | None]:
    return mapped_column(column, String(length), nullable=True)


def _owner(column: str, target: str, *, index: bool = True) -> Mapped[str]:
    return mapped_column(
        column,
        String(ID_LENGTH),
        ForeignKey(target, ondelete="CASCADE"),
        nullable=False,
        index=index,
    )


class Account(Base):
    """A tenant: it owns lists and keys; rate limits count per account."""

    __tablename__ = "accounts"

    id: Mapped[str] = _id("acc")
    name: Mapped[str] = mapped_column(String(SHORT_TEXT), nullable=False, unique=True)
    plan: Mapped[str] = mapped_column(String(16), nullable=False, default="free")
    createdAt: Mapped[datetime] = _created()


class ApiKey(Base):
    """One API key: only its SHA-256 digest and a display prefix are kept."""

    __tablename__ = "api_keys"

    id: Mapped[str] = _id("key")
    accountId: Mapped[str] = _owner("account_id", "accounts.id")
    type: Mapped[str] = mapped_column(String(16), nullable=False)
    digest: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)
    prefix: Mapped[str] = mapped_column(String(32), nullable=False)
    label: Mapped[str | None] = _text("label", 100)
    """What the key is for, as its operator named it (`crm-sync`), shown where it acted."""
    disabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    expiresAt: Mapped[datetime | None] = mapped_column(
        "expires_at", DateTime(timezone=True), nullable=True
    )
    createdAt: Mapped[datetime] = _created()


class List(Base):
    """A list (project): branding, sender and page settings; it holds contacts and audiences."""

    __tablename__ = "lists"

    id: Mapped[str] = _id("lst")
    accountId: Mapped[str] = _owner("account_id", "accounts.id")
    url: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)
    name: Mapped[str] = mapped_column(String(SHORT_TEXT), nullable=False)
    mode: Mapped[str] = mapped_column(String(32), nullable=False, default="waitlist")
    color: Mapped[str | None] = _text("color", 7)
    title: Mapped[str | None] = _text("title")
    desc: Mapped[str | None] = _text("description", 2000)
    socialDescription: Mapped[str | None] = _text("social_description", 2000)
    branding: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    referrals: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    startFrom: Mapped[int] = mapped_column("start_from", Integer, nullable=False, default=1)
    senderName: Mapped[str | None] = _text("sender_name")
    replyTo: Mapped[str | None] = _text("reply_to")
    sender: Mapped[str | None] = _text("sender")
    legal: Mapped[str | None] = mapped_column("legal", Text, nullable=True)
    domainId: Mapped[str | None] = _text("domain_id", 64)
    defaultPageId: Mapped[str | None] = _text("default_page_id", 64)
    referralPageId: Mapped[str | None] = _text("referral_page_id", 64)
    successPageId: Mapped[str | None] = _text("success_page_id", 64)
    listSettingsId: Mapped[str | None] = _text("list_settings_id", 64)
    whitelistEmailId: Mapped[str | None] = _text("whitelist_email_id", 64)
    templateId: Mapped[str | None] = _text("template_id", 64)
    themeId: Mapped[str | None] = _text("theme_id", 64)
    icon: Mapped[str | None] = _text("icon", 2048)
    favicon: Mapped[str | None] = _text("favicon", 2048)
    ogImage: Mapped[str | None] = _text("og_image", 2048)
    columns: Mapped[list[str]] = mapped_column("columns", JSON, nullable=False, default=list)
    customHeadCode: Mapped[str | None] = mapped_column("custom_head_code", Text, nullable=True)
    customBodyCode: Mapped[str | None] = mapped_column("custom_body_code", Text, nullable=True)
    analyticsA: Mapped[str | None] = _text("analytics_a")
    analyticsB: Mapped[str | None] = _text("analytics_b")
    allowedOrigins: Mapped[list[str]] = mapped_column(
        "allowed_origins", JSON, nullable=False, default=list, server_default="[]"
    )
    # What a public key's sign-up may set besides `email`, and what happens to anything else.
    publicFields: Mapped[list[str]] = mapped_column(
        "public_fields",
        JSON,
        nullable=False,
        default=lambda: list(DEFAULT_PUBLIC_FIELDS),
        server_default=json.dumps(list(DEFAULT_PUBLIC_FIELDS)),
    )
    publicFieldsPolicy: Mapped[str] = mapped_column(
        "public_fields_policy",
        String(16),
        nullable=False,
        default="refuse",
        server_default="refuse",
    )
    # The list's custom fields, kept in each contact's `data`: [{"key", "type", "label"}].
    customFields: Mapped[list[dict[str, str]]] = mapped_column(
        "custom_fields", JSON, nullable=False, default=list, server_default="[]"
    )
    # New at each change of the list's audiences: processes key what they prepared of them
    # (`domain/membership/plan.py`) by it, so a write reads one row instead of every audience.
    audiencesStamp: Mapped[str] = mapped_column(
        "audiences_stamp", String(32), nullable=False, default="", server_default=""
    )
    # The IANA zone the list's calendar rules are read in when they name none (migration 0014).
    timeZone: Mapped[str] = mapped_column(
        "time_zone", String(64), nullable=False, default="UTC", server_default="UTC"
    )
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()


class Contact(Base):
    """A subscriber of one list; attribute names are the interface's (and the filters') names."""

    __tablename__ = "contacts"
    __table_args__ = (
        # Email is unique per list ignoring case; `emailKey` holds Python's `str.lower()` of it,
        # the one case folding every back-end of the filter library uses.
        UniqueConstraint("list_id", "email_key"),
        # Covers the waitlist rank (points, sign-up time, id): see ranking.py.
        Index("ix_contacts_list_rank", "list_id", "points", "created_at", "id"),
        # The list in id order: its first contacts are a uniform random sample of it (ids are
        # random), on which an estimate evaluates a filter (`use_cases/estimates.py`).
        Index("ix_contacts_list_sample", "list_id", "id"),
    )

    id: Mapped[str] = _id("con")
    # No index of its own: the unique (list_id, email_key) and the rank index both lead with it.
    listId: Mapped[str] = _owner("list_id", "lists.id", index=False)
    email: Mapped[str] = mapped_column("email", String(254), nullable=False)
    emailKey: Mapped[str] = mapped_column("email_key", String(254), nullable=False)
    firstName: Mapped[str | None] = _text("first_name")
    lastName: Mapped[str | None] = _text("last_name")
    phoneNumber: Mapped[str | None] = _text("phone_number", 64)
    name: Mapped[str | None] = _text("name")
    company: Mapped[str | None] = _text("company")
    country: Mapped[str | None] = _text("country")
    city: Mapped[str | None] = _text("city")
    address: Mapped[str | None] = _text("address", 2000)
    website: Mapped[str | None] = _text("website", 2048)
    socialOne: Mapped[str | None] = _text("social_one")
    socialTwo: Mapped[str | None] = _text("social_two")
    points: Mapped[int] = mapped_column("points", BigInteger, nullable=False, default=0)
    referrals: Mapped[int] = mapped_column("referrals", BigInteger, nullable=False, default=0)
    isVerified: Mapped[bool] = mapped_column("is_verified", Boolean, nullable=False, default=False)
    unsubscribed: Mapped[bool] = mapped_column(
        "unsubscribed", Boolean, nullable=False, default=False
    )
    isGDPR: Mapped[bool] = mapped_column("is_gdpr", Boolean, nullable=False, default=False)
    data: Mapped[dict[str, Any]] = mapped_column("data", JsonDocument, nullable=False, default=dict)
    referralCode: Mapped[str] = mapped_column(
        "referral_code",
        String(32),
        nullable=False,
        unique=True,
        default=new_referral_code,
    )
    createdAt: Mapped[datetime] = _created()


class Action(Base):
    """A points event of one contact; deleting it takes its increase back."""

    __tablename__ = "actions"

    id: Mapped[str] = _id("act")
    subId: Mapped[str] = _owner("sub_id", "contacts.id")
    name: Mapped[str] = mapped_column(String(SHORT_TEXT), nullable=False)
    increase: Mapped[int] = mapped_column(BigInteger, nullable=False)
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()


class Audience(Base):
    """A named group of contacts of one list: `manual` (members table) or `smart` (filters)."""

    __tablename__ = "audiences"

    id: Mapped[str] = _id("aud")
    listId: Mapped[str] = _owner("list_id", "lists.id")
    name: Mapped[str] = mapped_column(String(SHORT_TEXT), nullable=False)
    mode: Mapped[str] = mapped_column(String(16), nullable=False, default="manual")
    filters: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The custom fields the filter reads, as the list declared them when it was written
    # ({"birthday": "date"} as canonical JSON): with `filters`, all a reader needs to parse it.
    fields: Mapped[str | None] = mapped_column("fields", Text, nullable=True)
    # The experiment run on its members (canonical JSON, `domain/experiments.py`), or null:
    # fixed when the audience is created, so every member's group is drawn by the same rule.
    experiment: Mapped[str | None] = mapped_column("experiment", Text, nullable=True)
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()


class AudienceVersion(Base):
    """What one change made of an audience (`domain/audience_versions.py`): its name, mode and
    filter (with the declarations it was read with), numbered from 1 per audience, the API key
    that made it, and the version it restored, if it was a restore."""

    __tablename__ = "audience_versions"

    audienceId: Mapped[str] = mapped_column(
        "audience_id",
        String(ID_LENGTH),
        ForeignKey("audiences.id", ondelete="CASCADE"),
        primary_key=True,
    )
    number: Mapped[int] = mapped_column("number", Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(SHORT_TEXT), nullable=False)
    mode: Mapped[str] = mapped_column(String(16), nullable=False)
    filters: Mapped[str | None] = mapped_column(Text, nullable=True)
    fields: Mapped[str | None] = mapped_column("fields", Text, nullable=True)
    keyId: Mapped[str | None] = mapped_column("key_id", String(ID_LENGTH), nullable=True)
    restoredFrom: Mapped[int | None] = mapped_column("restored_from", Integer, nullable=True)
    createdAt: Mapped[datetime] = _created()


class ListSize(Base):
    """How many contacts each list holds, kept by triggers (migration 0010) in the transaction
    that adds or removes them, so a page of a whole list answers its total without counting a
    million rows; the triggers catch every way a contact comes or goes, cascades included."""

    __tablename__ = "list_sizes"

    listId: Mapped[str] = mapped_column(
        "list_id",
        String(ID_LENGTH),
        ForeignKey("lists.id", ondelete="CASCADE"),
        primary_key=True,
    )
    contacts: Mapped[int] = mapped_column(BigInteger, nullable=False)


class ListPoints(Base):
    """How many contacts of each list hold each points value, kept by triggers (migration 0016)
    as `ListSize` is; a row reaching 0 contacts is deleted. A position counts the contacts with
    more points as a sum over these rows, not over the contacts (`ranking.ahead_of`)."""

    __tablename__ = "list_points"

    listId: Mapped[str] = mapped_column(
        "list_id",
        String(ID_LENGTH),
        ForeignKey("lists.id", ondelete="CASCADE"),
        primary_key=True,
    )
    points: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    contacts: Mapped[int] = mapped_column(BigInteger, nullable=False)


BAND_SHIFT = 6
"""A points value's band in `ListPointBand`: `points >> BAND_SHIFT`, 64 values a band."""


class ListPointBand(Base):
    """`ListPoints` summed by band of 64 points values (migration 0024), kept by triggers on
    `list_points`: a position sums the bands above its contact's and the values of its own band
    (`queries.ranked_beyond`), at most 64 of them, not every value above. A band reaching 0
    contacts is deleted."""

    __tablename__ = "list_point_bands"

    listId: Mapped[str] = mapped_column(
        "list_id",
        String(ID_LENGTH),
        ForeignKey("lists.id", ondelete="CASCADE"),
        primary_key=True,
    )
    band: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    contacts: Mapped[int] = mapped_column(BigInteger, nullable=False)


class ListSizeChange(Base):
    """A statement's contacts added to (or, negative, removed from) a list, on its way to
    `list_sizes` (migration 0023, PostgreSQL): a statement trigger appends it, and a trigger on
    its row adds it to the list's size at the commit and deletes it. Empty between transactions,
    and always on SQLite, whose row triggers update the size in place."""

    __tablename__ = "list_size_changes"

    id: Mapped[int] = mapped_column(BigInteger, Identity(always=True), primary_key=True)
    listId: Mapped[str] = mapped_column("list_id", String(ID_LENGTH), nullable=False)
    contacts: Mapped[int] = mapped_column(BigInteger, nullable=False)


class ListPointsChange(Base):
    """`ListSizeChange` for `list_points`: a statement's contacts of one points value, added to
    the histogram at the end of the statement (or at the commit of a shared import turn), with
    every other change of its list not yet added (migration 0025: the fold deletes them by
    list)."""

    __tablename__ = "list_points_changes"
    __table_args__ = (Index("ix_list_points_changes_list", "list_id"),)

    id: Mapped[int] = mapped_column(BigInteger, Identity(always=True), primary_key=True)
    listId: Mapped[str] = mapped_column("list_id", String(ID_LENGTH), nullable=False)
    points: Mapped[int] = mapped_column(BigInteger, nullable=False)
    contacts: Mapped[int] = mapped_column(BigInteger, nullable=False)


class AudienceMember(Base):
    """Membership of a contact in a manual audience."""

    __tablename__ = "audience_members"

    audienceId: Mapped[str] = mapped_column(
        "audience_id",
        String(ID_LENGTH),
        ForeignKey("audiences.id", ondelete="CASCADE"),
        primary_key=True,
    )
    contactId: Mapped[str] = mapped_column(
        "contact_id",
        String(ID_LENGTH),
        ForeignKey("contacts.id", ondelete="CASCADE"),
        primary_key=True,
        index=True,
    )


class IdempotencyRecord(Base):
    """The first answer to a POST sent with an `Idempotency-Key`, replayed to its retries.

    Keys are scoped per account (a client retrying with a rotated key still hits its record).
    The record is written in the same transaction as the effect it remembers, so an effect never
    exists without its record, nor a record without its effect.
    """

    __tablename__ = "idempotency_keys"

    accountId: Mapped[str] = mapped_column(
        "account_id",
        String(ID_LENGTH),
        ForeignKey("accounts.id", ondelete="CASCADE"),
        primary_key=True,
    )
    key: Mapped[str] = mapped_column("key", String(SHORT_TEXT), primary_key=True)
    method: Mapped[str] = mapped_column("method", String(8), nullable=False)
    path: Mapped[str] = mapped_column("path", String(2048), nullable=False)
    fingerprint: Mapped[str] = mapped_column("fingerprint", String(64), nullable=False)
    status: Mapped[int] = mapped_column("status", Integer, nullable=False)
    body: Mapped[str] = mapped_column("body", Text, nullable=False)
    createdAt: Mapped[datetime] = _created()
    expiresAt: Mapped[datetime] = mapped_column(
        "expires_at", DateTime(timezone=True), nullable=False, index=True
    )


class SuppressionKey(Base):
    """The key of a list's suppressed e-mails (`domain/suppression.py`): random, made with the
    list's first suppression, and kept apart from the hashes it keys."""

    __tablename__ = "suppression_keys"

    listId: Mapped[str] = mapped_column(
        "list_id",
        String(ID_LENGTH),
        ForeignKey("lists.id", ondelete="CASCADE"),
        primary_key=True,
    )
    key: Mapped[str] = mapped_column("key", String(64), nullable=False)


class Suppression(Base):
    """An e-mail a list no longer takes (its person was erased), as a keyed hash of it."""

    __tablename__ = "suppressions"

    listId: Mapped[str] = mapped_column(
        "list_id",
        String(ID_LENGTH),
        ForeignKey("lists.id", ondelete="CASCADE"),
        primary_key=True,
    )
    emailHash: Mapped[str] = mapped_column("email_hash", String(64), primary_key=True)
    createdAt: Mapped[datetime] = _created()


class Membership(Base):
    """A contact that is in an audience now: the stored membership every read uses.

    It holds the members of every audience, whatever its mode: a manual audience's rows copy
    `audience_members` (its source, kept while the audience is smart so switching back finds
    them), a smart audience's rows are what its filter selected at the last write that could
    change it (`domain/membership/store.py`). Deleting the audience or the contact deletes them:
    the code does, under the list's lock, rather than foreign keys, whose checks cost every
    moved row its share of a contact update (migration 0012 says why).
    """

    __tablename__ = "memberships"
    # The audiences of a page's contacts are read from this index alone.
    __table_args__ = (Index("ix_memberships_contact", "contact_id", "audience_id"),)

    audienceId: Mapped[str] = mapped_column("audience_id", String(ID_LENGTH), primary_key=True)
    contactId: Mapped[str] = mapped_column("contact_id", String(ID_LENGTH), primary_key=True)
    enteredAt: Mapped[datetime] = mapped_column(
        "entered_at", DateTime(timezone=True), default=utcnow, nullable=False
    )
    # The member's draw in its audience's experiment, made in the transaction of its entry and
    # kept while it stays: a group's name, or `holdout`; neither without an experiment.
    groupName: Mapped[str | None] = mapped_column("group_name", String(64), nullable=True)
    holdout: Mapped[bool] = mapped_column(
        "holdout", Boolean, nullable=False, default=False, server_default=sql_false()
    )


class AudienceOverlap(Base):
    """How many contacts two audiences of a list share, kept in the transaction of every write
    of `memberships` (`domain/membership/overlaps.py`), so the overlap of 50 audiences reads
    at most 1,275 rows where counting them from `memberships` read every member of each.

    One row per pair with `audience_a <= audience_b` (by id); the pair of an audience with
    itself holds its size. A pair no contact shares may have no row (a count of 0). Like
    `memberships`, no foreign key: the audience's and the list's deletions remove the rows
    under the list's lock (migration 0012 says why).
    """

    __tablename__ = "audience_overlaps"
    __table_args__ = (Index("ix_audience_overlaps_list", "list_id"),)

    audienceA: Mapped[str] = mapped_column("audience_a", String(ID_LENGTH), primary_key=True)
    audienceB: Mapped[str] = mapped_column("audience_b", String(ID_LENGTH), primary_key=True)
    listId: Mapped[str] = mapped_column("list_id", String(ID_LENGTH), nullable=False)
    contacts: Mapped[int] = mapped_column("contacts", BigInteger, nullable=False)


class OverlapNoted(Base):
    """A contact whose pairs in `audience_overlaps` are not counted yet: a single contact's
    write notes here the audiences it was stored in before (`audiences`, written once, by its
    first write since the list's pairs were last settled), and the pairs move by the difference
    of its audiences now and then when the list settles (`domain/membership/overlaps.py`): a
    contact moving across 100 audiences was 5,050 upserts in its own write.

    `audiences` holds the ids as `dialects.packed_ids` packs them into one text (joined by
    its separator on PostgreSQL, a JSON array on SQLite).
    """

    __tablename__ = "overlap_noted"

    listId: Mapped[str] = mapped_column("list_id", String(ID_LENGTH), primary_key=True)
    contactId: Mapped[str] = mapped_column("contact_id", String(ID_LENGTH), primary_key=True)
    audiences: Mapped[str] = mapped_column("audiences", Text, nullable=False)


class EventHead(Base):
    """The position of a list's last event: the counter whose row lock orders its events.

    Every transaction that appends events to a list updates this row first and holds its lock
    until it commits, so a list's events get their positions in the order their transactions
    commit (`domain/events.py`).
    """

    __tablename__ = "event_heads"

    listId: Mapped[str] = mapped_column(
        "list_id",
        String(ID_LENGTH),
        ForeignKey("lists.id", ondelete="CASCADE"),
        primary_key=True,
    )
    position: Mapped[int] = mapped_column("position", BigInteger, nullable=False, default=0)
    # How many writes of the list's contacts appended no event (imports with `events=false`),
    # which an audience's snapshot compares since no event reports them (migration 0022).
    unannounced: Mapped[int] = mapped_column(
        "unannounced", BigInteger, nullable=False, default=0, server_default="0"
    )
    # How many actions of the list's contacts were created or deleted (their points and action
    # ids change without an event): a snapshot reads those again only when it moved (0026).
    acted: Mapped[int] = mapped_column(
        "acted", BigInteger, nullable=False, default=0, server_default="0"
    )


class Event(Base):
    """One event of a list's outbox: `audience.entered`, `audience.left`, lifecycle events.

    Written in the transaction of the change it reports, so it exists exactly when the change
    was committed. `position` numbers a list's events in commit order (1, 2, 3, ... without
    gaps); the feed's cursor is made from it. Contact and audience ids are not foreign keys:
    the event of a deletion outlives what it names. Nor is the list's, for the cost of its
    check on every event: deleting the list deletes its events (migration 0012).

    The key is the list and the position, which every reader and writer goes by; `id`, the
    event's public name, is 80 random bits and has no index of its own: an index of random
    keys took a fifth of PostgreSQL's CPU a contact update (migration 0012).
    """

    __tablename__ = "events"
    __table_args__ = (
        # Membership at an instant: one audience's events in contact order, a page at a time.
        Index("ix_events_audience_contact", "audience_id", "contact_id", "position"),
    )

    id: Mapped[str] = mapped_column(
        String(ID_LENGTH), nullable=False, default=lambda: new_id("evt")
    )
    listId: Mapped[str] = mapped_column("list_id", String(ID_LENGTH), primary_key=True)
    position: Mapped[int] = mapped_column("position", BigInteger, primary_key=True)
    type: Mapped[str] = mapped_column("type", String(64), nullable=False)
    contactId: Mapped[str | None] = mapped_column("contact_id", String(ID_LENGTH), nullable=True)
    audienceId: Mapped[str | None] = mapped_column("audience_id", String(ID_LENGTH), nullable=True)
    cause: Mapped[str | None] = mapped_column("cause", String(64), nullable=True)
    occurredAt: Mapped[datetime] = mapped_column(
        "occurred_at", DateTime(timezone=True), nullable=False
    )
    payload: Mapped[dict[str, Any]] = mapped_column("payload", JSON, nullable=False, default=dict)


class Webhook(Base):
    """An endpoint of a list that receives its events as signed HTTP POSTs (`domain/webhooks/`).

    `secret` signs every delivery (Standard Webhooks, `whsec_` + base64); after a rotation the
    previous one also signs until `previousSecretUntil`, so receivers can switch without a gap.
    `position` is how far the endpoint has read its list's outbox: the dispatcher turns the
    events after it into deliveries and moves it in the same transaction, so each event becomes
    one delivery per endpoint. `failureCount` counts failed attempts since the last success;
    a long enough run disables the endpoint (`status`, `disabledReason`).
    """

    __tablename__ = "webhooks"

    id: Mapped[str] = _id("whk")
    listId: Mapped[str] = _owner("list_id", "lists.id")
    url: Mapped[str] = mapped_column("url", String(2048), nullable=False)
    description: Mapped[str | None] = _text("description", 2000)
    eventTypes: Mapped[list[str]] = mapped_column("event_types", JSON, nullable=False)
    secret: Mapped[str] = mapped_column("secret", String(128), nullable=False)
    previousSecret: Mapped[str | None] = _text("previous_secret", 128)
    previousSecretUntil: Mapped[datetime | None] = mapped_column(
        "previous_secret_until", DateTime(timezone=True), nullable=True
    )
    status: Mapped[str] = mapped_column("status", String(16), nullable=False, default="enabled")
    disabledReason: Mapped[str | None] = _text("disabled_reason", 2000)
    disabledAt: Mapped[datetime | None] = mapped_column(
        "disabled_at", DateTime(timezone=True), nullable=True
    )
    failureCount: Mapped[int] = mapped_column("failure_count", Integer, nullable=False, default=0)
    failingSince: Mapped[datetime | None] = mapped_column(
        "failing_since", DateTime(timezone=True), nullable=True
    )
    position: Mapped[int] = mapped_column("position", BigInteger, nullable=False, default=0)
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()


class WebhookDelivery(Base):
    """One event to deliver to one endpoint: its frozen body, its state and its next attempt.

    `orderKey` (the contact, else the audience) orders deliveries: one is not attempted while an
    earlier one of the same endpoint and key is pending. A worker claims a due delivery by
    setting `leaseToken` and `leaseUntil`; a lease that runs out (a killed worker) frees it.
    """

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("webhook_id", "event_id"),
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_order", "webhook_id", "order_key", "event_position"),
    )

    id: Mapped[str] = _id("msg")
    webhookId: Mapped[str] = _owner("webhook_id", "webhooks.id", index=False)
    eventId: Mapped[str] = mapped_column("event_id", String(ID_LENGTH), nullable=False)
    eventType: Mapped[str] = mapped_column("event_type", String(64), nullable=False)
    eventPosition: Mapped[int] = mapped_column("event_position", BigInteger, nullable=False)
    orderKey: Mapped[str | None] = mapped_column("order_key", String(ID_LENGTH), nullable=True)
    body: Mapped[str] = mapped_column("body", Text, nullable=False)
    status: Mapped[str] = mapped_column("status", String(16), nullable=False, default="pending")
    attempts: Mapped[int] = mapped_column("attempts", Integer, nullable=False, default=0)
    nextAttemptAt: Mapped[datetime] = mapped_column(
        "next_attempt_at", DateTime(timezone=True), nullable=False
    )
    leaseToken: Mapped[str | None] = _text("lease_token", 32)
    leaseUntil: Mapped[datetime | None] = mapped_column(
        "lease_until", DateTime(timezone=True), nullable=True
    )
    lastStatusCode: Mapped[int | None] = mapped_column("last_status_code", Integer, nullable=True)
    lastError: Mapped[str | None] = _text("last_error", 2000)
    deliveredAt: Mapped[datetime | None] = mapped_column(
        "delivered_at", DateTime(timezone=True), nullable=True
    )
    createdAt: Mapped[datetime] = _created()


class WebhookAttempt(Base):
    """One HTTP attempt of a delivery: when, the status code (or the error), how long it took."""

    __tablename__ = "webhook_attempts"

    id: Mapped[str] = _id("att")
    deliveryId: Mapped[str] = _owner("delivery_id", "webhook_deliveries.id")
    attemptedAt: Mapped[datetime] = mapped_column(
        "attempted_at", DateTime(timezone=True), nullable=False
    )
    statusCode: Mapped[int | None] = mapped_column("status_code", Integer, nullable=True)
    durationMs: Mapped[int] = mapped_column("duration_ms", Integer, nullable=False)
    error: Mapped[str | None] = _text("error", 2000)
    success: Mapped[bool] = mapped_column("success", Boolean, nullable=False)


class AudienceDue(Base):
    """When an audience must be brought up to the clock as a whole (`domain/membership/due.py`):
    the next calendar boundary of its filter, or now for an audience whose contacts' instants
    are still to be worked out (created, changed, or stored before instants were kept)."""

    __tablename__ = "audience_due"

    audienceId: Mapped[str] = mapped_column(
        "audience_id",
        String(ID_LENGTH),
        ForeignKey("audiences.id", ondelete="CASCADE"),
        primary_key=True,
    )
    dueAt: Mapped[datetime] = mapped_column(
        "due_at", DateTime(timezone=True), nullable=False, index=True
    )


class MembershipDue(Base):
    """The next instant at which time alone may move one contact into or out of one audience
    (`FilterClock.next_change`): the scheduler wakes then and judges that pair alone."""

    __tablename__ = "membership_due"

    audienceId: Mapped[str] = mapped_column(
        "audience_id",
        String(ID_LENGTH),
        ForeignKey("audiences.id", ondelete="CASCADE"),
        primary_key=True,
    )
    contactId: Mapped[str] = mapped_column(
        "contact_id",
        String(ID_LENGTH),
        ForeignKey("contacts.id", ondelete="CASCADE"),
        primary_key=True,
    )
    dueAt: Mapped[datetime] = mapped_column(
        "due_at", DateTime(timezone=True), nullable=False, index=True
    )


BUILD_STORING = "~"
"""An `AudienceBuild.cursor` past every contact id (ids are lowercase letters, digits and `_`,
which sort before `~`): the build is judged, its members are being stored."""


class AudienceBuild(Base):
    """A smart audience whose members are being worked out in the background, a chunk of its
    list at a time (`domain/membership/build.py`): while this row exists the audience is
    `building`, its stored members and events wait for the build's end.

    `token` names one run of the build: a change of filter starts another (new token, cursor
    and progress), and a chunk evaluated for an older token is thrown away. `position`, `at`,
    `points`, `actions`, `unannounced` and `acted` are what a `Snapshot` holds, read when the build
    started. A cursor
    of `BUILD_STORING` says every chunk was judged and the members are being stored in turns:
    the audience is judged by writes again, and is `building` until the last turn."""

    __tablename__ = "audience_builds"

    audienceId: Mapped[str] = mapped_column(
        "audience_id",
        String(ID_LENGTH),
        ForeignKey("audiences.id", ondelete="CASCADE"),
        primary_key=True,
    )
    token: Mapped[str] = mapped_column(String(ID_LENGTH), nullable=False)
    filters: Mapped[str] = mapped_column(Text, nullable=False)
    cause: Mapped[str] = mapped_column(String(64), nullable=False)
    position: Mapped[int] = mapped_column(BigInteger, nullable=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    points: Mapped[str | None] = mapped_column(Text, nullable=True)
    actions: Mapped[str | None] = mapped_column(Text, nullable=True)
    unannounced: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    acted: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    cursor: Mapped[str] = mapped_column(String(ID_LENGTH), nullable=False, default="")
    done: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    total: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    startedAt: Mapped[datetime] = mapped_column(
        "started_at", DateTime(timezone=True), default=utcnow, nullable=False
    )


class AudienceBuildMember(Base):
    """A contact the running build of an audience found selected so far."""

    __tablename__ = "audience_build_members"

    audienceId: Mapped[str] = mapped_column(
        "audience_id",
        String(ID_LENGTH),
        ForeignKey("audiences.id", ondelete="CASCADE"),
        primary_key=True,
    )
    contactId: Mapped[str] = mapped_column("contact_id", String(ID_LENGTH), primary_key=True)
