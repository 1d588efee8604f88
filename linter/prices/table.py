"""The price table: rows of (cloud, instance type | accelerator, region) ->
on-demand and spot USD per hour, read from a CSV in the shipped columns or
from a SkyPilot catalog ``vms.csv`` (converted by :mod:`.build`).

A row is a fact from a dated snapshot; a lookup that finds no row is
"price unknown" (None), never 0 and never another type's price.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import field
from functools import cache
from pathlib import Path
from typing import Any, Iterable

from mlcost_lint.lean_dataclass import dataclass

COLUMNS = ("cloud", "instance_type", "accelerator", "accelerator_count", "vcpus", "memory_gib", "region",
           "on_demand_usd_per_hour", "spot_usd_per_hour_min", "spot_usd_per_hour_median")
OPTIONAL_COLUMNS = ("note",)
SKYPILOT_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "SpotPrice", "Region")
CLOUDS = ("aws", "gcp", "azure")
# A price file is read whole: bounded, so a wrong path (a disk image, /dev/zero)
# cannot eat memory. The SkyPilot AWS catalog is ~2.5 MB.
MAX_FILE_BYTES = 16_000_000

_DATA_DIR = Path(__file__).parent
SHIPPED = _DATA_DIR / "gpu_prices.csv"


class PriceFileError(Exception):
    """A price file that cannot be used: exit 2 with this one-line message."""


@dataclass(frozen=True, slots=True)
class PriceRow:
    cloud: str
    instance_type: str        # "" for a GCP accelerator or TPU row
    accelerator: str
    accelerator_count: str
    vcpus: str
    memory_gib: str
    region: str
    on_demand: float | None
    spot_min: float | None
    spot_median: float | None
    note: str = ""            # how the row was derived (GCP host + accelerator)
    origin: str = "shipped"   # "shipped" | the override file's name

    @property
    def name(self) -> str:
        """What the row prices: the instance type, else the accelerator with its count."""
        if self.instance_type:
            return self.instance_type
        count = self.accelerator_count or "1"
        return self.accelerator if self.accelerator.startswith("tpu-") else f"{self.accelerator} x{count}"


@dataclass(slots=True)
class TableInfo:
    source: str = "unknown"
    source_date: str = "unknown"      # the snapshot's own date, when it has one
    built: str | None = None          # the day the table was built (YYYY-MM-DD)
    notes: list[str] = field(default_factory=list)

    @property
    def date(self) -> str | None:
        """The date figures are quoted as of: the source's date when known, else the build date."""
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", self.source_date or ""):
            return self.source_date
        return self.built


# ---------------------------------------------------------------- keys ---

_AZURE_PREFIX = re.compile(r"^(standard|basic)[_-]", re.IGNORECASE)


def type_key(cloud: str, name: str) -> str:
    """Case- and spelling-insensitive key of an instance/machine type or VM size."""
    text = name.strip()
    if cloud == "azure":
        return re.sub(r"[^a-z0-9]", "", _AZURE_PREFIX.sub("", text).lower())
    text = text.lower().rsplit("/", 1)[-1]
    return text


def accelerator_key(name: str, count: str | int | float | None) -> str:
    n = str(count or "1").strip()
    n = n[:-2] if n.endswith(".0") else n
    lowered = name.strip().lower()
    return lowered if lowered.startswith("tpu-") else f"{lowered} x{n or '1'}"


# ------------------------------------------------------------- reading ---

def _number(text: str | None, where: str) -> float | None:
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise PriceFileError(f"{where}: not a number: '{text[:20]}'") from None
    if value != value or value < 0 or value == float("inf"):
        raise PriceFileError(f"{where}: not a price: '{text[:20]}'")
    return value


