"""Region names across clouds: zone -> region, which cloud a region name
belongs to, and whether a bucket location covers a compute region (GCS
multi-regions ``US``/``EU``/``ASIA`` cover the regions of their continent)."""

from __future__ import annotations

import re

_AWS_REGION = re.compile(r"^[a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d+$")
_GCP_REGION = re.compile(r"^[a-z]+-[a-z]+\d+$")
_AZURE_REGION = re.compile(r"^[a-z]+[a-z0-9]*$")
_AWS_ZONE = re.compile(r"^([a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d+)[a-z]$")
_GCP_ZONE = re.compile(r"^([a-z]+-[a-z]+\d+)-[a-z]$")
_AZURE_ZONE = re.compile(r"^([a-z]+[a-z0-9]*)-\d$")

# GCS multi-regions -> region name prefixes of their continent.
GCS_MULTI_REGIONS: dict[str, tuple[str, ...]] = {
    "us": ("us-", "northamerica-"),
    "eu": ("europe-",),
    "asia": ("asia-",),
}


def normalise(region: str) -> str:
    """"West Europe" -> "westeurope"; "US" -> "us"; "eu-west-1" unchanged."""
    text = region.strip().lower()
    if " " in text:
        text = text.replace(" ", "")
    return text


def zone_to_region(zone: str) -> str | None:
    text = normalise(zone)
    for pattern in (_AWS_ZONE, _GCP_ZONE, _AZURE_ZONE):
        m = pattern.match(text)
        if m:
            return m.group(1)
    return None


def cloud_of_region(region: str) -> str | None:
    text = normalise(region)
    if text in GCS_MULTI_REGIONS:
        return "gcp"
    if _AWS_REGION.match(text):
        return "aws"
    if _GCP_REGION.match(text):
        return "gcp"
    if _AZURE_REGION.match(text):
        return "azure"
    return None


def same_location(bucket_region: str, compute_region: str, bucket_cloud: str | None = None) -> bool | None:
    """True when a bucket in ``bucket_region`` is local to compute in
    ``compute_region``; False when it is another region of the same cloud;
    None when it cannot be told (different clouds, a GCS dual-region or a
    name we do not recognise)."""
    b, c = normalise(bucket_region), normalise(compute_region)
    if bucket_cloud == "gcp" and b not in GCS_MULTI_REGIONS and not _GCP_REGION.match(b):
        return None
    if bucket_cloud is not None and cloud_of_region(b) != bucket_cloud:
        return None            # e.g. a GCS dual-region code that looks like an Azure name
    if b == c:
        return True
    if b in GCS_MULTI_REGIONS:
        if cloud_of_region(c) != "gcp":
            return None
        return c.startswith(GCS_MULTI_REGIONS[b])
    cb, cc = cloud_of_region(b), cloud_of_region(c)
    if cb is None or cc is None or cb != cc:
        return None
    if cb == "gcp" and not _GCP_REGION.match(b):
        return None            # a dual-region (NAM4, EUR4) or custom pair
    return False
