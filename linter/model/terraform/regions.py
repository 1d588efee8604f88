"""Where each resource runs: its region (and zone) from its own arguments or
its provider configuration.

AWS: the provider's ``region`` (or the resource's own ``region``, AWS
provider v6). Google: the resource's ``location``, ``zone`` or ``region``,
else the provider's ``region`` / ``zone``; a zone ("us-central1-a") gives its
region, and a storage bucket's multi-region ("US", "EU") is kept upper
case. Azure: the resource's ``location``, lower case without spaces. Any
other provider, or a value not known: UNKNOWN.
"""

from __future__ import annotations

from typing import Any

from mlcost_lint.model.cloud import CloudResource, ProviderConfig
from mlcost_lint.model.core import UNKNOWN

GCS_MULTI_REGIONS = frozenset({"US", "EU", "ASIA", "NAM4", "EUR4", "EUR5", "EUR7", "EUR8", "ASIA1"})


def zone_region(zone: str) -> str:
    """"us-central1-a" -> "us-central1"."""
    parts = zone.rsplit("-", 1)
    if len(parts) == 2 and len(parts[1]) == 1 and any(c.isdigit() for c in parts[0]):
        return parts[0]
    return zone


def _is_zone(value: str) -> bool:
    parts = value.rsplit("-", 1)
    return len(parts) == 2 and len(parts[1]) == 1 and parts[1].isalpha() and any(c.isdigit() for c in parts[0])


def apply_region(res: CloudResource, config: ProviderConfig | None) -> None:
    provider = res.provider
    attrs = res.attrs
    provider_region = config.region if config is not None else UNKNOWN
    if provider == "aws":
        region = attrs.get("region")   # AWS provider v6 resource-level region
        res.region = region if isinstance(region, str) or region is UNKNOWN else provider_region
        if region is None:
            res.region = provider_region
    elif provider == "google":
        res.region, res.zone = _google_region(res, config)
    elif provider == "azurerm":
        location = attrs.get("location")
        if isinstance(location, str):
            res.region = location.replace(" ", "").lower()
        else:
            res.region = UNKNOWN
    else:
        res.region = UNKNOWN
    if res.region is None:
        res.region = UNKNOWN


def _google_region(res: CloudResource, config: ProviderConfig | None) -> tuple[Any, Any]:
    attrs = res.attrs
    for name in ("location", "zone", "region"):
        if name not in attrs or attrs[name] is None:
            continue
        value = attrs[name]
        if value is UNKNOWN or not isinstance(value, str):
            return UNKNOWN, UNKNOWN if name != "region" else None
        if res.type == "google_storage_bucket" and name == "location":
            upper = value.upper()
            if upper in GCS_MULTI_REGIONS or "-" not in value:
                return upper, None
            return value.lower(), None
        if _is_zone(value):
            return zone_region(value), value
        return value.lower(), None
    if config is None:
        return UNKNOWN, None
    zone = getattr(config, "zone", None)
    region = config.region
    if region is UNKNOWN and isinstance(zone, str):
        region = zone_region(zone)
    return region, zone if isinstance(zone, str) else None


__all__ = ["apply_region", "zone_region"]
