from __future__ import annotations

from typing import Iterator

from mlcost_lint.model.core import Related
from mlcost_lint.model.kubernetes import Workload
from mlcost_lint.rule import Category, Confidence, Finding, Level, Reports, Rule

_CLOUD_OF_SCHEME = {"s3": "aws", "gs": "gcp", "azure": "azure"}


class CrossRegionDataPath(Rule):
    """
    ## What it does
    Flags a training job that reads data from, or writes checkpoints to, an
    object-store path (`s3://`, `gs://`, `az://`, `abfs(s)://`,
    `https://<account>.blob.core.windows.net`) whose bucket is in a different
    region than the compute that runs it.

    Bucket regions come from the bucket resource in the scan (and its
    provider's region or `location`), a regional endpoint in the URI, or the
    `[bucket-regions]` config table. Compute regions come from the linked
    node group/pool, a `topology.kubernetes.io/region` (or zone) node
    selector, or `default-region`. GCS multi-regions (`US`, `EU`, `ASIA`)
    match the regions of their continent. Unknown on either side, or two
    different clouds: no finding.

    ## Why is this expensive
    Data leaving a region is billed per GB (about $0.02/GB between AWS
    regions, more between continents), and a training job reads its dataset
    every epoch and writes multi-GB checkpoints many times. The GPUs also
    wait on the slower cross-region reads.

    ## Example
    ```yaml
    # configs/sft.yaml, run by a node group in us-east-1
    output_dir: s3://ckpt-eu/llama      # aws_s3_bucket in eu-west-1
    ```

    ## Fix
    Keep data and checkpoints in a bucket in the compute's region (replicate
    the dataset once), or run the job in the bucket's region.
    """

    code = "MLC501"
    name = "cross-region-data-path"
    level = Level.WARNING
    confidence = Confidence.HIGH
    category = Category.NETWORK
    reports_in = frozenset({Reports.TRAINING, Reports.WORKLOAD})
    summary = "Training data or checkpoints in a bucket in another region than the compute"
    fix = "Use a bucket in the compute's region, or run the job where the data is."

    def check(self, project, settings) -> Iterator[Finding]:
        from mlcost_lint.link import compute_region_of
        from mlcost_lint.link.regions import same_location

        reported: set[tuple[str, str, str]] = set()
        for link in project.links.data_paths:
            if not link.bucket_region:
                continue
            computes = []
            if isinstance(link.used_by, Workload):
                computes.append((link.used_by, compute_region_of(project, link.template, settings)))
            else:
                users = project.links.workloads_of(link.used_by)
                if users:
                    for user in users:
                        computes.append((user.workload, compute_region_of(project, user.template, settings)))
                else:
                    computes.append((None, compute_region_of(project, None, settings)))
            for workload, compute in computes:
                if compute is None:
                    continue
                region, how, where = compute
                if same_location(link.bucket_region, region, _CLOUD_OF_SCHEME.get(link.scheme)) is not False:
                    continue
                address = f"{link.used_by.address}/{link.bucket_name}"
                key = (address, str(link.evidence), region)
                if key in reported:
                    continue
                reported.add(key)
                verb = "writes checkpoints to" if link.writes else "reads"
                runner = f"{workload.kind} {workload.name}" if workload is not None else \
                    f"Training config {link.used_by.path}, run"
                bucket_src = link.region_source
                related = []
                if link.region_location is not None:
                    related.append(Related(link.region_location, f"bucket region {link.bucket_region}"))
                if where is not None:
                    related.append(Related(where, f"compute region {region}"))
                if not isinstance(link.used_by, Workload) and workload is not None:
                    related.append(Related(workload.location, f"{workload.kind} {workload.name} runs this config"))
                yield self.finding(
                    f"{runner} in {region} ({how}) {verb} {link.uri}, whose bucket is in {link.bucket_region} "
                    f"({bucket_src}): every byte crosses regions; use a bucket in {region} or run the job in "
                    f"{link.bucket_region}",
                    link.evidence,
                    address,
                    related=related,
                )
