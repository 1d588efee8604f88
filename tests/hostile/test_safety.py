"""Safety: a lint run opens no socket, starts no process, executes no config,
prints no secret, and writes SARIF URIs that stay inside %SRCROOT%."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import CORPUS, FIXTURES, FORMATS, SECRET_VALUE, internal_errors, lint_tree, render
from hostile_helpers import SENTINEL, findings_of

from mlcost_lint.config import Settings
from mlcost_lint.secrets import REDACTED, collect_secrets, looks_secret


class Forbidden(AssertionError):
    pass


@pytest.fixture
def no_network_no_processes(monkeypatch):
    """Every way out of the process raises (and is recorded, in case a broad
    ``except`` swallows the exception)."""
    calls: list[str] = []

    def refuse(name: str):
        def fake(*args, **kwargs):
            calls.append(name)
            raise Forbidden(f"{name} called during a lint run: {args[:2]!r}")
        return fake

    for name in ("connect", "connect_ex", "sendto", "bind"):
        monkeypatch.setattr(socket.socket, name, refuse(f"socket.{name}"))
    for name in ("getaddrinfo", "gethostbyname", "create_connection"):
        monkeypatch.setattr(socket, name, refuse(f"socket.{name}"))
    monkeypatch.setattr(subprocess, "Popen", refuse("subprocess.Popen"))
    for name in ("system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp", "spawnv", "spawnve",
                 "execv", "execve", "execl", "execle", "execlp", "execlpe", "execvp", "execvpe"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse(f"os.{name}"))
    return calls


def _lint_and_render(root: Path, paths: list[str], cache_dir: Path | None = None) -> tuple[object, dict[str, str]]:
    settings = Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root)
    result = lint_tree(root, settings, paths=paths, cache_dir=cache_dir)
    return result, {fmt: render(result, settings, fmt, root) for fmt in FORMATS}


def test_no_socket_and_no_subprocess_over_fixtures_and_a_corpus_slice(no_network_no_processes, tmp_path: Path):
    corpus = [os.path.relpath(p, FIXTURES.parent.parent) for p in sorted(CORPUS.iterdir())[:2]] \
        if CORPUS.is_dir() else []
    result, outputs = _lint_and_render(FIXTURES.parent.parent, [os.path.relpath(FIXTURES, FIXTURES.parent.parent),
                                                                *corpus], cache_dir=tmp_path / "cache")
    assert no_network_no_processes == []
    assert len(result.findings) > 100 and internal_errors(result) == []
    assert all(outputs.values())


def test_configs_are_never_executed(no_network_no_processes, tmp_path: Path):
    """Python configs are not read; Hydra `_target_`, OmegaConf resolvers,
    YAML tags and Terraform functions that touch the machine stay text."""
    marker = tmp_path / "PWNED"
    root = tmp_path / "proj"
    (root / "conf").mkdir(parents=True)
    (root / "conf" / "config.py").write_text(f"import os\nos.system('touch {marker}')\n")
    (root / "conf" / "train.yaml").write_text(
        "per_device_train_batch_size: 8\noutput_dir: ${oc.env:HOME}/${python:__import__('os').system('id')}\n"
        f"callbacks:\n  - _target_: os.system\n    command: touch {marker}\n"
        f"data: !!python/object/apply:os.system ['touch {marker}']\n")
    (root / "main.tf").write_text(
        'locals {\n  a = file("/etc/passwd")\n  b = templatefile("/etc/hostname", {})\n'
        '  c = pathexpand("~/.aws/credentials")\n}\n'
        'data "external" "x" {\n  program = ["sh", "-c", "touch ' + str(marker) + '"]\n}\n'
        'resource "null_resource" "x" {\n  provisioner "local-exec" {\n    command = "touch ' + str(marker)
        + '"\n  }\n}\n')
    result, _ = _lint_and_render(root, ["."])
    assert not marker.exists() and no_network_no_processes == []
    assert internal_errors(result) == []
    assert "root:" not in json.dumps([f.message for f in result.findings])  # /etc/passwd was not read


# ------------------------------------------------------------ secrets ---

SECRET_PROJECT = {
    "k8s/job.yaml": """apiVersion: batch/v1
kind: Job
metadata:
  name: hf-qwerty98765
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: pytorch/pytorch:2.3.0
          command: ["bash", "-c", "export WANDB_API_KEY=wandb0123456789abcdef && torchrun train.py --hub_token hf_cmdline_secret99"]
          env:
            - name: HF_TOKEN
              value: hf-qwerty98765
            - name: NCCL_DEBUG
              value: INFO
          resources:
            limits:
              nvidia.com/gpu: 8
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
stringData:
  anything: wandb0123456789abcdef
