"""Launches that need more than one container's command: MPIJob workers,
RayJob entrypoints, ConfigMap scripts; and MLC201 through the real CLI on
fixtures/link/launchers."""

import json
from pathlib import Path

from link_helpers import project_of
from mlc_testing import run_cli

from mlcost_lint.model.core import UNKNOWN

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = "fixtures/link/launchers"


def _launches(project):
    return [(l.workload.name, l.template.role, l.launcher, l.ranks_per_node, l.nodes, l.ranks_text,
             l.unknown_reason) for l in project.links.launches]


def _mpijob(slots: str, np_args: str, workers: int = 2, extra_spec: str = "") -> str:
    return f"""
        apiVersion: kubeflow.org/v2beta1
        kind: MPIJob
        metadata:
          name: hvd
        spec:
          {slots}
          {extra_spec}
          mpiReplicaSpecs:
            Launcher:
              replicas: 1
              template:
                spec:
                  containers:
                    - name: launcher
                      image: horovod/horovod:0.28.1
                      command: ["/bin/sh", "-c", "sleep 5 && mpirun --allow-run-as-root {np_args} python /t.py"]
            Worker:
              replicas: {workers}
              template:
                spec:
                  containers:
                    - name: worker
                      image: horovod/horovod:0.28.1
                      resources:
                        limits:
                          nvidia.com/gpu: 8
        """


def _worker(project):
    return [l for l in _launches(project) if l[1] == "Worker"]


def test_mpijob_slots_per_worker(tmp_path):
    cases = [
        ("slotsPerWorker: 8", "-np 16", "", (8, "mpirun -np 16 on 2 workers x slotsPerWorker: 8", "")),
        ("slotsPerWorker: 4", "-np 8", "", (4, "mpirun -np 8 on 2 workers x slotsPerWorker: 4", "")),
        # No -np: Open MPI (the default implementation) fills every slot.
        ("slotsPerWorker: 4", "", "", (4, "mpirun (no -np: every slot) on 2 workers x slotsPerWorker: 4", "")),
        ("slotsPerWorker: 4", "", "mpiImplementation: Intel",
         (UNKNOWN, "mpirun on 2 workers x slotsPerWorker: 4", "Intel without -n")),
        # Absent slotsPerWorker is 1.
        ("", "-np 2", "", (1, "mpirun -np 2 on 2 workers x slotsPerWorker 1 (default)", "")),
        # -npernode / --map-by node spread evenly.
        ("slotsPerWorker: 8", "-np 8 -npernode 4", "", (4, "mpirun -np 8 -npernode 4 on 2 workers x slotsPerWorker: 8", "")),
        ("slotsPerWorker: 8", "-np 8 --map-by node", "",
         (4, "mpirun -np 8 --map-by node on 2 workers x slotsPerWorker: 8", "")),
        ("slotsPerWorker: 8", "-np 12", "", (UNKNOWN, "mpirun -np 12 on 2 workers x slotsPerWorker: 8",
                                             "-np is not workers x slots: ranks per worker depend on the mapping")),
        ("slotsPerWorker: 8", "-np 16 --hostfile /tmp/h", "",
         (UNKNOWN, "mpirun -np 16 on 2 workers x slotsPerWorker: 8", "--hostfile chooses the hosts")),
        ("slotsPerWorker: 8", "-np 16", "runLauncherAsWorker: true",
         (UNKNOWN, "mpirun -np 16 on 2 workers x slotsPerWorker: 8",
          "runLauncherAsWorker puts ranks on the launcher too")),
    ]
    for slots, np_args, extra, (ranks, text, reason) in cases:
        project = project_of(tmp_path / str(abs(hash((slots, np_args, extra)))),
                             {"mpi.yaml": _mpijob(slots, np_args, extra_spec=extra)})
        assert _worker(project) == [("hvd", "Worker", "mpirun", ranks, None, text, reason)], (slots, np_args, extra)


def test_mpijob_worker_with_its_own_launch_is_unknown(tmp_path):
    text = _mpijob("slotsPerWorker: 8", "-np 16").replace(
        "                      image: horovod/horovod:0.28.1\n                      resources:",
        "                      image: horovod/horovod:0.28.1\n"
        "                      command: [\"python\", \"/serve_metrics.py\"]\n                      resources:")
    project = project_of(tmp_path, {"mpi.yaml": text})
    assert _worker(project) == [("hvd", "Worker", "mpirun", UNKNOWN, None, "mpirun -np 16 on 2 workers x slotsPerWorker: 8",
                                 "the worker also runs python /serve_metrics.py")]


