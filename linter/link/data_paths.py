"""Object-store URIs -> bucket resources and bucket regions (``DataPathLink``).

URIs come from training configs (``settings.data_paths``, ``output_dir``)
and from container argv words and env values. Forms: ``s3://``
(``s3a://``), ``gs://``, ``az://container/...``, ``abfs(s)://`` /
``wasb(s)://container@account.(dfs|blob).core.windows.net/...``,
``https://<account>.blob.core.windows.net/<container>/...``, and S3 HTTPS
endpoints (``https://bucket.s3.eu-west-1.amazonaws.com/...``,
``https://s3.eu-west-1.amazonaws.com/bucket/...``) whose endpoint names the
region. A bucket name holding an expansion is unknown and skipped.

Bucket region, first that is known: the bucket resource in the scan
(``aws_s3_bucket.bucket``, ``google_storage_bucket.name``,
``azurerm_storage_account.name`` / ``azurerm_storage_container``), a
regional endpoint in the URI, then ``settings.bucket_regions``.
"""

from __future__ import annotations

import re
from typing import Any

from mlcost_lint.config import Settings
from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.cloud import CloudResource
from mlcost_lint.model.core import Location
from mlcost_lint.model.project import DataPathLink, Project
from mlcost_lint.link.shell import program_of, word_location

_SIMPLE = re.compile(r"^(s3a?|s3n|gs|az)://([^/\s?#]+)(/[^\s]*)?$", re.I)
_ABFS = re.compile(r"^(abfss?|wasbs?)://([^@/\s]+)@([a-z0-9]{3,24})\.(?:dfs|blob)\.core\.windows\.net(/[^\s]*)?$", re.I)
_BLOB_HTTPS = re.compile(r"^https://([a-z0-9]{3,24})\.(?:blob|dfs)\.core\.windows\.net(?:/([^/\s?#]+))?(/[^\s]*)?$", re.I)
_S3_VHOST = re.compile(r"^https://([a-z0-9.\-]+)\.s3[.-]([a-z]{2}(?:-gov)?-[a-z]+-\d)\.amazonaws\.com(/[^\s]*)?$", re.I)
_S3_PATH = re.compile(r"^https://s3[.-]([a-z]{2}(?:-gov)?-[a-z]+-\d)\.amazonaws\.com/([a-z0-9.\-]+)(/[^\s]*)?$", re.I)
_OUTPUT_KEYS = re.compile(r"(output|checkpoint|ckpt|save|dirpath|log_dir|logging_dir|(?:^|[-_])out(?:$|[-_]))", re.I)


@dataclass(frozen=True, slots=True)
class ParsedUri:
    scheme: str                 # "s3" | "gs" | "azure"
    bucket: str                 # S3/GCS bucket or Azure container
    account: str | None = None  # Azure storage account
    endpoint_region: str | None = None


def parse_uri(text: str) -> ParsedUri | None:
    text = text.strip()
    if "$" in text or "{{" in text or "`" in text:
        # Only the bucket must be literal: s3://bucket/${RUN}/ is fine.
        head = re.split(r"\$|\{\{|`", text, maxsplit=1)[0]
        if head.count("/") < 3 and not head.startswith("https://"):
            return None
        text = head
    m = _SIMPLE.match(text)
    if m:
        scheme = m.group(1).lower()
        bucket = m.group(2)
        if scheme == "az":
            if "@" in bucket:
                container, _, host = bucket.partition("@")
                return ParsedUri("azure", container, host.split(".")[0].lower())
            return ParsedUri("azure", bucket, None)
        return ParsedUri("s3" if scheme.startswith("s3") else "gs", bucket)
    m = _ABFS.match(text)
    if m:
        return ParsedUri("azure", m.group(2), m.group(3).lower())
    m = _BLOB_HTTPS.match(text)
    if m:
        return ParsedUri("azure", m.group(2) or "", m.group(1).lower())
    m = _S3_VHOST.match(text)
    if m:
        return ParsedUri("s3", m.group(1), endpoint_region=m.group(2).lower())
    m = _S3_PATH.match(text)
    if m:
        return ParsedUri("s3", m.group(2), endpoint_region=m.group(1).lower())
    return None


def _candidates(text: str) -> list[str]:
    """URIs inside one argv word or env value (``--data=s3://b/x``, ``a,b``)."""
    if "://" not in text:   # most words: no part of them can hold one
        return []
    out = []
    for part in re.split(r"[=,;\s]", text):
        part = part.strip().strip("'\"")
        if "://" in part and parse_uri(part) is not None:
            out.append(part)
    return out