""",
    "infra/main.tf": """variable "bucket_suffix" {
  type      = string
  sensitive = true
  default   = "ckpt-bucket-s3cr3t"
}
resource "aws_s3_bucket" "ckpt" {
  bucket = var.bucket_suffix
  tags = {
    api_token = "tagvalue-0123456789"
  }
}
resource "aws_cloudwatch_log_group" "tagvalue-0123456789" {
  name = "tagvalue-0123456789"
}
""",
    "configs/sft.yaml": """model_name_or_path: meta-llama/Llama-3.1-8B
per_device_train_batch_size: 4
logging_steps: 1
hub_token: hf_trainingconfig_0042
output_dir: /ckpt/hf_trainingconfig_0042
""",
}
SECRETS = {"hf-qwerty98765", "wandb0123456789abcdef", "hf_cmdline_secret99", "ckpt-bucket-s3cr3t",
           "tagvalue-0123456789", "hf_trainingconfig_0042"}


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_secret_values_are_collected_from_every_source(tmp_path: Path):
    result = lint_tree(_write(tmp_path, SECRET_PROJECT))
    assert collect_secrets(result.project) == SECRETS


def test_evaluated_resources_secrets_are_taken_at_evaluation_without_a_cache(tmp_path: Path):
    """Without a cache too, each evaluated root's resources give up their
    secret values when the root is evaluated (TerraformModel.known_secrets,
    secrets_taken), which the model stage does while parse workers run;
    the redact stage then skips them. Same values as walking them after."""
    from mlcost_lint.secrets import resource_secrets

    result = lint_tree(_write(tmp_path, SECRET_PROJECT))     # no cache
    terraform = result.project.terraform
    assert terraform.resources
    assert terraform.secrets_taken == {id(r) for r in terraform.resources}
    assert terraform.known_secrets == frozenset().union(*map(resource_secrets, terraform.resources))
    assert "tagvalue-0123456789" in terraform.known_secrets     # a tag under a secret-looking key
    assert collect_secrets(result.project) == SECRETS


def test_hcl_trees_are_released_after_the_model_and_their_secrets_kept(tmp_path: Path):
    """Issue 17, item 5: the model stage drops ParsedFile.hcl (the largest
    thing a run held) after taking the HCL trees' secret values."""
    result = lint_tree(_write(tmp_path, SECRET_PROJECT))
    tf = [pf for pf in result.files if pf.path.endswith("main.tf")]
    assert len(tf) == 1 and tf[0].hcl is None
    # A .tf file's own secrets were found where it was parsed (ParsedFile.secrets);
    # the released trees left nothing else (no .tfvars here).
    assert tf[0].secrets == frozenset({"ckpt-bucket-s3cr3t", "tagvalue-0123456789"})
    assert result.project.hcl_secrets == frozenset()
    assert {"ckpt-bucket-s3cr3t", "tagvalue-0123456789"} <= result.secrets


def test_a_tfvars_value_of_a_sensitive_variable_survives_the_released_trees(tmp_path: Path):
    result = lint_tree(_write(tmp_path, {
        "infra/variables.tf": 'variable "db_pw" {\n  type      = string\n  sensitive = true\n}\n',
        "infra/prod.tfvars": 'db_pw = "Zq8-tfvars-only-value"\n',
    }))
    assert all(pf.hcl is None for pf in result.files)
    assert result.project.hcl_secrets == frozenset({"Zq8-tfvars-only-value"})
    assert "Zq8-tfvars-only-value" in result.secrets


def test_findings_never_print_a_secret_in_any_format(tmp_path: Path):
    root = _write(tmp_path, SECRET_PROJECT)
    settings = Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root)
    result = lint_tree(root, settings)
    for fmt in ("text", "json", "sarif", "github"):
        out = render(result, settings, fmt, root)
        assert not [s for s in SECRETS if s in out], fmt
    messages = {(f.code, f.address): f.message for f in result.findings}
    # A workload named like a token (MLC102, MLC403): the name is hidden, the finding stays.
    assert messages[("MLC403", "Job/default/***/template/trainer")] == (
        "NCCL_DEBUG=INFO in container trainer of Job *** (requests nvidia.com/gpu): NCCL logs every communicator "
        "and channel setup (TRACE: every call); set NCCL_DEBUG=WARN or remove it")
    assert messages[("MLC102", "Job/default/***/template")].startswith("Job *** pod template lacks cost labels")
    # A Terraform value equal to a tag value under a secret-looking key.
    assert [a for c, a in messages if c == "MLC401"] == ['aws_cloudwatch_log_group.***']
    assert all(REDACTED not in f.location.path for f in result.findings)


