"""Build the shipped price table from SkyPilot catalog files.

    python -m mlcost_lint.prices.build aws=aws/vms.csv gcp=gcp/vms.csv azure=azure/vms.csv \\
        --source "skypilot-catalog@<commit>" --source-date unknown -o linter/prices/gpu_prices.csv

An input is a SkyPilot ``vms.csv`` (``InstanceType, AcceleratorName,
AcceleratorCount, vCPUs, MemoryGiB, GpuInfo, Price, SpotPrice, Region,
AvailabilityZone``; one row per zone) or a CSV in the table's own columns
(``/work/shared/reference/prices/gpu-vms.csv``). Kept: rows with an
accelerator, and the host rows of GCP GPU machine families. Per (type,
region): on-demand is the lowest zone price, spot the minimum and median
over the zones that have one (exact repeats counted once). GCP machine
types are then priced as host row + accelerator row of the same region
(``pairing.yaml``); the host-only rows are dropped.
"""

from __future__ import annotations

import datetime as _dt
import sys
from functools import cache
from pathlib import Path
from typing import Any, Iterable

from mlcost_lint.prices.table import COLUMNS, CLOUDS, PriceFileError, PriceRow, parse_table, read_text

_DATA_DIR = Path(__file__).parent


@cache
def pairing() -> dict[str, dict[str, str]]:
    from mlcost_lint.yaml_lib import SAFE_LOADER, yaml

    with open(_DATA_DIR / "pairing.yaml", encoding="utf-8") as fh:
        return yaml.load(fh, Loader=SAFE_LOADER)


def _gcp_family(name: str) -> str | None:
    lowered = name.lower()
    for family in pairing()["gcp_machine_accelerators"]:
        if lowered.startswith(family + "-"):
            return family
    return None


def _trim(text: str | None) -> str:
    text = (text or "").strip()
    return text[:-2] if text.endswith(".0") else text


def _guess_cloud(name: str) -> str | None:
    if name.lower().startswith(("standard_", "basic_")):
        return "azure"
    if "." in name:
        return "aws"
    if name.startswith(("a2-", "a3-", "a4", "g2-", "g4-", "n1-", "ct")) or not name:
        return "gcp"
    return None


def _keep(cloud: str, instance_type: str, accelerator: str) -> bool:
    from mlcost_lint import catalogue

    if accelerator:
        return True
    if cloud == "gcp" and _gcp_family(instance_type):
        return True
    return bool(instance_type) and catalogue.instance_type(instance_type) is not None


def from_skypilot(reader: Iterable[dict[str, Any]], cloud: str | None, origin: str) -> list[PriceRow]:
    """Aggregate a SkyPilot vms.csv (one row per zone) into one row per (type, region)."""
    groups: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for n, raw in enumerate(reader, start=2):
        itype = (raw.get("InstanceType") or "").strip()
        acc = (raw.get("AcceleratorName") or "").strip()
        count = _trim(raw.get("AcceleratorCount"))
        region = (raw.get("Region") or "").strip().lower()
        row_cloud = cloud or _guess_cloud(itype)
        if row_cloud not in CLOUDS:
            raise PriceFileError(f"{origin}: row {n}: cannot tell the cloud of '{itype[:30]}' (pass --cloud)")
        if not region or not _keep(row_cloud, itype, acc):
            continue
        key = (row_cloud, itype, count if not itype else "", region) if itype else (row_cloud, "", acc + "|" + count, region)
        group = groups.setdefault(key, {"acc": set(), "count": count, "vcpus": _trim(raw.get("vCPUs")),
                                        "mem": _trim(raw.get("MemoryGiB")), "price": [], "spot": set()})
        if acc:
            group["acc"].add(acc)
        price, spot = (raw.get("Price") or "").strip(), (raw.get("SpotPrice") or "").strip()
        zone = (raw.get("AvailabilityZone") or "").strip()
        if price:
            group["price"].append(float(price))
        if spot:
            group["spot"].add((zone, float(spot)))
    import statistics   # here: a run that prices findings imports this module for pairing() only

    rows = []
    for (row_cloud, itype, _, region), g in sorted(groups.items()):
        # p4de lists A100 and A100-80GB rows: the more specific name wins.
        acc = max(g["acc"], key=lambda a: (len(a), a)) if g["acc"] else ""
        spots = sorted(s for _, s in g["spot"])
        rows.append(PriceRow(
            cloud=row_cloud, instance_type=itype, accelerator=acc, accelerator_count=g["count"] if acc else "",
            vcpus=g["vcpus"], memory_gib=g["mem"], region=region,
            on_demand=min(g["price"]) if g["price"] else None,
            spot_min=spots[0] if spots else None,
            spot_median=statistics.median(spots) if spots else None,
            origin=origin))
    return rows


