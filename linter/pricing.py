"""Money on findings: the one place where a rule's declared quantity of
accelerator capacity becomes a figure (rules.md, "Cost estimates (v2)").

A rule says *what* a finding keeps or holds (:class:`Quantity`: how many
nodes or accelerators, of which type in which region, always-on or held
while a job runs, and the run's bound); :func:`price_findings` looks the
unit price up in the price table (:mod:`mlcost_lint.prices`) and attaches a
:class:`Cost`. Rules never do arithmetic on prices. Every figure is rounded
once, here: monthly figures to whole dollars, hourly ones to cents.
"""

from __future__ import annotations

import datetime as _dt
import math
from decimal import ROUND_HALF_UP, Decimal, localcontext
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.pickling import pickled_by_fields
from mlcost_lint.prices.table import PriceFileError, PriceRow, PriceTable, TableInfo, load

if TYPE_CHECKING:
    from mlcost_lint.config import Settings
    from mlcost_lint.rule import Finding

HOURS_PER_MONTH = 730
STALE_AFTER_DAYS = 180

ALWAYS_ON = "always-on"   # MLC203, MLC205, MLC201(d): monthly
HELD = "held"             # MLC201(a)(b)(c), MLC204, MLC208: hourly while a job runs

LIST = "list"             # the on-demand list price
SPOT = "spot"             # the spot price (median over zones): capacity that runs on spot
SPOT_SAVING = "spot-saving"   # on-demand minus spot (MLC208)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Target:
    """One unit of capacity as the config names it. ``types``: instance /
    machine types or VM sizes (several listed: the cheapest, "at least");
    ``accelerator``: a GCP accelerator type attached per VM (type, count) or
    a Cloud TPU type ("v5litepod-8", count 1); ``model``: only the GPU model
    is known (catalogue name, "L4"), priced as the cheapest instance of the
    cloud carrying it, per GPU. ``region`` None: the cheapest region."""

    cloud: str | None
    types: tuple[str, ...] = ()
    accelerator: tuple[str, int] | None = None
    model: str | None = None
    region: str | None = None


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Quantity:
    """What a finding keeps or holds. ``count`` units of ``target``: whole
    instances (``per_accelerator`` False) or accelerators (True, the
    instance price divided by its accelerators). ``count`` None: not known.
    ``smaller``: MLC201(c), the price per accelerator of this target is
    taken off (the oversized part). ``run_hours``: the bound on one run."""

    target: Target
    count: float | None
    units: tuple[str, str]                 # ("node", "nodes"), ("GPU", "GPUs")
    kind: str = ALWAYS_ON
    per_accelerator: bool = False
    price: str = LIST
    smaller: Target | None = None
    run_hours: float | None = None
    count_at_least: bool = False


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Cost:
    """The money of one finding. ``amount_usd`` None: price unknown (never 0)."""

    amount_usd: float | None
    period: str                            # "month" | "hour"
    basis: str                             # the arithmetic in words
    price_date: str | None
    at_least: bool = False
    run_ceiling_usd: float | None = None

    @property
    def known(self) -> bool:
        return self.amount_usd is not None

    def short(self) -> str:
        """``~$47,848/month``, ``at least ~$32.77/hour``, ``price unknown``."""
        if self.amount_usd is None:
            return "price unknown"
        text = f"~{money(self.amount_usd, self.period)}/{self.period}"
        if self.run_ceiling_usd is not None:
            text += f", up to {money(self.run_ceiling_usd, 'hour')}/run"
        return ("at least " if self.at_least else "") + text

    def monthly(self) -> float:
        """For sorting: an hourly figure counts as 730 hours."""
        if self.amount_usd is None:
            return -1.0
        return self.amount_usd * (HOURS_PER_MONTH if self.period == "hour" else 1)

    def as_dict(self) -> dict:
        out: dict = {"amount_usd": self.amount_usd, "period": self.period}
        if self.run_ceiling_usd is not None:
            out["run_ceiling_usd"] = self.run_ceiling_usd
        out.update(basis=self.basis, price_date=self.price_date, at_least=self.at_least)
        return out


