"""The shipped price table, the SkyPilot build script, lookups and the
[prices] config (rules.md, "Cost estimates (v2)"). Exact figures are read
from linter/prices/gpu_prices.csv rows quoted in each test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlc_testing import ROOT
from mlcost_lint.config import ConfigError, load_settings
from mlcost_lint.prices import PriceFileError, load, parse_table, shipped
from mlcost_lint.prices.build import main as build_main
from mlcost_lint.pricing import ALWAYS_ON, HELD, SPOT_SAVING, Pricer, Quantity, Target, stale_notice

REFERENCE = ROOT.parent / "shared" / "reference" / "prices" / "gpu-vms.csv"
NODES = ("node", "nodes")
GPUS = ("GPU", "GPUs")

SKYPILOT = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone
p4d.24xlarge,A100,8.0,96.0,1152.0,{},32.7726,5.0933,us-east-1,use1-az1
p4d.24xlarge,A100,8.0,96.0,1152.0,{},32.7726,6.7915,us-east-1,use1-az2
p4d.24xlarge,A100,8.0,96.0,1152.0,{},32.7726,6.7915,us-east-1,use1-az2
p4d.24xlarge,A100,8.0,96.0,1152.0,{},32.7726,7.5,us-east-1,use1-az4
p4d.24xlarge,A100,8.0,96.0,1152.0,{},32.7726,,us-east-1,use1-az6
m5.large,,,2.0,8.0,,0.096,0.04,us-east-1,use1-az1
"""


def pricer(discount: float = 0.0, file: Path | None = None) -> Pricer:
    return Pricer(load(file), discount)


def test_shipped_table_records_source_and_dates():
    rows, info = shipped()
    assert len(rows) == 2476          # 2483 reference rows; 7 GCP host rows whose accelerator row is missing
    assert info.source.startswith("SkyPilot catalog (github.com/skypilot-org/skypilot-catalog): aws "
                                  "catalogs/v7/aws/vms.csv@001367d22a0033fac286a8c71aeac7109e431bcb")
    assert info.source_date.startswith("unknown (the catalog records no date")
    assert info.built == "2026-12-03" and info.date == "2026-12-03"


@pytest.mark.skipif(not REFERENCE.is_file(), reason="needs ../shared/reference/prices/gpu-vms.csv")
def test_build_script_reproduces_the_shipped_table(tmp_path: Path):
    out = tmp_path / "t.csv"
    header = (ROOT / "linter" / "prices" / "gpu_prices.csv").read_text().splitlines()[:6]
    meta = {k: v.strip() for k, _, v in (line[2:].partition(":") for line in header[1:])}
    notes = [line.split(": ", 1)[1] for line in header if line.startswith("# note: ")]
    argv = [str(REFERENCE), "--source", meta["source"], "--source-date", meta["source-date"],
            "--built", meta["built"], "-o", str(out)]
    for note in notes:
        argv += ["--note", note]
    assert build_main(argv) == 0
    assert out.read_text() == (ROOT / "linter" / "prices" / "gpu_prices.csv").read_text()