@dataclass(slots=True)
class BucketIndex:
    s3: dict[str, list[CloudResource]]
    gcs: dict[str, list[CloudResource]]
    accounts: dict[str, list[CloudResource]]
    containers: dict[str, list[CloudResource]]

    @classmethod
    def build(cls, project: Project) -> "BucketIndex":
        idx = cls({}, {}, {}, {})
        for res in project.terraform.resources:
            if res.mode != "managed":
                continue
            table, key = {
                "aws_s3_bucket": (idx.s3, "bucket"),
                "google_storage_bucket": (idx.gcs, "name"),
                "azurerm_storage_account": (idx.accounts, "name"),
                "azurerm_storage_container": (idx.containers, "name"),
            }.get(res.type, (None, ""))
            if table is None:
                continue
            name = res.attrs.get(key)
            if isinstance(name, str):
                table.setdefault(name.lower() if table is idx.accounts else name, []).append(res)
        return idx


def _region_of(res: CloudResource) -> str | None:
    if isinstance(res.region, str) and res.region:
        return res.region
    for key in ("location", "region"):
        value = res.attrs.get(key)
        if isinstance(value, str) and value and "$" not in value:
            return value
    return None


def resolve_bucket(uri: ParsedUri, index: BucketIndex, settings: Settings
                   ) -> tuple[CloudResource | None, str | None, str, Location | None]:
    """(bucket resource, region, what said so, where)."""
    resource: CloudResource | None = None
    if uri.scheme == "s3":
        hits = index.s3.get(uri.bucket, [])
    elif uri.scheme == "gs":
        hits = index.gcs.get(uri.bucket, [])
    else:
        hits = index.accounts.get(uri.account, []) if uri.account else []
        if not hits and uri.account is None:
            containers = index.containers.get(uri.bucket, [])
            if len(containers) == 1:
                account = containers[0].attrs.get("storage_account_name")
                if isinstance(account, str):
                    hits = index.accounts.get(account.lower(), [])
    if len(hits) == 1:
        resource = hits[0]
        region = _region_of(resource)
        if region:
            return resource, region, resource.address, resource.loc("location") if uri.scheme != "s3" else resource.location
    if uri.endpoint_region:
        return resource, uri.endpoint_region, "regional endpoint in the URI", None
    for key in (uri.account, uri.bucket):
        if key and key in settings.bucket_regions:
            return resource, settings.bucket_regions[key], "bucket-regions in the config", None
    return resource, None, "", None


def link_data_paths(project: Project, settings: Settings) -> None:
    index = BucketIndex.build(project)
    seen: set[tuple[int, str, str]] = set()

    def add(uri_text: str, evidence: Location, used_by: Any, writes: bool, template: Any = None,
            container: Any = None) -> None:
        parsed = parse_uri(uri_text)
        if parsed is None or not parsed.bucket:
            return
        key = (id(used_by), uri_text, str(evidence))
        if key in seen:
            return
        seen.add(key)
        bucket, region, source, where = resolve_bucket(parsed, index, settings)
        project.links.data_paths.append(DataPathLink(
            uri=uri_text, evidence=evidence,
            bucket_name=(parsed.account or parsed.bucket) if parsed.scheme == "azure" else parsed.bucket, bucket=bucket, used_by=used_by, scheme=parsed.scheme, account=parsed.account,
            bucket_region=region, region_source=source, region_location=where, template=template,
            container=container, writes=writes))

    for config in project.training:
        s = config.settings
        for setting in s.data_paths:
            if isinstance(setting.value, str):
                add(setting.value, setting.location or config.location, config,
                    bool(_OUTPUT_KEYS.search(setting.key or "")))
        out = s.output_dir
        if isinstance(out.value, str) and out.explicit:
            add(out.value, out.location or config.location, config, True)
    for workload in project.kubernetes.workloads:
        for template in workload.templates:
            for container in template.containers:
                previous = ""
                for command in program_of(container).commands:
                    for word in command.words:
                        for uri in _candidates(word.text):
                            flag = word.text.split("=", 1)[0] if word.text.startswith("-") else previous
                            add(uri, word_location(container, word), workload, bool(_OUTPUT_KEYS.search(flag)),
                                template, container)
                        previous = word.text if word.text.startswith("-") else ""
                for name, env in container.env.items():
                    if isinstance(env.value, str):
                        for uri in _candidates(env.value):
                            add(uri, env.location, workload, bool(_OUTPUT_KEYS.search(name)), template, container)