def money(amount: float, period: str) -> str:
    return f"${amount:,.0f}" if period == "month" else f"${amount:,.2f}"


def _round(value: float, period: str) -> float:
    """To the dollar (a month) or the cent (an hour), halves up. Any finite
    float: 9e18 pods of 9e18 GPUs each is 10^39 $/h, past the 28 digits of
    decimal's default context (InvalidOperation, a crash, before)."""
    if not math.isfinite(value):
        return value
    step = Decimal("1") if period == "month" else Decimal("0.01")
    with localcontext() as context:
        context.prec = 400      # a float has at most 309 integer digits
        return float(Decimal(repr(value)).quantize(step, rounding=ROUND_HALF_UP))


def usd_rate(value: float) -> str:
    """A unit price as it is used (not rounded to cents): $32.7726, $4.096575, $3.50."""
    text = f"{value:.6f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"${int(whole):,}.{frac.ljust(2, '0')}"


def _count(n: float) -> str:
    if isinstance(n, int):      # exact, even past a float (a product of huge counts)
        return str(n) if n.bit_length() <= 3000 else f"over 10^{int(n.bit_length() * 0.30103)}"
    return str(int(n)) if float(n).is_integer() else f"{n:g}"


# ------------------------------------------------------ catalogue join ---

@dataclass(frozen=True, slots=True)
class _Offer:
    """A price row joined with the accelerator catalogue."""

    row: PriceRow
    accelerators: float | None      # devices per row's unit (instance, VM, slice)
    model: str | None               # catalogue GPU model name
    instance: bool                  # a whole instance (host included)


def _offer(row: PriceRow) -> _Offer:
    from mlcost_lint import catalogue
    from mlcost_lint.prices.build import pairing

    if row.instance_type:
        entry = catalogue.instance_type(row.instance_type)
        if entry is None:
            return _Offer(row, None, None, True)
        return _Offer(row, entry.count, entry.gpu.name, True)
    if row.accelerator.startswith("tpu-"):
        entry = catalogue.gcp_accelerator(row.accelerator[4:])
        return _Offer(row, entry.count if entry else None, entry.gpu.name if entry else None, True)
    gcp_type = next((k for k, v in pairing()["gcp_accelerator_rows"].items() if v == row.accelerator), None)
    try:
        count = float(row.accelerator_count or 1)
    except ValueError:
        count = 0
    entry = catalogue.gcp_accelerator(gcp_type, int(count)) if gcp_type and count else None
    return _Offer(row, count or None, entry.gpu.name if entry else None, False)


@dataclass(frozen=True, slots=True)
class _Unit:
    value: float | None            # USD per hour per unit (before discount)
    at_least: bool
    what: str                      # "p4d.24xlarge (us-east-1)"
    per: str = ""                  # " / 8 GPUs"
    notes: tuple[str, ...] = ()
    reason: str = ""               # why there is no price