def test_build_from_a_skypilot_vms_csv(tmp_path: Path):
    src = tmp_path / "vms.csv"
    src.write_text(SKYPILOT)
    out = tmp_path / "t.csv"
    proc = subprocess.run([sys.executable, "-m", "mlcost_lint.prices.build", f"aws={src}", "--source", "test",
                           "--built", "2026-01-02", "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    assert lines[1:4] == ["# source: test", "# source-date: unknown", "# built: 2026-01-02"]
    # Zones aggregated: on-demand the lowest, spot min and median over distinct zone rows
    # (5.0933, 6.7915, 7.5: the exact repeat counted once); m5.large has no accelerator: dropped.
    assert lines[5:] == ["aws,p4d.24xlarge,A100,8,96,1152,us-east-1,32.7726,5.0933,6.7915,"]


def test_gcp_machine_type_is_host_plus_accelerator_row():
    # gpu-vms.csv: a2-highgpu-1g us-central1 host 0.73948 (spot 0.29576), A100 x1 2.93391 (spot 1.1472).
    rows = load().instance_rows("gcp", "a2-highgpu-1g")
    row = next(r for r in rows if r.region == "us-central1")
    assert (row.accelerator, row.accelerator_count, row.on_demand, row.spot_median) == ("A100", "1", 3.67339, 1.44296)
    assert row.note == "host 0.73948 + A100 x1 2.93391 (spot 0.29576 + 1.1472)"
    cost = pricer().cost(Quantity(Target("gcp", ("a2-highgpu-1g",), region="us-central1"), 1, NODES))
    assert (cost.amount_usd, cost.period, cost.at_least) == (2682.0, "month", False)    # 3.67339 x 730 = 2681.57
    assert cost.basis == ("1 node x $3.67339/h x 730 h = $2,682/month [a2-highgpu-1g on-demand $3.67339/h "
                          "(us-central1); list prices as of 2026-12-03]")


def test_exact_always_on_and_per_gpu_arithmetic():
    p = pricer()
    two = p.cost(Quantity(Target("aws", ("p4d.24xlarge",), region="us-east-1"), 2, NODES))
    assert (two.amount_usd, two.short()) == (47848.0, "~$47,848/month")        # 2 x 32.7726 x 730 = 47847.996
    held = p.cost(Quantity(Target("aws", ("p4d.24xlarge",), region="us-east-1"), 3, GPUS, kind=HELD,
                           per_accelerator=True, run_hours=48))
    # 3 x 32.7726 / 8 = 12.289725 -> $12.29/hour; x 48 h = 589.9068 -> $589.91 (rounded once, from the unrounded hourly)
    assert (held.amount_usd, held.period, held.run_ceiling_usd) == (12.29, "hour", 589.91)
    assert held.basis.startswith("3 GPUs x $4.096575/h = $12.29/hour; a run is bounded at 48 h: at most $589.91 "
                                 "[p4d.24xlarge on-demand $32.7726/h / 8 per p4d.24xlarge (us-east-1)")
    assert held.as_dict() == {"amount_usd": 12.29, "period": "hour", "run_ceiling_usd": 589.91,
                              "basis": held.basis, "price_date": "2026-12-03", "at_least": False}


def test_region_unknown_is_the_cheapest_region_at_least():
    cost = pricer().cost(Quantity(Target("aws", ("p4d.24xlarge",)), 1, NODES))
    # us-east-1, us-east-2 and us-west-2 all list 32.7726; ties go to the first region name.
    assert (cost.amount_usd, cost.at_least, cost.short()) == (23924.0, True, "at least ~$23,924/month")
    assert "region unknown: cheapest region us-east-1" in cost.basis


def test_unknown_type_and_region_gap_are_price_unknown_never_zero():
    p = pricer()
    missing = p.cost(Quantity(Target("aws", ("p5.4xlarge",), region="us-east-1"), 2, NODES))
    assert (missing.amount_usd, missing.short(), missing.basis) == (
        None, "price unknown", "price unknown: p5.4xlarge is not in the price table")
    gap = p.cost(Quantity(Target("azure", ("Standard_NC24ads_A100_v4",), region="westeurope"), 1, NODES))
    assert gap.basis == "price unknown: Standard_NC24ads_A100_v4 has no price for westeurope in the table"
    no_od = p.cost(Quantity(Target("aws", ("p5e.48xlarge",), region="us-east-1"), 1, NODES))
    assert no_od.amount_usd is None


def test_azure_size_any_spelling():
    p = pricer()
    for name in ("Standard_NC24ads_A100_v4", "standard_nc24ads_a100_v4", "NC24ads_A100_v4"):
        cost = p.cost(Quantity(Target("azure", (name,), region="eastus"), 1, NODES))
        assert (cost.amount_usd, cost.short()) == (2681.0, "~$2,681/month")   # 3.673 x 730 = 2681.29


def test_tpu_slice_whole_and_per_chip():
    p = pricer()
    # gpu-vms.csv: gcp tpu-v5litepod-8 us-west4 9.6 per slice-hour; 8 chips.
    whole = p.cost(Quantity(Target("gcp", accelerator=("v5litepod-8", 1), region="us-west4"), 1, ("slice", "slices")))
    chips = p.cost(Quantity(Target("gcp", accelerator=("v5litepod-8", 1), region="us-west4"), 8,
                            ("TPU chip", "TPU chips"), per_accelerator=True))
    assert whole.amount_usd == chips.amount_usd == 7008.0 and not whole.at_least
    assert chips.basis.startswith("8 TPU chips x $1.20/h x 730 h = $7,008/month [tpu-v5litepod-8 on-demand $9.60/h / 8")


def test_gpu_model_only_is_cheapest_per_gpu_instance_at_least():
    p = pricer()
    l4 = p.cost(Quantity(Target("gcp", model="L4"), 4, GPUS, per_accelerator=True))
    # g2-standard-4 us-east4 = host + L4 x1 = 0.70452 per GPU-hour; 4 x 0.70452 x 730 = 2057.2
    assert (l4.amount_usd, l4.at_least) == (2057.0, True)
    assert "g2-standard-4 on-demand $0.70452/h / 1 per g2-standard-4 (us-east4)" in l4.basis
    in_region = p.cost(Quantity(Target("gcp", model="L4", region="us-central1"), 1, GPUS, per_accelerator=True))
    assert in_region.at_least and "(us-central1)" in in_region.basis


def test_guest_accelerator_on_an_unpriced_host_is_at_least_the_accelerator():
    cost = pricer().cost(Quantity(Target("gcp", ("n1-standard-8",), accelerator=("nvidia-tesla-t4", 1),
                                         region="us-central1"), 2, NODES))
    assert (cost.amount_usd, cost.at_least) == (511.0, True)      # 2 x T4 x1 0.35 x 730
    assert "accelerator only, host n1-standard-8 is not in the price table" in cost.basis


def test_spot_saving_is_on_demand_minus_median_spot():
    cost = pricer().cost(Quantity(Target("aws", ("p4d.24xlarge",), region="us-east-1"), 2, NODES, kind=HELD,
                                  price=SPOT_SAVING))
    assert (cost.amount_usd, cost.period) == (51.96, "hour")       # 2 x (32.7726 - 6.7915)


def test_discount():
    cost = pricer(0.2).cost(Quantity(Target("aws", ("p4d.24xlarge",), region="us-east-1"), 2, NODES))
    assert cost.amount_usd == 38278.0                              # 47847.996 x 0.8 = 38278.40
    assert "less 20% discount" in cost.basis


def test_override_file_replaces_the_rows_it_covers(tmp_path: Path):
    f = tmp_path / "mine.csv"
    f.write_text("cloud,instance_type,accelerator,accelerator_count,vcpus,memory_gib,region,on_demand_usd_per_hour,"
                 "spot_usd_per_hour_min,spot_usd_per_hour_median\naws,p4d.24xlarge,A100,8,96,1152,us-east-1,20,,\n")
    p = pricer(file=f)
    assert p.cost(Quantity(Target("aws", ("p4d.24xlarge",), region="us-east-1"), 1, NODES)).amount_usd == 14600.0
    other = p.cost(Quantity(Target("aws", ("p4d.24xlarge",), region="us-east-2"), 1, NODES))
    assert other.amount_usd == 23924.0 and "price from" not in other.basis
    mine = p.cost(Quantity(Target("aws", ("p4d.24xlarge",), region="us-east-1"), 1, NODES))
    assert "price from mine.csv" in mine.basis


def test_override_may_be_a_skypilot_catalog(tmp_path: Path):
    f = tmp_path / "vms.csv"
    f.write_text(SKYPILOT.replace("32.7726", "30"))
    cost = pricer(file=f).cost(Quantity(Target("aws", ("p4d.24xlarge",), region="us-east-1"), 1, NODES))
    assert cost.amount_usd == 21900.0


@pytest.mark.parametrize("text, message", [
    ("a,b\n1,2\n", "missing column(s) cloud"),
    ("cloud,instance_type,accelerator,accelerator_count,vcpus,memory_gib,region,on_demand_usd_per_hour,"
     "spot_usd_per_hour_min,spot_usd_per_hour_median\naws,p4d.24xlarge,,,,,us-east-1,cheap,,\n", "not a number: 'cheap'"),
    ("cloud,instance_type,accelerator,accelerator_count,vcpus,memory_gib,region,on_demand_usd_per_hour,"
     "spot_usd_per_hour_min,spot_usd_per_hour_median\nibm,x,,,,,r,1,,\n", "cloud must be one of aws, gcp, azure"),
])
def test_bad_price_files(text: str, message: str):
    with pytest.raises(PriceFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_table(text, "bad.csv")


HEADER = ("cloud,instance_type,accelerator,accelerator_count,vcpus,memory_gib,region,on_demand_usd_per_hour,"
          "spot_usd_per_hour_min,spot_usd_per_hour_median\n")


def test_rows_are_read_by_column_name_as_csv_dict_rows_would_be():
    """Columns in any order, a later column of the same name winning, a
    short row's missing cells empty, blank lines neither rows nor counted
    (the row numbers of messages)."""
    text = ("region,cloud,instance_type,on_demand_usd_per_hour,accelerator,accelerator_count,vcpus,memory_gib,"
            "spot_usd_per_hour_min,spot_usd_per_hour_median,region\n"
            "ignored,aws,p4d.24xlarge,32.77,,,,,,,US-East-1\n\n")
    rows, _ = parse_table(text, "t.csv")
    assert [(r.instance_type, r.region, r.on_demand, r.spot_min) for r in rows] == [
        ("p4d.24xlarge", "us-east-1", 32.77, None)]
    # a short row lacks the last column (the region that counts): refused, as the 3rd row
    with pytest.raises(PriceFileError, match=r"t.csv: row 3: needs an instance_type \(or accelerator\) and a region"):
        parse_table(text + "ignored,aws,g5.xlarge,1.006\n", "t.csv")
    with pytest.raises(PriceFileError, match=r"bad.csv: row 3: not a number: 'x'"):
        parse_table(HEADER + "aws,a,,,,,r,1,,\n\n\naws,b,,,,,r,x,,\n", "bad.csv")


def _config(tmp_path: Path, body: str):
    (tmp_path / ".mlcost-lint.toml").write_text(body)
    return load_settings(None, tmp_path)


def test_prices_config_keys(tmp_path: Path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "mine.csv").write_text("x")
    s = _config(tmp_path, '[prices]\ndiscount = 0.15\nfile = "p/mine.csv"\n')
    assert (s.prices_discount, s.prices_file) == (0.15, tmp_path / "p" / "mine.csv")


@pytest.mark.parametrize("body, message", [
    ("[prices]\ndiscount = 1.5\n", "invalid value for 'prices.discount': expected a number < 1, got 1.5"),
    ("[prices]\ndiscount = -0.1\n", "invalid value for 'prices.discount': expected a number >= 0, got -0.1"),
    ('[prices]\ndiscount = "10%"\n', "invalid value for 'prices.discount': expected number, got \"10%\""),
    ('[prices]\nrate = 1\n', "unknown key 'prices.rate' (expected one of: discount, file)"),
    ('[prices]\nfile = "nope.csv"\n', "[prices] file 'nope.csv' does not exist or is not a regular file"),
])
def test_prices_config_errors(tmp_path: Path, body: str, message: str):
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, body)
    assert str(err.value) == f"{tmp_path / '.mlcost-lint.toml'}: {message}"


def test_stale_table_notice():
    import datetime as dt

    table = load()
    assert stale_notice(table, dt.date(2027, 6, 1)) is None             # 180 days
    assert stale_notice(table, dt.date(2027, 6, 2)) == (
        "The price table is from 2026-12-03 (181 days old): figures may be out of date; set [prices] file to a "
        "newer catalog (see `mlcost-lint prices`).")


def test_determinism():
    q = Quantity(Target("gcp", model="L4"), 3, GPUS, per_accelerator=True)
    assert len({pricer().cost(q) for _ in range(3)}) == 1


def test_price_file_is_a_bounded_plain_file_read(tmp_path: Path):
    from mlcost_lint.prices.table import MAX_FILE_BYTES, read_text

    with pytest.raises(ConfigError, match="is not a regular file"):
        _config(tmp_path, '[prices]\nfile = "/dev/zero"\n')
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(PriceFileError, match="price file is not a regular file"):
        read_text(fifo)                       # never opened: a FIFO would block
    big = tmp_path / "big.csv"
    with open(big, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(PriceFileError, match="price file is larger than 16 MB"):
        read_text(big)
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(PriceFileError, match=r"price file is not UTF-8 \(byte 0\)"):
        read_text(binary)


def test_shipped_header_alone_gives_the_same_facts_as_the_whole_table():
    # A run that prices nothing (from the run cache) reports the table's date
    # and source from its header only (prices.table.shipped_info).
    from mlcost_lint.config import Settings
    from mlcost_lint.pricing import price_info, stale_notice, table_facts_for
    from mlcost_lint.prices.table import shipped, shipped_info

    assert shipped_info() == shipped()[1]
    assert shipped_info().date == "2026-12-03"
    settings = Settings()
    facts, table = table_facts_for(settings), load()
    assert facts.override is None
    assert price_info(facts, 0.0) == price_info(table, 0.0)
    import datetime as dt
    assert stale_notice(facts, dt.date(2027, 6, 2)) == stale_notice(table, dt.date(2027, 6, 2)) is not None


def test_facts_of_a_prices_file_come_from_that_table(tmp_path: Path):
    from mlcost_lint.pricing import table_facts_for, table_for

    (tmp_path / "mine.csv").write_text("# source: our negotiated rates\n" + HEADER + "aws,p4d.24xlarge,,,,,us-east-1,20.5,,\n")
    settings = _config(tmp_path, "[prices]\nfile = 'mine.csv'\n")
    facts = table_facts_for(settings)
    assert "our negotiated rates" in facts.info.source
    assert facts.override == table_for(settings).override is not None
    assert facts.info == table_for(settings).info
