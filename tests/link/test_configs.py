from link_helpers import job, project_of

SFT = """
model_name_or_path: Qwen/Qwen2.5-0.5B
output_dir: /out
per_device_train_batch_size: 4
learning_rate: 2.0e-5
bf16: true
deepspeed: ds_z3.json
"""
DS = '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": "auto"}\n'
ACCEL = """
compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
num_machines: 1
num_processes: 4
mixed_precision: bf16
"""


def _links(project):
    return sorted((c.config.path, c.how, f"{c.evidence.path}:{c.evidence.line}", c.via.path if c.via else None)
                  for c in project.links.configs)


def test_path_suffix_and_reference(tmp_path):
    p = project_of(tmp_path, {
        "configs/sft.yaml": SFT, "configs/ds_z3.json": DS,
        "k8s/job.yaml": job(["bash", "-c"], ["cd /w && torchrun --nproc_per_node=8 train.py --config /workspace/configs/sft.yaml"]),
    })
    assert _links(p) == [
        ("p/configs/ds_z3.json", "deepspeed (path relative to the config), referenced by p/configs/sft.yaml",
         "p/configs/sft.yaml:6", "p/configs/sft.yaml"),
        ("p/configs/sft.yaml", "argument --config (path suffix configs/sft.yaml)", "p/k8s/job.yaml:12", None),
    ]
    assert [(r.source.path, r.target.path) for r in p.links.config_refs] == [("p/configs/sft.yaml", "p/configs/ds_z3.json")]


def test_longest_suffix_wins_and_ties_do_not_link(tmp_path):
    p = project_of(tmp_path, {
        "a/sft.yaml": SFT.replace("deepspeed: ds_z3.json\n", ""),
        "b/sft.yaml": SFT.replace("deepspeed: ds_z3.json\n", ""),
        "k8s/one.yaml": job(["python", "t.py", "/ws/a/sft.yaml"]),
        "k8s/two.yaml": job(["python", "t.py", "/ws/c/sft.yaml"]),
    })
    assert _links(p) == [("p/a/sft.yaml", "positional argument (path suffix a/sft.yaml)", "p/k8s/one.yaml:11", None)]


def test_a_suffix_tie_goes_to_the_config_nearest_the_workload(tmp_path):
    """A monorepo with two copies of one platform: each job links to its own
    copy's config. With no nearer one (the jobs sit apart from both copies),
    the tie stays ambiguous."""
    sft = SFT.replace("deepspeed: ds_z3.json\n", "")
    p = project_of(tmp_path, {
        "east/configs/sft.yaml": sft, "west/configs/sft.yaml": sft,
        "east/k8s/job.yaml": job(["python", "t.py", "/ws/configs/sft.yaml"]),
        "west/k8s/job.yaml": job(["python", "t.py", "/ws/configs/sft.yaml"]),
        "shared/job.yaml": job(["python", "t.py", "/ws/configs/sft.yaml"]),
    })
    assert _links(p) == [
        ("p/east/configs/sft.yaml", "positional argument (path suffix configs/sft.yaml, the one nearest "
         "p/east/k8s/job.yaml)", "p/east/k8s/job.yaml:11", None),
        ("p/west/configs/sft.yaml", "positional argument (path suffix configs/sft.yaml, the one nearest "
         "p/west/k8s/job.yaml)", "p/west/k8s/job.yaml:11", None),
    ]


def test_unique_basename_links_and_expansion_prefix(tmp_path):
    p = project_of(tmp_path, {
        "recipes/accel.yaml": ACCEL,
        "k8s/job.yaml": job(["accelerate", "launch", "--config_file=${CFG_DIR}/accel.yaml", "train.py"]),
    })
    assert _links(p) == [("p/recipes/accel.yaml", "argument --config_file (file name accel.yaml (unique in the scan))",
                          "p/k8s/job.yaml:11", None)]