def read_text(path: Path) -> str:
    """A price file's text: a plain regular file, at most MAX_FILE_BYTES."""
    import os
    import stat

    try:
        st = os.stat(path)
    except OSError as exc:
        raise PriceFileError(f"{path}: cannot read price file: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise PriceFileError(f"{path}: price file is not a regular file")
    if st.st_size > MAX_FILE_BYTES:
        raise PriceFileError(f"{path}: price file is larger than {MAX_FILE_BYTES // 1_000_000} MB")
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise PriceFileError(f"{path}: cannot read price file: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise PriceFileError(f"{path}: price file is larger than {MAX_FILE_BYTES // 1_000_000} MB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PriceFileError(f"{path}: price file is not UTF-8 (byte {exc.start})") from None


def _header_line(info: TableInfo, line: str) -> None:
    """One ``# key: value`` line into ``info``."""
    key, _, value = line[1:].partition(":")
    key, value = key.strip().lower(), value.strip()
    if key == "source":
        info.source = value
    elif key == "source-date":
        info.source_date = value
    elif key == "built":
        info.built = value
    elif key == "note":
        info.notes.append(value)


def parse_table(text: str, origin: str, cloud: str | None = None) -> tuple[list[PriceRow], TableInfo]:
    """Rows and metadata of a price CSV (the shipped columns, with ``# key:
    value`` header lines) or of a SkyPilot ``vms.csv`` (``cloud`` names its
    cloud; else it is guessed from the instance type names)."""
    info = TableInfo()
    body: list[str] = []
    for line in text.splitlines():
        if line.startswith("#"):
            _header_line(info, line)
            continue
        body.append(line)
    reader = csv.DictReader(io.StringIO("\n".join(body)))
    header = tuple(reader.fieldnames or ())
    if all(c in header for c in SKYPILOT_COLUMNS):
        from mlcost_lint.prices.build import from_skypilot

        from mlcost_lint.prices.build import join_gcp

        rows = from_skypilot(reader, cloud, origin)
        if info.source == "unknown":
            info.source = f"SkyPilot catalog file {origin}"
        return join_gcp(rows), info
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise PriceFileError(f"{origin}: not a price table: missing column(s) {', '.join(missing)} "
                             f"(expected {','.join(COLUMNS)} or a SkyPilot vms.csv)")
    rows = []
    # Rows as lists, read by column position (DictReader built a dict per
    # row: most of a 2,500-row table's 30 ms, paid by every run). The same
    # answers: a later column of the same name wins, a short row's missing
    # cells are None, blank lines are skipped and not counted.
    at = {name: i for i, name in enumerate(header)}
    # Each row's cells in the order read below, by position: a row shorter
    # than the header is padded with None first (a missing cell), so that
    # every row is read by plain indexing (a lookup per cell per row was a
    # third of the shipped table's parse, which every cold run pays).
    where_of = [at.get(name) for name in (*COLUMNS, *OPTIONAL_COLUMNS)]   # the order unpacked below
    width = len(header)
    padding = [None] * width

    n = 1
    for values in reader.reader:
        if not values:
            continue
        n += 1
        if len(values) < width:
            values = values + padding[len(values):]
        cloud, instance_type, accelerator, accelerator_count, vcpus, memory_gib, region, *price_cells, note = [
            values[i] if i is not None else None for i in where_of]
        row_cloud = (cloud or "").strip().lower()
        if row_cloud not in CLOUDS:
            raise PriceFileError(f"{origin}: row {n}: cloud must be one of {', '.join(CLOUDS)}, "
                                 f"got '{row_cloud[:20]}'")
        region = (region or "").strip()
        if not (instance_type or accelerator or "").strip() or not region:
            raise PriceFileError(f"{origin}: row {n}: needs an instance_type (or accelerator) and a region")
        where = None
        prices = []
        for text in price_cells:
            if text is None or not text.strip():
                prices.append(None)
                continue
            where = where or f"{origin}: row {n}"
            prices.append(_number(text, where))
        rows.append(PriceRow(
            cloud=row_cloud,
            instance_type=(instance_type or "").strip(),
            accelerator=(accelerator or "").strip(),
            accelerator_count=(accelerator_count or "").strip(),
            vcpus=(vcpus or "").strip(),
            memory_gib=(memory_gib or "").strip(),
            region=region.lower(),
            on_demand=prices[0],
            spot_min=prices[1],
            spot_median=prices[2],
            note=(note or "").strip(),
            origin=origin,
        ))
    from mlcost_lint.prices.build import join_gcp

    return join_gcp(rows), info


def row_key(row: PriceRow) -> tuple[str, str, str]:
    """(cloud, what, region): the key an override row replaces."""
    what = type_key(row.cloud, row.instance_type) if row.instance_type else \
        accelerator_key(row.accelerator, row.accelerator_count)
    return row.cloud, what, row.region


# --------------------------------------------------------------- table ---

@dataclass(slots=True)
class PriceTable:
    rows: list[PriceRow]
    info: TableInfo
    override: str | None = None                 # the [prices] file, when one is used
    _by_type: dict[tuple[str, str], list[PriceRow]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        index: dict[tuple[str, str], list[PriceRow]] = {}
        for row in self.rows:
            cloud, what, _ = row_key(row)
            index.setdefault((cloud, what), []).append(row)
        for rows in index.values():
            rows.sort(key=lambda r: r.region)
        self._by_type = index

    def instance_rows(self, cloud: str, name: str) -> list[PriceRow]:
        """Every region's row of an instance/machine type or VM size."""
        return list(self._by_type.get((cloud, type_key(cloud, name)), ()))

    def accelerator_rows(self, name: str, count: int | float | str | None) -> list[PriceRow]:
        """Every region's row of a GCP accelerator (SkyPilot name) x count, or a TPU slice."""
        return list(self._by_type.get(("gcp", accelerator_key(name, count)), ()))

    def all_rows(self) -> Iterable[PriceRow]:
        return iter(self.rows)


def merge(base: list[PriceRow], override: list[PriceRow]) -> list[PriceRow]:
    """The override's rows replace the base rows with the same (cloud, type, region)."""
    replaced = {row_key(r) for r in override}
    kept = [r for r in base if row_key(r) not in replaced]
    return sorted([*kept, *override], key=lambda r: (r.cloud, r.instance_type, r.accelerator,
                                                     r.accelerator_count, r.region))


@cache
def shipped() -> tuple[tuple[PriceRow, ...], TableInfo]:
    rows, info = parse_table(SHIPPED.read_text(encoding="utf-8"), "shipped")
    return tuple(rows), info


@cache
def shipped_info() -> TableInfo:
    """The shipped table's ``# key: value`` header alone: what a run
    prints about the table (date, source) when it prices nothing, as a run
    taken from the run cache does, without reading 2,500 rows."""
    info = TableInfo()
    with SHIPPED.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.startswith("#"):
                break
            _header_line(info, line.rstrip("\r\n"))
    return info


def load(file: Path | None = None) -> PriceTable:
    """The shipped table, with the rows of ``file`` (the ``[prices] file``)
    replacing the ones they cover. Raises PriceFileError."""
    rows, info = shipped()
    if file is None:
        return PriceTable(list(rows), info)
    extra, extra_info = parse_table(read_text(file), file.name)
    merged = TableInfo(source=f"{info.source}; rows from {file.name}: {extra_info.source}",
                       source_date=info.source_date, built=info.built, notes=list(info.notes))
    return PriceTable(merge(list(rows), extra), merged, override=str(file))


def as_dict(row: PriceRow) -> dict[str, Any]:
    return {"cloud": row.cloud, "instance_type": row.instance_type, "accelerator": row.accelerator,
            "accelerator_count": row.accelerator_count, "region": row.region,
            "on_demand_usd_per_hour": row.on_demand, "spot_usd_per_hour_min": row.spot_min,
            "spot_usd_per_hour_median": row.spot_median, "note": row.note, "origin": row.origin}