class Pricer:
    """Prices quantities against one table with one discount."""

    def __init__(self, table: PriceTable, discount: float = 0.0) -> None:
        self.table = table
        self.discount = discount
        # Rows are joined with the catalogue when first priced: a run prices
        # a few types of one or two clouds, and joining all ~2,500 rows up
        # front was 50 ms of every run that priced anything.
        self._offers: dict[str, list[_Offer]] = {}
        self._offer_of: dict[int, _Offer] = {}      # id(row) -> offer; the table keeps its rows alive

    def _offer_for(self, row: PriceRow) -> _Offer:
        offer = self._offer_of.get(id(row))
        if offer is None:
            offer = self._offer_of[id(row)] = _offer(row)
        return offer

    def _cloud_offers(self, cloud: str) -> list[_Offer]:
        """Every row of ``cloud`` as an offer, in table order."""
        offers = self._offers.get(cloud)
        if offers is None:
            offers = self._offers[cloud] = [self._offer_for(r) for r in self.table.rows if r.cloud == cloud]
        return offers

    @property
    def price_date(self) -> str | None:
        return self.table.info.date

    # -- unit prices ----------------------------------------------------------
    def _metric(self, row: PriceRow, price: str) -> float | None:
        if price == SPOT:
            return row.spot_median
        if row.on_demand is None:
            return None
        if price == SPOT_SAVING:
            if row.spot_median is None or row.spot_median >= row.on_demand:
                return None
            return row.on_demand - row.spot_median
        return row.on_demand

    def _pick(self, offers: list[_Offer], region: str | None, per_acc: bool, price: str
              ) -> tuple[_Offer, float] | None | str:
        """The cheapest (offer, unit value) in the region (any region when None).
        A string: why there is none."""
        if region is not None:
            offers = [o for o in offers if o.row.region == region.lower()]
            if not offers:
                return "region"
        best: tuple | None = None
        for o in offers:
            value = self._metric(o.row, price)
            if value is None:
                continue
            if per_acc:
                if not o.accelerators:
                    continue
                value = value / o.accelerators
            key = (value, o.row.region, o.row.name)
            if best is None or key < best[0]:
                best = (key, o, value)
        return None if best is None else (best[1], best[2])

    def unit(self, target: Target, per_acc: bool, price: str) -> _Unit:
        cloud = target.cloud
        what_price = {SPOT_SAVING: "on-demand minus median spot", SPOT: "median spot"}.get(price, "on-demand")
        if cloud is None:
            return _Unit(None, False, "", reason="cloud unknown")
        region = target.region.lower() if isinstance(target.region, str) and target.region else None
        notes: list[str] = []
        candidates: list[_Offer] = []
        label = ""
        at_least = False
        for name in target.types:
            shown = name
            if cloud == "aws" and name.lower().startswith("ml."):
                name = name[3:]
                notes.append("SageMaker bills above the EC2 price used here")
                at_least = True
            rows = self.table.instance_rows(cloud, name)
            candidates += [self._offer_for(r) for r in rows]
            label = label or shown
        if len(target.types) > 1:
            at_least = True
            notes.append(f"cheapest of {', '.join(target.types)}")
            label = "/".join(target.types)
        if not candidates and target.accelerator is not None:
            acc, count = target.accelerator
            candidates, label2, acc_at_least, note = self._accelerator(acc, count)
            if target.types and candidates:
                note = f"accelerator only, host {label} is not in the price table"
            if note:
                notes.append(note)
            at_least = at_least or acc_at_least
            label = label2 if not target.types else f"{label} + {label2}"
        if not candidates and not target.types and target.accelerator is None and target.model:
            offers = [o for o in self._cloud_offers(cloud) if o.model == target.model]
            whole = [o for o in offers if o.instance]
            candidates = whole or offers
            if candidates and not whole:
                notes.append("accelerator only, the host VM is not priced")
            at_least, per_acc = True, True
            label = f"{target.model} (cheapest {cloud} type carrying it)"
        if not candidates:
            if target.types:
                return _Unit(None, False, label, reason=f"{label} is not in the price table")
            if target.accelerator is not None:
                return _Unit(None, False, label, reason=f"{target.accelerator[0]} is not in the price table")
            if target.model:
                return _Unit(None, False, label, reason=f"no {cloud} type with {target.model} in the price table")
            return _Unit(None, False, "", reason="instance type unknown")
        picked = self._pick(candidates, region, per_acc, price)
        if picked == "region":
            return _Unit(None, False, label, reason=f"{label} has no price for {region} in the table")
        if picked is None or isinstance(picked, str):
            why = {SPOT_SAVING: "no spot price below on-demand", SPOT: "no spot price"}.get(price, "no on-demand price")
            if per_acc and all(not o.accelerators for o in candidates):
                why = "accelerators per instance unknown"
            return _Unit(None, False, label, reason=f"{label}: {why} in the table")
        offer, value = picked
        if region is None:
            at_least = True
            notes.append(f"region unknown: cheapest region {offer.row.region}")
        shown_row = offer.row.name
        per = ""
        if per_acc and offer.accelerators:
            per = f" / {_count(offer.accelerators)} per {shown_row}"
        whole_price = self._metric(offer.row, price)
        what = f"{shown_row} {what_price} {usd_rate(whole_price)}/h{per} ({offer.row.region})"
        if offer.row.origin != "shipped":
            notes.append(f"price from {offer.row.origin}")
        return _Unit(value, at_least, what, per, tuple(notes))

    def _accelerator(self, acc: str, count: int) -> tuple[list[_Offer], str, bool, str]:
        from mlcost_lint import catalogue
        from mlcost_lint.prices.build import pairing

        entry = catalogue.gcp_accelerator(acc, count)
        key = acc.strip().lower().rsplit("/", 1)[-1]
        if entry is not None and entry.is_tpu:
            name = key if key.startswith("tpu-") else f"tpu-{key}"
            rows = self.table.accelerator_rows(name, 1)
            return [self._offer_for(r) for r in rows], name, False, ""
        sky = pairing()["gcp_accelerator_rows"].get(key)
        if sky is None:
            return [], key, False, ""
        rows = self.table.accelerator_rows(sky, count)
        return ([self._offer_for(r) for r in rows], f"{sky} x{count}", True,
                "accelerator only, the host VM is not priced")

    # -- the one computation -------------------------------------------------
    def cost(self, q: Quantity) -> Cost:
        period = "month" if q.kind == ALWAYS_ON else "hour"
        date = self.price_date
        if q.count is None:
            return Cost(None, period, f"price unknown: how many {q.units[1]} is not known", date)
        u = self.unit(q.target, q.per_accelerator, q.price)
        if u.value is None:
            return Cost(None, period, f"price unknown: {u.reason}", date)
        unit_value, what, at_least, notes = u.value, u.what, u.at_least, list(u.notes)
        if q.smaller is not None:
            s = self.unit(q.smaller, True, q.price)
            if s.value is None:
                return Cost(None, period, f"price unknown: {s.reason}", date)
            if s.value >= unit_value:
                return Cost(None, period, f"price unknown: {s.what} is not cheaper per GPU", date)
            unit_value = unit_value - s.value
            what = f"({what}) - ({s.what})"
            at_least = at_least or s.at_least
            notes += [n for n in s.notes if n not in notes]
        if self.discount:
            unit_value = unit_value * (1 - self.discount)
            notes.append(f"less {self.discount:.0%} discount")
        at_least = at_least or q.count_at_least
        n = _count(q.count)
        noun = q.units[0] if q.count == 1 else q.units[1]
        try:
            hourly = q.count * unit_value
        except OverflowError:     # a count past a float (a product of huge counts)
            hourly = math.inf
        if not math.isfinite(hourly * (HOURS_PER_MONTH if q.kind == ALWAYS_ON else 1)):
            return Cost(None, period, f"price unknown: {n} {noun} is more than a price can be computed for", date)
        if q.kind == ALWAYS_ON:
            amount = _round(hourly * HOURS_PER_MONTH, "month")
            arithmetic = f"{n} {noun} x {usd_rate(unit_value)}/h x {HOURS_PER_MONTH} h = {money(amount, 'month')}/month"
        else:
            amount = _round(hourly, "hour")
            arithmetic = f"{n} {noun} x {usd_rate(unit_value)}/h = {money(amount, 'hour')}/hour"
        ceiling = None
        if q.run_hours is not None and q.kind == HELD:
            ceiling = _round(hourly * q.run_hours, "hour")
            arithmetic += f"; a run is bounded at {q.run_hours:g} h: at most {money(ceiling, 'hour')}"
        basis = f"{arithmetic} [{what}" + (f"; {'; '.join(notes)}" if notes else "") + \
            f"; list prices as of {date or 'an unknown date'}]"
        return Cost(amount, period, basis, date, at_least, ceiling)