def test_full_format_source_lines_are_redacted(tmp_path: Path):
    root = _write(tmp_path, SECRET_PROJECT)
    settings = Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root)
    out = render(lint_tree(root, settings), settings, "full", root)
    assert [s for s in SECRETS if s in out] == []


def test_the_real_cli_redacts_sarif(tmp_path: Path):
    from mlc_testing import run_cli

    root = _write(tmp_path, SECRET_PROJECT)
    r = run_cli(".", "--format", "sarif", "--no-cache", "--exit-zero", cwd=root)
    assert r.code == 0, r.err
    assert json.loads(r.out)["runs"][0]["results"]
    assert not [s for s in SECRETS if s in r.out]


@pytest.mark.parametrize(("name", "secret"), [
    ("HF_TOKEN", True), ("hub_token", True), ("WANDB_API_KEY", True), ("wandbApiKey", True),
    ("db_password", True), ("client_secret", True), ("AWS_SECRET_ACCESS_KEY", True), ("private_key", True),
    ("storage_account_key", True), ("token", True), ("PASSPHRASE", True), ("github_pat", True),
    ("key_name", False), ("kms_key_id", False), ("api_key_env", False), ("secretKeyRef", False),
    ("secretName", False), ("pad_token", False), ("eos_token", False), ("max_tokens", False), ("key", False),
    ("tokenizer", False), ("ssh_public_key", False), ("AWS_ACCESS_KEY_ID", False), ("PWD", False),
    ("password_length", False), ("token_file", False), ("monkey", False), ("keyboard", False), (None, False),
])
def test_which_names_look_secret(name, secret):
    assert looks_secret(name) is secret


JOB_SEED = {
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job", "labels": {"team": "ml"}},
    "spec": {"template": {"metadata": {"labels": {"app": "x"}}, "spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "img", "command": ["python", "train.py"],
                        "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
                        "resources": {"limits": {"nvidia.com/gpu": 4}}}]}}},
}
PLACES = [("metadata", "name"), ("metadata", "labels", "team"), ("spec", "template", "metadata", "labels", "app"),
          ("spec", "template", "spec", "containers", 0, "name"), ("spec", "template", "spec", "containers", 0, "image"),
          ("spec", "template", "spec", "containers", 0, "command", 1)]
ENV_NAMES = ["HF_TOKEN", "WANDB_API_KEY", "DB_PASSWORD", "hub_token", "CLIENT_SECRET"]


@settings(max_examples=25, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(ENV_NAMES), st.lists(st.sampled_from(PLACES), min_size=1, max_size=4, unique=True),
       st.sampled_from(["", "prefix-", "x."]))
def test_a_secret_copied_anywhere_never_reaches_the_output(env_name, places, prefix):
    import copy
    import tempfile

    import yaml

    from fuzzing import _set

    doc = copy.deepcopy(JOB_SEED)
    doc["spec"]["template"]["spec"]["containers"][0]["env"].append({"name": env_name, "value": SECRET_VALUE.lower()})
    for place in places:
        doc = _set(doc, place, prefix + SECRET_VALUE.lower())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "job.yaml").write_text(yaml.safe_dump(doc))
        settings_ = Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root)
        result = lint_tree(root, settings_)
        assert result.findings
        for fmt in ("text", "json", "sarif", "github"):
            assert SECRET_VALUE.lower() not in render(result, settings_, fmt, root)


# --------------------------------------------------------- SARIF URIs ---

def _sarif_uris(out: str) -> list[str]:
    log = json.loads(out)
    return [loc["physicalLocation"]["artifactLocation"]["uri"]
            for res in log["runs"][0]["results"] for loc in res["locations"] + res.get("relatedLocations", [])]


SENTINEL_JOB = SENTINEL


