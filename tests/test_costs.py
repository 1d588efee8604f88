"""Money on accelerator findings, through the real CLI: each priced rule's
exact figure and arithmetic, price unknown, the [prices] config, and every
output format (rules.md, "Cost estimates (v2)"). Unit prices are the rows of
linter/prices/gpu_prices.csv quoted in each test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from mlc_testing import FIXTURES, ROOT, run_cli

SCHEMA = json.loads((ROOT / "linter" / "report_schema.json").read_text())
VALIDATE_SARIF = ROOT.parent / "shared" / "tools" / "validate-sarif"

EKS = """provider "aws" {
  region = "us-east-1"
}

resource "aws_eks_node_group" "gpu" {
  cluster_name   = "ml"
  node_role_arn  = "arn:aws:iam::123456789012:role/node"
  subnet_ids     = ["subnet-1"]
  instance_types = ["%s"]
  scaling_config {
    min_size     = 2
    desired_size = 2
    max_size     = 8
  }
}
"""

DEV_BOX = """apiVersion: apps/v1
kind: Deployment
metadata: {name: dev-box}
spec:
  replicas: 2
  selector: {matchLabels: {app: dev-box}}
  template:
    metadata: {labels: {app: dev-box}}
    spec:
      nodeSelector:
        node.kubernetes.io/instance-type: g5.xlarge
        topology.kubernetes.io/region: us-east-1
      containers:
        - name: shell
          image: pytorch
          command: ["sleep", "infinity"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""

L4_JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: eval}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      restartPolicy: Never
      containers:
        - name: eval
          image: eval
          command: ["python", "eval.py"]
          resources: {limits: {nvidia.com/gpu: 2}}