def _rayjob(entrypoint: str, extra: str = "") -> str:
    return f"""
        apiVersion: ray.io/v1
        kind: RayJob
        metadata:
          name: rj
        spec:
          entrypoint: {entrypoint}
          {extra}
          rayClusterSpec:
            headGroupSpec:
              rayStartParams: {{}}
              template:
                spec:
                  containers:
                    - name: ray-head
                      image: rayproject/ray-ml:2.9.0-gpu
                      resources:
                        limits:
                          nvidia.com/gpu: 4
            workerGroupSpecs:
              - groupName: gpu
                replicas: 2
                template:
                  spec:
                    containers:
                      - name: ray-worker
                        image: rayproject/ray-ml:2.9.0-gpu
                        resources:
                          limits:
                            nvidia.com/gpu: 4
        """


def test_rayjob_entrypoint_runs_on_the_head(tmp_path):
    cases = [
        ("torchrun --nproc_per_node=2 /app/t.py", "", [("rj", "head", "torchrun", 2, None, "torchrun --nproc_per_node=2", "")]),
        ("deepspeed --num_gpus 4 /app/t.py", "", [("rj", "head", "deepspeed", 4, None, "deepspeed --num_gpus 4", "")]),
        ("python /app/train.py", "", [("rj", "head", "python", UNKNOWN, None, "python /app/train.py",
                                       "Ray schedules the processes")]),
        # Entrypoint resources let Ray place the entrypoint on any node.
        ("torchrun --nproc_per_node=2 /app/t.py", "entrypointNumGpus: 1", []),
        ("torchrun --nproc_per_node=2 /app/t.py", "entrypointResources: '{\"accel\": 1}'", []),
    ]
    for i, (entrypoint, extra, expected) in enumerate(cases):
        project = project_of(tmp_path / str(i), {"rj.yaml": _rayjob(entrypoint, extra)})
        assert _launches(project) == expected, entrypoint


def test_rayjob_head_command_and_entrypoint(tmp_path):
    text = _rayjob("torchrun --nproc_per_node=2 /app/t.py").replace(
        "                    - name: ray-head\n",
        "                    - name: ray-head\n"
        "                      command: [\"/bin/bash\", \"-lc\", \"--\"]\n"
        "                      args: [\"ray start --head --block\"]\n")
    project = project_of(tmp_path, {"rj.yaml": text})
    assert _launches(project) == [("rj", "head", "torchrun", 2, None, "torchrun --nproc_per_node=2", "")]


def _script_job(command: str, mount: str = "mountPath: /scripts", key: str = "train.sh",
                script: str = "torchrun --nproc_per_node=2 /w/t.py") -> dict[str, str]:
    return {
        "cm.yaml": f"""
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: scripts
            data:
              {key}: |
                #!/bin/bash
                {script}
            """,
        "job.yaml": f"""
            apiVersion: batch/v1
            kind: Job
            metadata:
              name: train
            spec:
              template:
                spec:
                  containers:
                    - name: main
                      image: ghcr.io/acme/train:1
                      workingDir: /scripts
                      command: {command}
                      volumeMounts:
                        - name: s
                          {mount}
                      resources:
                        limits:
                          nvidia.com/gpu: 8
                  volumes:
                    - name: s
                      configMap:
                        name: scripts
            """,
    }


def test_scripts_from_mounted_configmaps(tmp_path):
    cases = [
        ('["bash", "/scripts/train.sh"]', {}, (2, "torchrun --nproc_per_node=2", "")),
        ('["sh", "-x", "/scripts/train.sh"]', {}, (2, "torchrun --nproc_per_node=2", "")),
        ('["/scripts/train.sh"]', {}, (2, "torchrun --nproc_per_node=2", "")),
        ('["bash", "-c", "pip install -e . && ./train.sh"]', {}, (2, "torchrun --nproc_per_node=2", "")),
        ('["bash", "/opt/train.sh"]', {"mount": "mountPath: /opt/train.sh\n                          subPath: train.sh"},
         (2, "torchrun --nproc_per_node=2", "")),
        # A variable set for the script by its caller is not looked through (unknown, never guessed).
        ('["bash", "-c", "N=4 bash /scripts/train.sh"]', {"script": "torchrun --nproc_per_node=$N /w/t.py"},
         (UNKNOWN, "torchrun --nproc_per_node=$N", "the count is set at run time")),
        ('["bash", "/scripts/other.sh"]', {}, None),
    ]
    for i, (command, kw, expected) in enumerate(cases):
        project = project_of(tmp_path / str(i), _script_job(command, **kw))
        got = [(l.ranks_per_node, l.ranks_text, l.unknown_reason) for l in project.links.launches]
        if expected is None:
            assert got == [], command
        else:
            assert got == [expected], command
    # The evidence is the script's line inside the ConfigMap.
    project = project_of(tmp_path / "loc", _script_job('["bash", "/scripts/train.sh"]'))
    evidence = project.links.launches[0].evidence
    assert (evidence.path.endswith("cm.yaml"), evidence.line) == (True, 8)