def test_sarif_uris_are_relative_normalised_and_percent_encoded(tmp_path: Path):
    root = tmp_path / "proj"
    (root / "k8s" / "sub").mkdir(parents=True)
    (root / "k8s" / "my job #1 %20 é.yaml").write_bytes(SENTINEL_JOB)
    (root / "k8s" / "sub" / "b.yaml").write_bytes(SENTINEL_JOB.replace(b"name: sentinel", b"name: other"))
    settings = Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root)
    result = lint_tree(root, settings, paths=["./k8s/../k8s", "k8s/sub/./"])
    uris = _sarif_uris(render(result, settings, "sarif", root))
    assert uris and set(uris) == {"k8s/my%20job%20%231%20%2520%20%C3%A9.yaml", "k8s/sub/b.yaml"}
    assert {unquote(u) for u in uris} == {"k8s/my job #1 %20 é.yaml", "k8s/sub/b.yaml"}
    log = json.loads(render(result, settings, "sarif", root))
    assert str(tmp_path) not in json.dumps(log)


def test_sarif_uris_never_escape_srcroot(tmp_path: Path):
    (tmp_path / "proj" / "k8s").mkdir(parents=True)
    (tmp_path / "proj" / "k8s" / "job.yaml").write_bytes(SENTINEL_JOB)
    (tmp_path / "elsewhere").mkdir()
    settings = Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=tmp_path / "elsewhere")
    result = lint_tree(tmp_path / "elsewhere", settings, paths=["../proj"])
    assert findings_of(result)
    uris = _sarif_uris(render(result, settings, "sarif", tmp_path / "elsewhere"))
    assert uris and not [u for u in uris if u.startswith("../") or "/../" in u or u.startswith("/")]