# ------------------------------------------------------- the pricing step ---

@lru_cache(maxsize=8)
def _cached_table(file: str | None, mtime_ns: int) -> PriceTable:
    return load(Path(file) if file else None)


def table_for(settings: "Settings") -> PriceTable:
    """The table for a run: shipped, with ``[prices] file`` rows over it.
    Raises ConfigError on a bad file."""
    from mlcost_lint.config import ConfigError

    file = settings.prices_file
    try:
        if file is None:
            return _cached_table(None, 0)
        import os

        return _cached_table(str(file), os.stat(file).st_mtime_ns)
    except OSError as exc:
        raise ConfigError(f"[prices] file {file}: {exc.strerror or exc}") from None
    except PriceFileError as exc:
        raise ConfigError(f"[prices] file: {exc}") from None


@dataclass(frozen=True, slots=True)
class TableFacts:
    """What a report says about the run's price table, without its rows."""

    info: TableInfo
    override: str | None


def table_facts_for(settings: "Settings") -> TableFacts:
    """The facts of :func:`table_for`'s table; the shipped table's come
    from its header alone. Raises ConfigError on a bad ``[prices] file``."""
    if settings.prices_file is None:
        from mlcost_lint.prices.table import shipped_info

        return TableFacts(shipped_info(), None)
    table = table_for(settings)
    return TableFacts(table.info, table.override)