"""


def _json(r) -> dict:
    doc = json.loads(r.out)
    jsonschema.validate(doc, SCHEMA)
    return doc


def _costs(doc: dict, code: str | None = None) -> list[tuple[str, str, int, dict]]:
    return [(f["code"], f["path"], f["line"], f["cost"]) for f in doc["findings"]
            if "cost" in f and (code is None or f["code"] == code)]


@pytest.fixture
def eks(tmp_path: Path) -> Path:
    (tmp_path / "main.tf").write_text(EKS % "p4d.24xlarge")
    return tmp_path


def test_mlc203_monthly_in_text_full_json(eks: Path):
    # aws p4d.24xlarge us-east-1 on-demand 32.7726: 2 x 32.7726 x 730 = 47,847.996 -> $47,848
    r = run_cli(".", "--no-cache", cwd=eks)
    lines = r.out.splitlines()
    assert r.code == 1
    assert lines[0] == (
        "main.tf:11:5: MLC203 [warning] EKS node group aws_eks_node_group.gpu keeps 2 x p4d.24xlarge = 16 A100-40 GPUs "
        "running with no job (scaling_config.min_size = 2); set scaling_config.min_size = 0 and desired_size = 0; a "
        "cluster autoscaler or Karpenter must run in the cluster to add nodes when jobs arrive (~$47,848/month)")
    assert lines[1:3] == ["Found 1 finding (1 warning) in 1 file.", "Estimated cost: ~$47,848/month always-on (1 finding)."]
    full = run_cli(".", "--no-cache", "--format", "full", cwd=eks).out
    assert ("     = cost: 2 nodes x $32.7726/h x 730 h = $47,848/month [p4d.24xlarge on-demand $32.7726/h "
            "(us-east-1); list prices as of 2026-12-03]") in full.splitlines()
    doc = _json(run_cli(".", "--no-cache", "--format", "json", cwd=eks))
    assert _costs(doc) == [("MLC203", "main.tf", 11, {
        "amount_usd": 47848.0, "period": "month",
        "basis": "2 nodes x $32.7726/h x 730 h = $47,848/month [p4d.24xlarge on-demand $32.7726/h (us-east-1); "
                 "list prices as of 2026-12-03]",
        "price_date": "2026-12-03", "at_least": False})]
    assert doc["findings"][0]["message"].endswith("nodes when jobs arrive")    # the figure is in "cost"
    assert doc["cost"]["always_on_usd_per_month"] == 47848.0 and doc["cost"]["prices"]["date"] == "2026-12-03"


def test_unknown_type_says_price_unknown_never_zero(tmp_path: Path):
    (tmp_path / "main.tf").write_text(EKS % "p5.4xlarge")      # in the catalogue, not in the price table
    r = run_cli(".", "--no-cache", cwd=tmp_path)
    assert r.out.splitlines()[0].endswith("to add nodes when jobs arrive (price unknown)")
    assert "Estimated cost" not in r.out
    doc = _json(run_cli(".", "--no-cache", "--format", "json", cwd=tmp_path))
    assert _costs(doc)[0][3] == {"amount_usd": None, "period": "month",
                                 "basis": "price unknown: p5.4xlarge is not in the price table",
                                 "price_date": "2026-12-03", "at_least": False}
    assert doc["cost"]["price_unknown_findings"] == 1 and doc["cost"]["always_on_usd_per_month"] is None


def test_fixture_pools_gcp_host_plus_accelerator_azure_and_region_unknown():
    doc = _json(run_cli(str(FIXTURES / "rules" / "MLC203" / "positive"), "--no-cache", "--select", "MLC203",
                        "--format", "json", cwd=ROOT))
    got = {(Path(p).name, line): (c["amount_usd"], c["at_least"]) for _, p, line, c in _costs(doc)}
    assert got[("gke.tf", 22)] == (2682.0, False)   # a2-highgpu-1g us-central1: host 0.73948 + A100 2.93391
    assert got[("gke.tf", 5)] == (511.0, True)      # 2 x n1 + T4: the T4 row 0.35 only, host not priced
    assert got[("azure.tf", 6)] == (2681.0, True)   # Standard_NC24ads_A100_v4, region unknown: eastus 3.673
    assert got[("azure.tf", 14)] == (1152.0, True)  # 3 x Standard_NC4as_T4_v3 0.526 x 730 = 1151.94
    assert got[("azure.tf", 25)] == (None, False)   # westeurope: not in the table (gaps are gaps)
    assert got[("eks.tf", 10)] == (47848.0, True)   # no provider region: cheapest region


def test_mlc205_waiting_pod_per_gpu_monthly(tmp_path: Path):
    (tmp_path / "dev.yaml").write_text(DEV_BOX)
    doc = _json(run_cli(".", "--no-cache", "--select", "MLC205", "--format", "json", cwd=tmp_path))
    # 2 replicas x 1 GPU x g5.xlarge us-east-1 1.006 / 1 GPU x 730 = 1468.76
    assert _costs(doc) == [("MLC205", "dev.yaml", 16, {
        "amount_usd": 1469.0, "period": "month",
        "basis": "2 GPUs x $1.006/h x 730 h = $1,469/month [g5.xlarge on-demand $1.006/h / 1 per g5.xlarge "
                 "(us-east-1); list prices as of 2026-12-03]",
        "price_date": "2026-12-03", "at_least": False})]


def test_notebooks_mlc201d_and_mlc205():
    doc = _json(run_cli(str(FIXTURES / "rules" / "MLC201" / "positive" / "notebooks"), "--no-cache", "--select",
                        "MLC201,MLC205", "--format", "json", cwd=ROOT))
    got = {(code, line): (c["amount_usd"], c["at_least"], c["basis"]) for code, _, line, c in _costs(doc)}
    amount, at_least, basis = got[("MLC201", 4)]
    # ml.p3.8xlarge priced as EC2 p3.8xlarge (12.24, us-east-1 the cheapest region): at least, SageMaker costs more.
    assert (amount, at_least) == (8935.0, True)
    assert basis.startswith("1 instance x $12.24/h x 730 h = $8,935/month [p3.8xlarge on-demand $12.24/h "
                            "(us-east-1); SageMaker bills above the EC2 price used here; region unknown")
    assert got[("MLC201", 13)][:2] == (1022.0, True)        # Workbench n1 + 4 x T4: the T4 x4 row 1.40
    assert got[("MLC205", 1)][:2] == (8935.0, True)


def test_demo_held_figures_mlc201_mlc204_mlc208():
    doc = _json(run_cli("fixtures/demo", "--no-cache", "--format", "json", cwd=ROOT))
    costs = {(code, Path(p).name, line): c for code, p, line, c in _costs(doc) if code != "MLC201"}
    oversized = sorted((c for code, _, _, c in _costs(doc, "MLC201")), key=lambda c: c["amount_usd"])
    # (c) 8 x (p4d.24xlarge us-east-1 32.7726 / 8 - p3.16xlarge 24.48 / 8) = 8.2926;
    # (a) 6 idle x 32.7726 / 8 = 24.579; the SkyPilot task on spot H100s in us-east-1, 4 idle of 8:
    # 4 x p5.48xlarge median spot 26.7861 / 8 = 13.3931 (at least: accelerators only, no instance type)
    assert [c["amount_usd"] for c in oversized] == [8.29, 13.39, 24.58]
    assert oversized[1]["basis"].startswith("4 GPUs x $3.348263/h = $13.39/hour [p5.48xlarge median spot")
    assert oversized[1]["at_least"] is True
    oversized = [oversized[0], oversized[2]]
    assert oversized[0]["basis"].startswith("8 GPUs x $1.036575/h = $8.29/hour [(p4d.24xlarge on-demand $32.7726/h "
                                            "/ 8 per p4d.24xlarge (us-east-1)) - (p3.16xlarge on-demand $24.48/h / 8")
    assert oversized[1]["basis"].startswith("6 GPUs x $4.096575/h = $24.58/hour")
    assert costs[("MLC204", "llama-sft-pytorchjob.yaml", 10)]["amount_usd"] == 32.77       # 8 x 4.096575
    # MLC208: 8 x (32.7726 - median spot 6.7915) / 8 = 25.9811
    assert costs[("MLC208", "llama-sft-pytorchjob.yaml", 23)]["amount_usd"] == 25.98
    # A Job on the spot node group holds its GPUs at the spot price: 4 x g5.12xlarge median spot 2.5445 / 4
    spot = costs[("MLC204", "spot-experiment-job.yaml", 6)]
    assert spot["amount_usd"] == 2.54 and "median spot $2.5445/h" in spot["basis"]
    # Always on: MLC203 2 x p4d.24xlarge 47,848; the dev box, 1 GPU on the spot g5.12xlarge group
    # (median spot 2.5445 / 4 GPUs x 730 = 464.37); the Ray workers, 2 GPUs of g5.xlarge (1.006 x 2 x 730 = 1468.76).
    assert costs[("MLC205", "dev-box.yaml", 19)]["amount_usd"] == 464.0
    assert costs[("MLC203", "ray-cluster.yaml", 22)]["amount_usd"] == 1469.0
    # The ParallelCluster queue: MinCount 1 of p5.48xlarge (98.32 x 730 = 71,773.6)
    assert costs[("MLC203", "pcluster-config.yaml", 26)]["amount_usd"] == 71774.0
    # The sbatch job on it, 2 nodes x 8 H100: 16 x (98.32 - median spot 26.7861) / 8 = 143.0678
    assert costs[("MLC208", "pretrain-llama.sbatch", 3)]["amount_usd"] == 143.07
    assert doc["cost"]["always_on_usd_per_month"] == 47848.0 + 71774.0 + 464.0 + 1469.0
    assert doc["cost"]["held_usd_per_hour"] == round(24.58 + 8.29 + 13.39 + 32.77 + 25.98 + 2.54 + 143.07, 2)


def test_gpu_model_only_selector_is_at_least(tmp_path: Path):
    (tmp_path / "job.yaml").write_text(L4_JOB)
    doc = _json(run_cli(".", "--no-cache", "--select", "MLC204", "--format", "json", cwd=tmp_path))
    (_, _, _, cost), = _costs(doc)
    # 2 x the cheapest GCP L4 per GPU: g2-standard-4 us-east4 0.70452
    assert (cost["amount_usd"], cost["period"], cost["at_least"]) == (1.41, "hour", True)
    text = run_cli(".", "--no-cache", "--select", "MLC204", cwd=tmp_path).out
    assert "set spec.activeDeadlineSeconds (at least ~$1.41/hour)" in text


def test_run_ceiling_from_a_deadline():
    from mlcost_lint.pricing import HELD, Pricer, Quantity, Target
    from mlcost_lint.prices import load

    cost = Pricer(load()).cost(Quantity(Target("aws", ("g5.xlarge",), region="us-east-1"), 4, ("GPU", "GPUs"), HELD,
                                        per_accelerator=True, run_hours=10))
    assert (cost.amount_usd, cost.run_ceiling_usd) == (4.02, 40.24)       # 4 x 1.006; x 10 h
    assert cost.short() == "~$4.02/hour, up to $40.24/run"


def test_prices_config_discount_and_file_through_the_cli(eks: Path):
    (eks / "mine.csv").write_text(
        "# source: our negotiated rates\ncloud,instance_type,accelerator,accelerator_count,vcpus,memory_gib,region,"
        "on_demand_usd_per_hour,spot_usd_per_hour_min,spot_usd_per_hour_median\n"
        "aws,p4d.24xlarge,A100,8,96,1152,us-east-1,25,,\n")
    (eks / ".mlcost-lint.toml").write_text('[prices]\ndiscount = 0.1\nfile = "mine.csv"\n')
    doc = _json(run_cli(".", "--no-cache", "--format", "json", cwd=eks))
    # 2 x 25 x 0.9 x 730 = 32,850
    (_, _, _, cost), = _costs(doc)
    assert cost["amount_usd"] == 32850.0
    assert cost["basis"] == ("2 nodes x $22.50/h x 730 h = $32,850/month [p4d.24xlarge on-demand $25.00/h "
                             "(us-east-1); price from mine.csv; less 10% discount; list prices as of 2026-12-03]")
    assert doc["cost"]["prices"]["discount"] == 0.1 and doc["cost"]["prices"]["override_file"].endswith("mine.csv")


def test_bad_price_file_is_exit_2_one_line(eks: Path):
    (eks / "mine.csv").write_text("just,some,columns\n1,2,3\n")
    (eks / ".mlcost-lint.toml").write_text('[prices]\nfile = "mine.csv"\n')
    r = run_cli(".", "--no-cache", cwd=eks)
    assert r.code == 2 and r.out == ""
    assert r.err == ("mlcost-lint: error: [prices] file: mine.csv: not a price table: missing column(s) cloud, "
                     "instance_type, accelerator, accelerator_count, vcpus, memory_gib, region, on_demand_usd_per_hour, "
                     "spot_usd_per_hour_min, spot_usd_per_hour_median (expected cloud,instance_type,accelerator,"
                     "accelerator_count,vcpus,memory_gib,region,on_demand_usd_per_hour,spot_usd_per_hour_min,"
                     "spot_usd_per_hour_median or a SkyPilot vms.csv)\n")


def test_sort_cost_and_statistics(tmp_path: Path):
    (tmp_path / "main.tf").write_text(EKS % "p4d.24xlarge")
    (tmp_path / "dev.yaml").write_text(DEV_BOX)
    (tmp_path / "job.yaml").write_text(L4_JOB)
    by_cost = run_cli(".", "--no-cache", "--sort", "cost", "--select", "MLC203,MLC204,MLC205,MLC102",
                      cwd=tmp_path).out.splitlines()
    assert [ln.split(" ")[0:2] for ln in by_cost[:3]] == [["main.tf:11:5:", "MLC203"], ["dev.yaml:16:11:", "MLC205"],
                                                          ["job.yaml:4:1:", "MLC204"]]
    assert by_cost[-2] == ("Estimated cost: ~$49,317/month always-on (2 findings); at least ~$1.41/hour held while "
                           "jobs run (1 finding).")
    stats = run_cli(".", "--no-cache", "--statistics", "--select", "MLC203,MLC204,MLC205", cwd=tmp_path).out
    assert stats.splitlines() == [
        "1  MLC203  idle-gpu-capacity         ~$47,848/month",
        "1  MLC204  gpu-job-without-deadline  at least ~$1.41/hour",
        "1  MLC205  gpu-not-released          ~$1,469/month",
        "3  total  ~$49,317/month + at least ~$1.41/hour",
    ]
    rows = json.loads(run_cli(".", "--no-cache", "--statistics", "--format", "json", "--select", "MLC203",
                              cwd=tmp_path).out)
    assert rows[0]["cost"]["always_on_usd_per_month"] == 47848.0


def test_github_step_summary(eks: Path, tmp_path_factory):
    summary = tmp_path_factory.mktemp("gh") / "summary.md"
    r = run_cli(".", "--no-cache", "--format", "github", cwd=eks, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.out.startswith("::warning file=main.tf,line=11,col=5,title=MLC203 idle-gpu-capacity::EKS node group")
    assert r.out.rstrip().endswith("(~$47,848/month)")
    message = ("EKS node group aws_eks_node_group.gpu keeps 2 x p4d.24xlarge = 16 A100-40 GPUs running with no "
               "job (scaling_config.min_size = 2); set scaling_config.min_size = 0 and desired_size = 0; a cluster "
               "autoscaler or Karpenter must run in the cluster to add nodes when jobs arrive")
    assert summary.read_text().splitlines() == [
        "### mlcost-lint: 1 finding (1 warning) in 1 file", "",
        "Estimated cost: ~$47,848/month always-on (1 finding).", "",
        "#### Top findings by cost", "", "| cost | rule | where | finding |", "|---|---|---|---|",
        f"| ~$47,848/month | MLC203 | `main.tf:11` | {message} |", "",
        "#### All findings", "", "| level | rule | where | finding | cost |", "|---|---|---|---|---|",
        f"| warning | MLC203 idle-gpu-capacity | `main.tf:11` | {message} | ~$47,848/month |",
    ]
    plain = run_cli(".", "--no-cache", "--format", "github", cwd=eks, env={"GITHUB_STEP_SUMMARY": ""})
    assert plain.code == 1


def test_sarif_cost_properties(eks: Path):
    out = eks / "r.sarif"
    run_cli(".", "--no-cache", "--format", "sarif", "-o", str(out), cwd=eks)
    run = json.loads(out.read_text())["runs"][0]
    result = run["results"][0]
    assert result["message"]["text"].endswith("(~$47,848/month)")
    assert result["properties"]["cost"]["amount_usd"] == 47848.0
    assert run["properties"]["cost"]["always_on_usd_per_month"] == 47848.0
    if not VALIDATE_SARIF.exists():
        pytest.skip("needs ../shared/tools/validate-sarif")
    proc = subprocess.run([str(VALIDATE_SARIF), str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_figures_are_deterministic():
    outs = {run_cli("fixtures/demo", "--no-cache", "--format", "json", cwd=ROOT).out for _ in range(2)}
    assert len(outs) == 1


# ------------------------------------------------- mlcost-lint prices ---

def test_prices_command_rows(tmp_path: Path):
    r = run_cli("prices", "p4d.24xlarge", "--region", "us-east-1", cwd=tmp_path)
    assert r.code == 0 and r.err == ""
    lines = r.out.splitlines()
    assert lines[0] == "Price table: 2476 rows, list prices in USD per hour, as of 2026-12-03"
    assert lines[1].startswith("Source: SkyPilot catalog (github.com/skypilot-org/skypilot-catalog): aws ")
    assert lines[2] == ("Source date: unknown (the catalog records no date; its contents suggest 2025 or later); "
                        "built 2026-12-03")
    assert lines[3:] == [
        "cloud  type          accelerators  region     on-demand  per accel.  spot (median)  note",
        "aws    p4d.24xlarge  8 x A100-40   us-east-1  $32.7726   $4.096575   $6.7915",
    ]
    gcp = run_cli("prices", "a2-highgpu-1g", "--region", "us-central1", cwd=tmp_path).out.splitlines()
    assert gcp[-1] == ("gcp    a2-highgpu-1g  1 x A100-40   us-central1  $3.67339   $3.67339    $1.44296       "
                       "host 0.73948 + A100 x1 2.93391 (spot 0.29576 + 1.1472)")
    azure = run_cli("prices", "standard_nc24ads_a100_v4", "--region", "eastus", cwd=tmp_path).out.splitlines()
    assert azure[-1].split() == ["azure", "Standard_NC24ads_A100_v4", "1", "x", "A100-80", "eastus", "$3.673",
                                 "$3.673", "$0.444433"]
    tpu = run_cli("prices", "v5litepod-8", "--region", "us-west4", cwd=tmp_path).out.splitlines()
    assert tpu[-1].split() == ["gcp", "tpu-v5litepod-8", "8", "x", "TPU-v5e", "us-west4", "$9.60", "$1.20", "$3.7536"]


def test_prices_command_summary_json_and_unknown(tmp_path: Path):
    r = run_cli("prices", cwd=tmp_path)
    assert r.code == 0 and "Rows per cloud: aws 743, azure 199, gcp 1534" in r.out.splitlines()
    doc = json.loads(run_cli("prices", "g5.xlarge", "--region", "us-east-1", "--format", "json", cwd=tmp_path).out)
    assert doc["table"]["date"] == "2026-12-03"
    assert [(x["name"], x["on_demand_usd_per_hour"], x["spot_usd_per_hour_median"]) for x in doc["rows"]] == [
        ("g5.xlarge", 1.006, 0.4028)]
    missing = run_cli("prices", "p5.4xlarge", cwd=tmp_path)
    assert missing.code == 1 and missing.out.splitlines()[-1] == "No row for p5.4xlarge: price unknown."


def test_prices_is_not_a_path_and_a_path_named_prices_still_lints(tmp_path: Path):
    (tmp_path / "prices").mkdir()
    (tmp_path / "prices" / "main.tf").write_text(EKS % "p4d.24xlarge")
    lint = run_cli("./prices", "--no-cache", cwd=tmp_path)
    assert lint.code == 1 and lint.out.startswith("prices/main.tf:11:5: MLC203 [warning]")
    table = run_cli("prices", cwd=tmp_path)
    assert table.code == 0 and table.out.startswith("Price table: ")
    assert table.err == "mlcost-lint: note: 'prices' is a subcommand here; to lint the path, run mlcost-lint ./prices\n"


def test_a_child_module_called_twice_prices_both_node_groups(tmp_path: Path):
    child = EKS.split("resource ", 1)[1]
    (tmp_path / "modules" / "gpu").mkdir(parents=True)
    (tmp_path / "modules" / "gpu" / "main.tf").write_text("resource " + child % "p4d.24xlarge")
    (tmp_path / "main.tf").write_text('provider "aws" {\n  region = "us-east-1"\n}\n'
                                      'module "a" {\n  source = "./modules/gpu"\n}\n'
                                      'module "b" {\n  source = "./modules/gpu"\n}\n')
    doc = _json(run_cli(".", "--no-cache", "--select", "MLC203", "--format", "json", cwd=tmp_path))
    (_, path, _, cost), = _costs(doc)
    # One finding for the block, two node groups: 4 x 32.7726 x 730 = 95,695.99
    assert (path, cost["amount_usd"], cost["at_least"]) == ("modules/gpu/main.tf", 95696.0, False)
    assert cost["basis"].startswith("4 nodes x $32.7726/h x 730 h = $95,696/month")


def test_findings_with_equal_quantities_are_priced_once(monkeypatch):
    from mlcost_lint.config import Settings
    from mlcost_lint.model.core import Location
    from mlcost_lint.pricing import HELD, Pricer, Quantity, Target, price_findings
    from mlcost_lint.rule import Finding

    def quantity(count):
        return Quantity(Target("aws", ("g5.xlarge",), region="us-east-1"), count, ("GPU", "GPUs"), HELD,
                        per_accelerator=True)

    findings = [Finding("MLC204", "m", Location("a.yaml", n), f"Job/{n}", quantity=quantity(4 if n < 3 else 2))
                for n in range(1, 5)]
    asked = []
    real = Pricer.cost
    monkeypatch.setattr(Pricer, "cost", lambda self, q: asked.append(q) or real(self, q))
    price_findings(findings, Settings())
    assert asked == [quantity(4), quantity(2)]
    assert [f.cost.amount_usd for f in findings] == [4.02, 4.02, 2.01, 2.01]