def test_every_value_of_a_secret_object_is_secret(tmp_path: Path):
    root = _write(tmp_path, {"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"
                                       "stringData: {plain: only-in-the-secret-1}\ndata: {x: b25seS1iYXNlNjQ=}\n"
                                       "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                                       "data: {config: 'export HF_TOKEN=hf_in_a_script_77 && run'}\n"})
    assert collect_secrets(lint_tree(root).project) == {
        "only-in-the-secret-1", "b25seS1iYXNlNjQ=", "hf_in_a_script_77"}


# ---------------------------------------------------- output injection ---

EVIL_NAME = 'evil\\n::error file=x.tf,line=1::injected\\e[2J\\e]0;title\\a\\u202ereversed'
EVIL_JOB = f"""apiVersion: batch/v1
kind: Job
metadata:
  name: "{EVIL_NAME}"
spec:
  template:
    spec:
      containers:
        - name: main
          image: busybox
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _injection_tree(root: Path) -> Path:
    _write(root, {"job.yaml": EVIL_JOB})
    (root / "a\n::warning::from-a-file-name.yaml").write_text(EVIL_JOB.replace(EVIL_NAME, "plain"))
    return root


def test_control_characters_never_reach_the_output(tmp_path: Path):
    """An object name or file name with a line break, ESC, BEL or a bidi
    override: no new output line (in a CI log "::error ..." on its own line
    is a GitHub Actions workflow command), no terminal control sequence."""
    root = _injection_tree(tmp_path)
    settings = Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root)
    result = lint_tree(root, settings)
    assert findings_of(result) == [
        ("MLC001", "a\\n::warning::from-a-file-name.yaml", 1, 1, "file name contains control characters; not read"),
        ("MLC204", "job.yaml", 5, 1,
         "Job evil\\n::error file=x.tf,line=1::injected\\x1b[2J\\x1b]0;title\\x07\\u202ereversed holds 1 GPU with "
         "no run-time bound; a hung run keeps it until someone notices: set spec.activeDeadlineSeconds"),
        ("MLC102", "job.yaml", 6, 3,
         "Job evil\\n::error file=x.tf,line=1::injected\\x1b[2J\\x1b]0;title\\x07\\u202ereversed pod template lacks "
         "cost labels team, project, cost-center (required-tags); cost allocators read pod labels: add them to spec.template.metadata.labels"),
    ]
    for fmt in ("text", "json", "sarif", "github"):
        out = render(result, settings, fmt, root)
        assert not [c for c in out if ord(c) < 32 and c != "\n" or 0x7f <= ord(c) <= 0x9f or c == "\u202e"], fmt
    text = render(result, settings, "text", root).splitlines()
    assert len(text) == 3 + 1 and not [ln for ln in text if ln.startswith("::")]
    github = render(result, settings, "github", root).splitlines()
    assert [ln.split(" ", 1)[0] for ln in github] == ["::error", "::warning", "::warning"]


def test_full_format_source_lines_carry_no_control_characters(tmp_path: Path):
    root = _write(tmp_path, {"main.tf": 'resource "aws_s3_bucket" "b" { # \x1b]0;pwned\x07\u202e\n  bucket = "b"\n}\n'})
    settings = Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root)
    result = lint_tree(root, settings)
    assert [f[0] for f in findings_of(result)] == ["MLC101", "MLC303"]
    out = render(result, settings, "full", root)
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out


def test_placeholders_and_plain_words_are_not_redacted(tmp_path: Path):
    """`password: secret` in a tutorial config must not hide every "secret"
    in the run's messages (a Job named from-secret stays readable)."""
    root = _write(tmp_path, {
        "conf/db.yaml": "driver: mysql\nuser: omry\npassword: secret\napi_key: changeme\ntoken: xxxxxxxx\n"
                        "hub_token: training\n",
        "k8s/job.yaml": SENTINEL.decode().replace("name: sentinel", "name: from-secret-training"),
    })
    result = lint_tree(root)
    assert collect_secrets(result.project) == set()
    assert [f.message for f in result.findings if f.code == "MLC204"] == [
        "Job from-secret-training holds 1 GPU with no run-time bound; a hung run keeps it until someone notices: "
        "set spec.activeDeadlineSeconds"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_nothing_is_redacted_in_the_fixtures_and_hydra_examples():
    """No real secrets there: any *** would be over-redaction."""
    root = FIXTURES.parent.parent
    result = lint_tree(root, paths=[os.path.relpath(FIXTURES, root),
                                    os.path.relpath(CORPUS / "facebookresearch__hydra", root)])
    assert len(result.findings) > 100
    assert [f.message for f in result.findings if REDACTED in f.message or REDACTED in f.address] == []


def test_form_feed_in_a_for_each_key_stays_on_one_line(tmp_path: Path):
    """Found by bench/fuzz.py (terraform target): a for_each key with a form
    feed went raw into the address and message, and splitlines() readers of
    the text and GitHub output saw two lines."""
    root = _write(tmp_path, {"infra/main.tf": 'resource "aws_batch_compute_environment" "a" {\n'
                                              '  for_each = ["\\u000c", "\\u2028"]\n}\n'})
    settings = Settings(required_tags=["team", "project", "cost-center"], require_budget=True, root=root)
    result = lint_tree(root, settings)
    assert sorted(f.address for f in result.findings) == [
        'aws_batch_compute_environment.a["\\u2028"]', 'aws_batch_compute_environment.a["\\x0c"]']
    for fmt in ("text", "github"):
        out = render(result, settings, fmt, root)
        assert len(out.splitlines()) == len(result.findings) + (fmt == "text"), fmt


# ------------------------------------------- redaction fast paths -------

def _original_evaluated(value):
    """What collect_secrets did before the copy-free walk: data(_known(value))."""
    from mlcost_lint.secrets import _Collector, _known

    c = _Collector()
    c.data(_known(value))
    return c.values


def _nested(depth: int, leaf):
    value = leaf
    for i in range(depth):
        value = {"a": value} if i % 2 else [value]
    return value


def test_evaluated_values_walk_finds_what_the_known_copy_found():
    from mlcost_lint.model.core import UNKNOWN
    from mlcost_lint.secrets import _evaluated_secrets

    shared = {"api_key": "shared-key-abc123"}
    value = {
        "environment": ({"name": "HF_TOKEN", "value": "hf_tuple_env_123"}, UNKNOWN),
        "command": ("run", "--hub_token", "hf_after_a_flag_9", "--wandb-api-key=wandb_inline_88"),
        UNKNOWN: {"password": "dropped-with-its-unknown-key-1"},
        "script": "export DB_PASSWORD=script-pass-42 && go",
        "secret": {"kind": "Secret", "stringData": {"plain": "only-in-the-secret-2"}},
        "a": shared, "b": [shared, shared], "password": UNKNOWN, "token": {"default": UNKNOWN},
    }
    expected = {"hf_tuple_env_123", "hf_after_a_flag_9", "wandb_inline_88", "script-pass-42",
                "only-in-the-secret-2", "shared-key-abc123"}
    assert _original_evaluated(value) == expected
    assert _evaluated_secrets(value) == expected
    assert _evaluated_secrets(UNKNOWN) == set() == _original_evaluated(UNKNOWN)


@pytest.mark.parametrize("depth", [99, 100, 101, 102, 150, 300])
def test_deep_evaluated_values_match_the_known_copy(depth: int):
    from mlcost_lint.secrets import _evaluated_secrets

    value = _nested(depth, {"client_secret": "deep-secret-value-7"})
    assert _evaluated_secrets(value) == _original_evaluated(value) == {"deep-secret-value-7"}


def test_evaluated_values_too_deep_for_the_known_copy_still_raise():
    """collect_secrets skips such a resource (RecursionError), as before."""
    from mlcost_lint.secrets import _evaluated_secrets

    value = _nested(5000, {"client_secret": "too-deep-secret-8"})
    with pytest.raises(RecursionError):
        _original_evaluated(value)
    with pytest.raises(RecursionError):
        _evaluated_secrets(value)


def test_memoised_name_and_text_checks_answer_like_the_first_time():
    from mlcost_lint.secrets import _Collector

    for _ in range(3):
        assert looks_secret("WANDB_API_KEY") and not looks_secret("pad_token")
        assert not looks_secret(["WANDB_API_KEY"]) and not looks_secret(None)
        c = _Collector()
        c.data({"args": ["--hub_token", "hf_repeat_flag_1"], "cmd": "HF_TOKEN=hf_repeat_text_2 run",
                "list": ["plain", {"name": "API_TOKEN", "value": "env-token-value-3"}]})
        assert c.values == {"hf_repeat_flag_1", "hf_repeat_text_2", "env-token-value-3"}


def _evaluated_resources(folder):
    from mlcost_lint.config import load_settings
    from mlcost_lint.discover import discover
    from mlcost_lint.parse_stage import parse_all
    from mlcost_lint.pipeline import LintOptions, build_model

    settings = load_settings(None, folder)
    found = discover([str(folder)], settings.exclude, settings.root)
    parsed = parse_all(found.files, settings, LintOptions(use_cache=False, jobs=1))
    return build_model(parsed, settings, [], {}).terraform.resources


@pytest.mark.parametrize("where, secrets_in_it", [("fixtures", False), ("corpus-v2", True)])
def test_every_evaluated_resource_walk_finds_what_the_known_copy_found(where: str, secrets_in_it: bool):
    """The walk's per-key table and inline text test against the reference
    (data over the _known copy), on every evaluated argument and tag map of
    every resource in the fixtures and the real Terraform of corpus-v2."""
    from mlc_testing import FIXTURES, ROOT

    from mlcost_lint.secrets import _evaluated_secrets

    folder = FIXTURES if where == "fixtures" else ROOT.parent / "shared" / "corpus-v2"
    if not folder.is_dir():
        pytest.skip(f"{folder} is not beside this clone (the team's shared corpus)")
    resources = _evaluated_resources(folder)
    assert len(resources) > 300
    found = 0
    for res in resources:
        for value in (res.attrs, res.tags if isinstance(res.tags, dict) else None):
            if value is None:
                continue
            try:
                expected = _original_evaluated(value)
            except RecursionError:
                continue
            got = _evaluated_secrets(value)
            assert got == expected, res.address
            found += len(got)
    assert (found > 0) == secrets_in_it     # on the corpus the walk meets secrets, not only empty values


def test_key_table_answers_as_the_name_checks():
    from mlcost_lint.credentials import credential_value
    from mlcost_lint.secrets import _KEY_CLASS, _KEY_CREDENTIAL, _KEY_SECRET, _classify_key, looks_secret

    random_value = "q8Zr3LmX0pVt7Kw2"
    for key in ("password", "db_password", "DB_PASS", "MYSQL_PWD", "OPENAI_KEY", "api_key", "name", "tags",
                "PWD", "token", "max_tokens", "x" * 250, "", 7, None, True):
        cls = _classify_key(key)
        assert (cls == _KEY_SECRET) == looks_secret(key), key
        if cls != _KEY_SECRET:
            assert (cls == _KEY_CREDENTIAL) == credential_value(key, random_value), key
        assert _KEY_CLASS[key] == cls


def test_a_flag_inside_a_string_argument_is_found_by_the_walk():
    """A string with neither '=' nor ':' still passes text()'s first test
    through its '-' (a flag and its value)."""
    from mlcost_lint.secrets import _evaluated_secrets

    value = {"container": {"args": "python train.py --hub_token hf_inline_flag_55 --epochs 3"},
             "list": ["x", ("nested", {"cmd": "run --wandb-api-key wandb_flag_value_66"})]}
    expected = {"hf_inline_flag_55", "wandb_flag_value_66"}
    assert _original_evaluated(value) == expected
    assert _evaluated_secrets(value) == expected