def pricer_for(settings: "Settings") -> Pricer:
    table = table_for(settings)
    return _pricer(id(table), table, settings.prices_discount)


_PRICERS: dict[tuple[int, float], Pricer] = {}


def _pricer(key: int, table: PriceTable, discount: float) -> Pricer:
    found = _PRICERS.get((key, discount))
    if found is None or found.table is not table:
        found = Pricer(table, discount)
        _PRICERS[(key, discount)] = found
    return found


def price_findings(findings: Iterable["Finding"], settings: "Settings") -> None:
    """Attach a Cost to every finding whose rule declared a quantity."""
    pricer: Pricer | None = None
    # Quantities are frozen values and pricing is a function of them: findings
    # holding the same quantity (a workload copied across folders, every
    # replica set of one pool) share one Cost (frozen too).
    costs: dict[Quantity, Cost] = {}
    for f in findings:
        q = f.quantity
        if q is None:
            continue
        if pricer is None:
            pricer = pricer_for(settings)
        try:
            cost = costs.get(q)
        except TypeError:      # a value that cannot be hashed: priced on its own
            f.cost = pricer.cost(q)
            continue
        if cost is None:
            cost = costs[q] = pricer.cost(q)
        f.cost = cost


# ------------------------------------------------------------- totals ---

@dataclass(slots=True)
class Totals:
    month: float = 0.0
    hour: float = 0.0
    month_findings: int = 0
    hour_findings: int = 0
    month_at_least: bool = False
    hour_at_least: bool = False
    unknown: int = 0

    @property
    def any(self) -> bool:
        """Some finding has a figure (unknowns alone make no totals line)."""
        return bool(self.month_findings or self.hour_findings)

    def text(self) -> str:
        parts = []
        if self.month_findings:
            parts.append(f"{'at least ' if self.month_at_least else ''}~{money(self.month, 'month')}/month "
                         f"always-on ({self.month_findings} finding{'s' if self.month_findings != 1 else ''})")
        if self.hour_findings:
            parts.append(f"{'at least ' if self.hour_at_least else ''}~{money(self.hour, 'hour')}/hour "
                         f"held while jobs run ({self.hour_findings} finding{'s' if self.hour_findings != 1 else ''})")
        if self.unknown:
            parts.append(f"{self.unknown} finding{'s' if self.unknown != 1 else ''} with price unknown")
        return "Estimated cost: " + "; ".join(parts) + "."

    def as_dict(self) -> dict:
        # A total over no priced finding is no figure (null), never $0.
        return {"always_on_usd_per_month": self.month if self.month_findings else None,
                "always_on_findings": self.month_findings,
                "always_on_at_least": self.month_at_least,
                "held_usd_per_hour": self.hour if self.hour_findings else None,
                "held_findings": self.hour_findings, "held_at_least": self.hour_at_least,
                "price_unknown_findings": self.unknown}