def _money(value: float | None) -> str:
    if value is None:
        return ""
    text = f"{round(value, 6):.6f}".rstrip("0").rstrip(".")
    return text or "0"


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a + b, 6)


def join_gcp(rows: list[PriceRow]) -> list[PriceRow]:
    """GCP machine-type rows price the host only: each becomes host +
    accelerator row (same region, the machine's GPU count); a host row whose
    accelerator row is missing in its region is dropped (no guess)."""
    from mlcost_lint import catalogue

    accelerators = {(r.accelerator, r.accelerator_count, r.region): r
                    for r in rows if r.cloud == "gcp" and not r.instance_type}
    out = []
    for r in rows:
        family = _gcp_family(r.instance_type) if r.cloud == "gcp" and r.instance_type and not r.accelerator \
            else None
        if family is None:
            out.append(r)
            continue
        entry = catalogue.instance_type(r.instance_type)
        if entry is None:
            continue
        count = str(int(entry.count))
        name = pairing()["gcp_machine_accelerators"][family]
        acc = accelerators.get((name, count, r.region))
        if acc is None:
            continue
        out.append(PriceRow(
            cloud="gcp", instance_type=r.instance_type, accelerator=name, accelerator_count=count,
            vcpus=r.vcpus, memory_gib=r.memory_gib, region=r.region,
            on_demand=_add(r.on_demand, acc.on_demand), spot_min=_add(r.spot_min, acc.spot_min),
            spot_median=_add(r.spot_median, acc.spot_median),
            note=(f"host {_money(r.on_demand) or '?'} + {name} x{count} {_money(acc.on_demand) or '?'} "
                  f"(spot {_money(r.spot_median) or '?'} + {_money(acc.spot_median) or '?'})"),
            origin=r.origin))
    return out


def write(rows: list[PriceRow], source: str, source_date: str, built: str, notes: list[str]) -> str:
    import csv
    import io

    buf = io.StringIO()
    buf.write("# mlcost-lint price table: public list prices, USD per instance-hour (per slice-hour for TPUs)\n")
    buf.write(f"# source: {source}\n")
    buf.write(f"# source-date: {source_date}\n")
    buf.write(f"# built: {built}\n")
    for note in notes:
        buf.write(f"# note: {note}\n")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*COLUMNS, "note"])
    for r in sorted(rows, key=lambda r: (r.cloud, r.instance_type, r.accelerator, r.accelerator_count, r.region)):
        writer.writerow([r.cloud, r.instance_type, r.accelerator, r.accelerator_count, r.vcpus, r.memory_gib,
                         r.region, _money(r.on_demand), _money(r.spot_min), _money(r.spot_median), r.note])
    return buf.getvalue()


def build(inputs: list[tuple[str | None, Path]]) -> list[PriceRow]:
    rows: list[PriceRow] = []
    for cloud, path in inputs:
        found, _ = parse_table(read_text(path), path.name, cloud)
        rows.extend(found)
    return join_gcp(rows)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m mlcost_lint.prices.build", description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+", metavar="[CLOUD=]FILE",
                        help="SkyPilot vms.csv files, each named with its cloud (aws=aws/vms.csv), "
                             "or CSVs in the table's own columns")
    parser.add_argument("--source", required=True, help="Where the input came from (repository, commit)")
    parser.add_argument("--source-date", default="unknown",
                        help="The snapshot's own date (YYYY-MM-DD), or 'unknown' and why")
    parser.add_argument("--built", default=None, help="Build date (default: today, UTC)")
    parser.add_argument("--note", action="append", default=[], help="A note line for the header (repeatable)")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    inputs: list[tuple[str | None, Path]] = []
    for item in args.inputs:
        cloud, sep, path = item.partition("=")
        if sep and cloud.lower() in CLOUDS:
            inputs.append((cloud.lower(), Path(path)))
        else:
            inputs.append((None, Path(item)))
    try:
        rows = build(inputs)
    except PriceFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    built = args.built or _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    text = write(rows, args.source, args.source_date, built, args.note)
    Path(args.output).write_text(text, encoding="utf-8")
    print(f"wrote {len(rows)} rows to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