def test_unreadable_script_path_is_unknown(tmp_path):
    project = project_of(tmp_path, _script_job('["bash", "-c", "python prep.py; bash /scripts/missing.sh"]'))
    assert [(l.launcher, l.ranks_per_node, l.unknown_reason) for l in project.links.launches] == [
        ("python", UNKNOWN, "it also runs /scripts/missing.sh, which is not in the scan")]


def test_mlc201_cli_on_launcher_fixtures():
    result = run_cli(f"{FIXTURES}/positive", "--select", "MLC201", "--format", "json", "--no-cache", cwd=ROOT)
    found = [(f["path"].rsplit("/", 1)[-1], f["line"], f["message"]) for f in json.loads(result.out)["findings"]]
    p = f"{FIXTURES}/positive"
    assert found == [
        ("configmap-script.yaml", 32,
         "Job sft requests 8 x nvidia.com/gpu but starts torchrun --nproc_per_node=$NPROC (NPROC=2 set in the script) "
         f"({p}/configmap-script.yaml:11): 6 GPUs idle; request 2 or start 8 ranks"),
        ("env-nproc.yaml", 22,
         "Job pretrain requests 4 x nvidia.com/gpu but starts torchrun --nproc_per_node=$(NPROC_PER_NODE) "
         f"(NPROC_PER_NODE=2 in the container env) ({p}/env-nproc.yaml:19): 2 GPUs idle; request 2 or start 4 ranks"),
        ("mpijob-slots.yaml", 45,
         "MPIJob horovod-resnet requests 8 x nvidia.com/gpu per Worker but starts mpirun -np 8 -map-by slot on "
         f"2 workers x slotsPerWorker: 4 ({p}/mpijob-slots.yaml:24): 4 GPUs idle; request 4 or start 8 ranks"),
        ("pytorchjob-nprocpernode.yaml", 23,
         "PyTorchJob llama-sft requests 8 x nvidia.com/gpu per Master but starts torchrun (no --nproc_per_node: "
         f"PET_NPROC_PER_NODE from nprocPerNode: 2) ({p}/pytorchjob-nprocpernode.yaml:7): 6 GPUs idle; "
         "request 2 or start 8 ranks"),
        ("rayjob-torchrun.yaml", 21,
         "RayJob finetune requests 4 x nvidia.com/gpu per head but starts torchrun --nproc_per_node=2 "
         f"({p}/rayjob-torchrun.yaml:8): 2 GPUs idle; request 2 or start 4 ranks"),
    ]
    assert result.code == 1
    negative = run_cli(f"{FIXTURES}/negative", "--select", "MLC201", "--format", "json", "--no-cache", cwd=ROOT)
    assert (negative.code, json.loads(negative.out)["findings"]) == (0, [])


def test_each_container_steps_are_made_once_and_shared_unchanged(tmp_path, monkeypatch):
    # launch_steps.container_steps: the launches and the launch-line settings read the same steps
    from mlcost_lint.link import launch_steps, launcher

    made = []
    real = launch_steps.steps_of

    def counted(program, container, *rest, **kw):
        if not rest[3:]:                     # a container's own program, not a mounted script read in place
            made.append(container.name)
        return real(program, container, *rest, **kw)

    monkeypatch.setattr(launch_steps, "steps_of", counted)
    monkeypatch.setattr(launcher, "steps_of", counted)
    files = _script_job('["bash", "-c", "pip install -e . && ./train.sh"]')
    files["rj.yaml"] = _rayjob("torchrun --nproc_per_node=2 /app/t.py").replace(
        "                    - name: ray-head\n",
        "                    - name: ray-head\n"
        "                      command: [\"/bin/bash\", \"-c\"]\n"
        "                      args: [\"ray start --head --block\"]\n")
    project = project_of(tmp_path, files)
    assert sorted(_launches(project)) == [("rj", "head", "torchrun", 2, None, "torchrun --nproc_per_node=2", ""),
                                          ("train", "", "torchrun", 2, None, "torchrun --nproc_per_node=2", "")]
    # once per container, and the RayJob's entrypoint (launcher.ray_entrypoint_steps) on its own
    assert sorted(made) == ["main", "ray-head", "ray-head", "ray-worker"]
    shared = project.links.derived["container steps"][1]
    by_name = {entry[0].name: entry[4] for entry in shared.values()}
    # the entrypoint's commands were added to a copy: the head container's own steps are its ray start only
    assert [s.command.name for s in by_name["ray-head"].steps] == ["ray"]
    assert [s.command.name for s in by_name["main"].steps] == ["pip", "torchrun"]