def totals(findings: Iterable["Finding"]) -> Totals:
    t = Totals()
    for f in findings:
        cost = f.cost
        if cost is None:
            continue
        if cost.amount_usd is None:
            t.unknown += 1
        elif cost.period == "month":
            t.month += cost.amount_usd
            t.month_findings += 1
            t.month_at_least |= cost.at_least
        else:
            t.hour += cost.amount_usd
            t.hour_findings += 1
            t.hour_at_least |= cost.at_least
    t.month, t.hour = _round(t.month, "month"), _round(t.hour, "hour")
    return t


def with_cost(f: "Finding") -> str:
    """The message as people read it: the cost appended."""
    return f.message if f.cost is None else f"{f.message} ({f.cost.short()})"


def sort_by_cost(findings: list["Finding"]) -> list["Finding"]:
    """Highest cost first (an hourly figure counts as 730 hours), unpriced
    findings after, each group in the usual path/line order."""
    return sorted(findings, key=lambda f: (-(f.cost.monthly() if f.cost is not None else -2.0), f.sort_key()))


def price_info(table: "PriceTable | TableFacts", discount: float) -> dict:
    """What the figures are based on, for JSON and SARIF."""
    info = table.info
    return {"date": info.date, "source": info.source, "source_date": info.source_date, "built": info.built,
            "discount": discount, "override_file": table.override}


def price_rows(table: PriceTable, type_name: str | None, region: str | None) -> list[dict]:
    """The rows ``mlcost-lint prices`` shows: TYPE as an instance type (any
    spelling), a GCP accelerator / TPU row name, else a GPU model."""
    from mlcost_lint import catalogue
    from mlcost_lint.prices.table import accelerator_key, type_key

    pricer = Pricer(table)
    offers = [pricer._offer_for(r) for r in table.rows]
    if type_name:
        wanted = type_name.strip()
        bare = wanted[3:] if wanted.lower().startswith("ml.") else wanted
        chosen = [o for o in offers if o.row.instance_type and type_key(o.row.cloud, o.row.instance_type)
                  == type_key(o.row.cloud, bare)]
        if not chosen:
            keys = {wanted.lower(), f"tpu-{wanted.lower()}", accelerator_key(wanted, None)}
            chosen = [o for o in offers if not o.row.instance_type and
                      (accelerator_key(o.row.accelerator, o.row.accelerator_count) in keys
                       or o.row.accelerator.lower() == wanted.lower())]
        if not chosen and catalogue.instance_type(bare) is None:     # a GPU model ("L4"), not a missing type
            model = catalogue.gpu_model(wanted)
            chosen = [o for o in offers if model is not None and o.model == model.name]
    else:
        chosen = offers
    if region:
        chosen = [o for o in chosen if o.row.region == region.strip().lower()]
    out = []
    for o in sorted(chosen, key=lambda o: (o.row.cloud, o.row.name, o.row.region)):
        r = o.row
        per = r.on_demand / o.accelerators if r.on_demand is not None and o.accelerators else None
        acc = f"{_count(o.accelerators)} x {o.model}" if o.accelerators and o.model else \
            (f"{r.accelerator_count} x {r.accelerator}" if r.accelerator else "")
        out.append({"cloud": r.cloud, "name": r.name, "accelerators": acc, "region": r.region,
                    "on_demand_usd_per_hour": r.on_demand, "on_demand_per_accelerator": per,
                    "spot_usd_per_hour_min": r.spot_min, "spot_usd_per_hour_median": r.spot_median,
                    "note": r.note or ("accelerator only: the host VM is priced separately"
                                       if r.cloud == "gcp" and not r.instance_type and not o.instance else ""),
                    "origin": r.origin})
    return out


def stale_notice(table: "PriceTable | TableFacts", today: _dt.date | None = None) -> str | None:
    """One summary line when the table is older than 180 days."""
    date = table.info.date
    if not date:
        return None
    try:
        day = _dt.date.fromisoformat(date)
    except ValueError:
        return None
    today = today or _dt.datetime.now(_dt.timezone.utc).date()
    age = (today - day).days
    if age <= STALE_AFTER_DAYS:
        return None
    return (f"The price table is from {date} ({age} days old): figures may be out of date; "
            "set [prices] file to a newer catalog (see `mlcost-lint prices`).")