def test_hydra_config_path_and_name(tmp_path):
    p = project_of(tmp_path, {
        "conf/sft.yaml": SFT.replace("deepspeed: ds_z3.json\n", ""),
        "k8s/job.yaml": job(["python", "train.py", "--config-path", "/app/conf", "--config-name", "sft"]),
    })
    assert _links(p) == [("p/conf/sft.yaml", "Hydra --config-path/--config-name (path suffix conf/sft.yaml)",
                          "p/k8s/job.yaml:11", None)]


CM_JOB = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: train-config
data:
  sft.yaml: |
    model_name_or_path: meta-llama/Llama-3.1-8B
    output_dir: /out
    per_device_train_batch_size: 4
    learning_rate: 2.0e-5
    bf16: true
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      volumes:
        - name: cfg
          configMap:
            name: train-config
      containers:
        - name: main
          image: x
          command: ["python", "train.py", "/etc/train/sft.yaml"]
          volumeMounts:
            - name: cfg
              mountPath: /etc/train
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def test_mounted_config_map(tmp_path):
    p = project_of(tmp_path, {"k8s/job.yaml": CM_JOB})
    assert [(c.config.address, c.how, c.evidence.line) for c in p.links.configs] == [
        ("ConfigMap/default/train-config[sft.yaml]",
         "mounted ConfigMap train-config key sft.yaml at /etc/train/sft.yaml, named in the command", 27)]


def test_a_config_map_name_repeated_in_copies_links_the_workloads_own_copy(tmp_path):
    """Two copies of one platform define the same ConfigMap (same namespace
    and name): each job mounts the one in its own copy; a job apart from both
    copies links neither (it stays a tie)."""
    config_map, _, the_job = CM_JOB.partition("---\n")
    p = project_of(tmp_path, {
        "east/k8s/cm.yaml": config_map, "west/k8s/cm.yaml": config_map,
        "east/k8s/job.yaml": the_job, "west/k8s/job.yaml": the_job, "shared/job.yaml": the_job,
    })
    assert sorted((c.config.path, c.config.address, c.evidence.path, c.evidence.line) for c in p.links.configs) == [
        ("p/east/k8s/cm.yaml", "ConfigMap/default/train-config[sft.yaml]", "p/east/k8s/job.yaml", 15),
        ("p/west/k8s/cm.yaml", "ConfigMap/default/train-config[sft.yaml]", "p/west/k8s/job.yaml", 15),
    ]


def test_mounted_config_map_with_subpath_not_named(tmp_path):
    text = CM_JOB.replace('["python", "train.py", "/etc/train/sft.yaml"]', '["python", "train.py"]').replace(
        "mountPath: /etc/train", "mountPath: /cfg/run.yaml\n              subPath: sft.yaml")
    p = project_of(tmp_path, {"k8s/job.yaml": text})
    assert [(c.how, c.evidence.line) for c in p.links.configs] == [
        ("mounted ConfigMap train-config key sft.yaml at /cfg/run.yaml", 29)]


def test_other_namespace_config_map_does_not_link(tmp_path):
    text = CM_JOB.replace("  name: train-config\n", "  name: train-config\n  namespace: a\n", 1).replace(
        "  name: train\n", "  name: train\n  namespace: b\n", 1)
    p = project_of(tmp_path, {"k8s/job.yaml": text})
    assert p.links.configs == []


def test_a_config_path_always_ends_in_a_config_extension():
    """path_parts checks the extension once, before it drops a leading
    expansion: whatever it returns still ends in one."""
    from hypothesis import given, settings, strategies as st

    from mlcost_lint.link.configs import CONFIG_EXTENSIONS, path_parts

    pieces = st.sampled_from(["$", "${X}", "$(Y)", "$Z", "{", "}", "(", ")", ".", "/", "a", "yaml", "yml", "json",
                              ".yaml", "file://", "s3://", "`", "'", " ", ".."])

    @settings(max_examples=500, deadline=None)
    @given(st.lists(pieces, max_size=8).map("".join))
    def ends_in_one(text):
        parts = path_parts(text)
        assert parts is None or parts[-1].lower().endswith(CONFIG_EXTENSIONS)

    ends_in_one()
    assert path_parts("${CFG_DIR}/sft.yaml") == ("sft.yaml",)
    assert path_parts("/cfg/$NAME") is None and path_parts("a.$yaml") is None
