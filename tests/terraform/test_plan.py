"""Plan JSON (`terraform show -json`) to CloudResources located in the plan file."""

import json

from mlcost_lint.config import Settings
from mlcost_lint.model.core import UNKNOWN, Location
from mlcost_lint.model.terraform import build_terraform, is_plan_json
from mlcost_lint.parse import parse_bytes
from mlcost_lint.parse.document import FileKind

from conftest import FIXTURES, by_address

PATH = "plans/tfplan.json"


def plan_model():
    f = parse_bytes((FIXTURES / "plan" / "tfplan.json").read_bytes(), PATH, FileKind.JSON)
    assert is_plan_json(f.documents[0].data)
    return build_terraform([f], Settings())


def test_is_plan_json():
    assert is_plan_json({"format_version": "1.2", "planned_values": {}})
    assert is_plan_json({"format_version": "1.0", "terraform_version": "1.9.0", "values": {}})
    assert not is_plan_json({"resource": {}})
    assert not is_plan_json([1, 2])
    assert not is_plan_json({"format_version": "1.0"})


def test_plan_resources_regions_tags_and_lines():
    model = plan_model()
    r = by_address(model)
    assert sorted(r) == ["aws_s3_bucket.checkpoints", "module.gpu.aws_eks_node_group.this[0]"]  # data skipped
    bucket = r["aws_s3_bucket.checkpoints"]
    assert bucket.origin == "plan"
    assert bucket.location == Location(PATH, 7, 9)
    assert bucket.region == "us-east-1"
    assert bucket.tags == {"Name": "checkpoints", "team": "ml"}     # tags_all
    ng = r["module.gpu.aws_eks_node_group.this[0]"]
    assert ng.location == Location(PATH, 40, 13)
    assert ng.region == "us-west-2"                                  # provider_config_key aws.west
    assert ng.attrs["scaling_config"] == [{"desired_size": 1, "max_size": 4, "min_size": 1}]
    assert ng.loc("scaling_config.min_size") == Location(PATH, 54, 21)
    assert ng.attrs["arn"] is UNKNOWN                                # after_unknown
    assert ng.tags is UNKNOWN                                        # tags_all unknown in the plan


def test_plan_providers():
    model = plan_model()
    assert [(p.name, p.alias, p.region, p.default_tags) for p in model.providers] == [
        ("aws", None, "us-east-1", {"team": "ml"}), ("aws", "west", "us-west-2", None)]


def test_state_json_and_google_labels():
    state = {
        "format_version": "1.0", "terraform_version": "1.9.0",
        "values": {"root_module": {"resources": [{
            "address": "google_storage_bucket.b", "mode": "managed", "type": "google_storage_bucket",
            "name": "b", "values": {"location": "EU", "labels": {"a": "1"},
                                    "terraform_labels": {"a": "1", "team": "x"}}}]}},
    }
    f = parse_bytes(json.dumps(state, indent=2).encode(), "state.json", FileKind.JSON)
    model = build_terraform([f], Settings())
    b = model.resources[0]
    assert (b.region, b.tags, b.tags_attribute) == ("EU", {"a": "1", "team": "x"}, "labels")
