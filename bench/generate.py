"""A deterministic synthetic ML-platform repository for benchmarking.

    python bench/generate.py DEST [--files 2000] [--seed 0]

The layout follows real platform repositories (and the shapes in
fixtures/ and /work/shared/corpus): shared Terraform modules under
infra/modules, one Terraform root per team project calling them with
for_each / count and locals, Kubernetes manifests per project (Kubeflow
PyTorchJob, Volcano Job, RayJob, CronJob, Deployment, ConfigMap with an
embedded training config) and training configs of every supported
framework (Transformers/TRL, Axolotl, DeepSpeed, Accelerate, Lightning,
torchtune, NeMo). Same arguments, same bytes: only ``random.Random(seed)``
decides, and files are written in a fixed order.

The default, 2,000 files, is about 15 MB, roughly half of it Terraform
(by bytes), as in repositories where the platform team keeps infra and
workloads together.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

TEAMS = ["nlp", "vision", "speech", "recsys", "research", "search", "ads", "safety", "multimodal", "robotics"]
MODELS = ["meta-llama/Meta-Llama-3.1-8B", "Qwen/Qwen2.5-7B", "mistralai/Mistral-7B-v0.3",
          "google/gemma-2-9b", "meta-llama/Llama-3.2-1B", "Qwen/Qwen2.5-0.5B", "microsoft/phi-2",
          "EleutherAI/pythia-1.4b", "tiiuae/falcon-7b", "bigscience/bloom-560m"]
AWS_GPU = ["p4d.24xlarge", "p5.48xlarge", "g5.12xlarge", "g5.xlarge", "g6.12xlarge", "p3.8xlarge", "g4dn.xlarge"]
GCP_GPU = ["a2-highgpu-8g", "a3-highgpu-8g", "g2-standard-24", "n1-standard-8"]
AZ_GPU = ["Standard_ND96asr_v4", "Standard_NC24ads_A100_v4", "Standard_NC6s_v3"]
REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1"]
IMAGES = ["ghcr.io/acme/llm-train", "nvcr.io/nvidia/pytorch", "ghcr.io/acme/vision-train",
          "public.ecr.aws/acme/ray-ml", "ghcr.io/acme/eval-harness"]


@dataclass(slots=True)
class Project:
    team: str
    name: str
    index: int
    cloud: str          # aws | gcp | azure
    model: str
    bucket: str
    pool: str
    gpu_type: str
    gpus: int
    rng: random.Random


# --------------------------------------------------------------------------
# Terraform: shared modules
# --------------------------------------------------------------------------

_MODULE_GPU_POOL = '''\
# GPU node group for one team. Spot when the workload tolerates preemption.
resource "aws_eks_node_group" "this" {
  cluster_name    = var.cluster_name
  node_group_name = "${var.cluster_name}-${var.name}"
  node_role_arn   = aws_iam_role.node.arn
  subnet_ids      = var.subnet_ids
  instance_types  = [var.instance_type]
  capacity_type   = var.capacity_type
  ami_type        = var.ami_type
  disk_size       = var.disk_size

  scaling_config {
    min_size     = var.min_size
    max_size     = var.max_size
    desired_size = max(var.min_size, 1)
  }

  labels = merge(var.labels, {
    pool                 = var.name
    "workload-type"      = "gpu-training"
    "node.kubernetes.io/capacity" = lower(var.capacity_type)
  })

  dynamic "taint" {
    for_each = var.gpu_taint ? [1] : []
    content {
      key    = "nvidia.com/gpu"
      value  = "true"
      effect = "NO_SCHEDULE"
    }
  }

  update_config {
    max_unavailable_percentage = 33
  }

  lifecycle {
    ignore_changes = [scaling_config[0].desired_size]
  }

  tags = merge(var.tags, { pool = var.name, "k8s.io/cluster-autoscaler/enabled" = "true" })
}

resource "aws_iam_role" "node" {
  name               = "${var.cluster_name}-${var.name}-node"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "ec2.amazonaws.com" }
      Action    = "sts:AssumeRole"
    }]
  })
  tags = var.tags
}

resource "aws_iam_role_policy_attachment" "node" {
  for_each   = toset(local.node_policies)
  role       = aws_iam_role.node.name
  policy_arn = "arn:aws:iam::aws:policy/${each.value}"
}

locals {
  node_policies = [
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
    "AmazonSSMManagedInstanceCore",
  ]
}
'''

_MODULE_GPU_POOL_VARS = '''\
variable "cluster_name" {
  description = "Name of the EKS cluster the pool joins"
  type        = string
}

variable "name" {
  description = "Pool name, used in labels and the node group name"
  type        = string
}

variable "instance_type" {
  type    = string
  default = "g5.xlarge"
}

variable "capacity_type" {
  type    = string
  default = "ON_DEMAND"
  validation {
    condition     = contains(["ON_DEMAND", "SPOT"], var.capacity_type)
    error_message = "capacity_type must be ON_DEMAND or SPOT."
  }
}

variable "ami_type" {
  type    = string
  default = "AL2_x86_64_GPU"
}

variable "disk_size" {
  type    = number
  default = 200
}

variable "min_size" {
  type    = number
  default = 0
}

variable "max_size" {
  type    = number
  default = 4
}

variable "subnet_ids" {
  type    = list(string)
  default = []
}

variable "labels" {
  type    = map(string)
  default = {}
}

variable "gpu_taint" {
  type    = bool
  default = true
}

variable "tags" {
  type    = map(string)
  default = {}
}
'''

_MODULE_GPU_POOL_OUT = '''\
output "node_group_name" {
  value = aws_eks_node_group.this.node_group_name
}

output "role_arn" {
  value = aws_iam_role.node.arn
}
'''

_MODULE_BUCKET = '''\
resource "aws_s3_bucket" "this" {
  bucket        = var.name
  force_destroy = var.force_destroy
  tags          = merge(var.tags, { Name = var.name })
}

resource "aws_s3_bucket_versioning" "this" {
  bucket = aws_s3_bucket.this.id
  versioning_configuration {
    status = var.versioning ? "Enabled" : "Suspended"
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "this" {
  count  = length(var.lifecycle_rules) > 0 ? 1 : 0
  bucket = aws_s3_bucket.this.id

  dynamic "rule" {
    for_each = var.lifecycle_rules
    content {
      id     = rule.value.id
      status = "Enabled"
      filter {
        prefix = rule.value.prefix
      }
      dynamic "transition" {
        for_each = rule.value.transition_days == null ? [] : [rule.value.transition_days]
        content {
          days          = transition.value
          storage_class = "STANDARD_IA"
        }
      }
      dynamic "expiration" {
        for_each = rule.value.expiration_days == null ? [] : [rule.value.expiration_days]
        content {
          days = expiration.value
        }
      }
      abort_incomplete_multipart_upload {
        days_after_initiation = 7
      }
    }
  }
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket                  = aws_s3_bucket.this.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}
'''

_MODULE_BUCKET_VARS = '''\
variable "name" {
  type = string
}

variable "force_destroy" {
  type    = bool
  default = false
}

variable "versioning" {
  type    = bool
  default = true
}

variable "lifecycle_rules" {
  type = list(object({
    id              = string
    prefix          = string
    transition_days = optional(number)
    expiration_days = optional(number)
  }))
  default = []
}

variable "tags" {
  type    = map(string)
  default = {}
}
'''

_MODULE_LOGS = '''\
resource "aws_cloudwatch_log_group" "this" {
  for_each          = toset(var.streams)
  name              = "/ml/${var.team}/${each.value}"
  retention_in_days = var.retention_days
  tags              = var.tags
}

resource "aws_cloudwatch_metric_alarm" "gpu_idle" {
  for_each            = var.idle_alarms ? toset(var.streams) : toset([])
  alarm_name          = "${var.team}-${each.value}-gpu-idle"
  comparison_operator = "LessThanThreshold"
  evaluation_periods  = 6
  metric_name         = "DCGM_FI_DEV_GPU_UTIL"
  namespace           = "ContainerInsights"
  period              = 300
  statistic           = "Average"
  threshold           = 5
  alarm_description   = "GPU utilisation under 5% for 30 minutes on ${each.value}"
  tags                = var.tags
}
'''

_MODULE_LOGS_VARS = '''\
variable "team" {
  type = string
}

variable "streams" {
  type    = list(string)
  default = ["training", "evaluation"]
}

variable "retention_days" {
  type    = number
  default = 30
}

variable "idle_alarms" {
  type    = bool
  default = true
}

variable "tags" {
  type    = map(string)
  default = {}
}
'''

_VERSIONS = '''\
terraform {
  required_version = ">= 1.5.0"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.40"
    }
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = "~> 2.27"
    }
  }
}
'''

MODULES = {
    "gpu-pool": {"main.tf": _MODULE_GPU_POOL, "variables.tf": _MODULE_GPU_POOL_VARS,
                 "outputs.tf": _MODULE_GPU_POOL_OUT, "versions.tf": _VERSIONS},
    "bucket": {"main.tf": _MODULE_BUCKET, "variables.tf": _MODULE_BUCKET_VARS,
               "outputs.tf": 'output "arn" {\n  value = aws_s3_bucket.this.arn\n}\n\noutput "id" {\n  value = aws_s3_bucket.this.id\n}\n',
               "versions.tf": _VERSIONS},
    "logs": {"main.tf": _MODULE_LOGS, "variables.tf": _MODULE_LOGS_VARS, "versions.tf": _VERSIONS},
}


# --------------------------------------------------------------------------
# Terraform: one root per project
# --------------------------------------------------------------------------

def tf_providers(p: Project) -> str:
    region = REGIONS[p.index % len(REGIONS)]
    return f'''\
provider "aws" {{
  region = var.region

  default_tags {{
    tags = {{
      managed-by = "terraform"
      repo       = "ml-platform"
    }}
  }}
}}

provider "aws" {{
  alias  = "replica"
  region = "{region}"
}}

terraform {{
  backend "s3" {{
    bucket         = "acme-terraform-state"
    key            = "ml/{p.team}/{p.name}/terraform.tfstate"
    region         = "us-east-1"
    dynamodb_table = "terraform-locks"
    encrypt        = true
  }}
}}
'''


def tf_variables(p: Project) -> str:
    r = p.rng
    out = [f'''\
variable "region" {{
  description = "Region of the {p.team} training cluster"
  type        = string
  default     = "{REGIONS[p.index % len(REGIONS)]}"
}}

variable "cluster_name" {{
  type    = string
  default = "ml-{p.team}"
}}

variable "gpu_pools" {{
  description = "GPU node pools for {p.name}"
  type = map(object({{
    instance_type = string
    min_size      = number
    max_size      = number
    spot          = bool
  }}))
  default = {{
    train = {{
      instance_type = "{p.gpu_type}"
      min_size      = {r.choice([0, 0, 1, 2])}
      max_size      = {r.choice([4, 8, 16])}
      spot          = {r.choice(["true", "false"])}
    }}
    eval = {{
      instance_type = "g5.xlarge"
      min_size      = 0
      max_size      = 2
      spot          = true
    }}
  }}
}}

variable "log_retention_days" {{
  type    = number
  default = {r.choice([7, 30, 90, 365, 0])}
}}

variable "enable_notebooks" {{
  type    = bool
  default = {r.choice(["true", "false"])}
}}

variable "notebook_users" {{
  type    = list(string)
  default = [{", ".join(f'"user{j}"' for j in range(r.randint(2, 6)))}]
}}
''']
    for j in range(r.randint(12, 30)):
        out.append(f'''
variable "feature_flag_{j}" {{
  description = "Toggle for experiment {j} of {p.name}"
  type        = bool
  default     = {r.choice(["true", "false"])}
}}
''')
    return "".join(out)


def tf_locals(p: Project) -> str:
    r = p.rng
    extra = "\n".join(f'    "{k}" = "{p.team}-{k}-{r.randint(1, 99)}"' for k in ("owner", "service", "env"))
    return f'''\
locals {{
  name_prefix = "${{var.cluster_name}}-{p.name}"
  common_tags = {{
    team        = "{p.team}"
    project     = "{p.name}"
    cost-center = "cc-{4000 + p.index}"
{extra}
  }}
  buckets = {{
    datasets    = {{ prefix = "datasets/", expire = null, ia = 30 }}
    checkpoints = {{ prefix = "ckpt/", expire = {r.choice(["null", "90", "180"])}, ia = 14 }}
    scratch     = {{ prefix = "tmp/", expire = 7, ia = null }}
  }}
  pool_labels = {{
    for name, pool in var.gpu_pools : name => {{
      "acme.io/team" = "{p.team}"
      "acme.io/pool" = name
      "acme.io/spot" = pool.spot ? "yes" : "no"
    }}
  }}
  notebook_count = var.enable_notebooks ? length(var.notebook_users) : 0
  log_streams    = [for s in ["training", "evaluation", "serving"] : "${{local.name_prefix}}-${{s}}"]
}}
'''


def tf_main(p: Project) -> str:
    r = p.rng
    out = [f'''\
module "pool" {{
  source   = "../../../modules/gpu-pool"
  for_each = var.gpu_pools

  cluster_name  = var.cluster_name
  name          = "${{local.name_prefix}}-${{each.key}}"
  instance_type = each.value.instance_type
  min_size      = each.value.min_size
  max_size      = each.value.max_size
  capacity_type = each.value.spot ? "SPOT" : "ON_DEMAND"
  labels        = local.pool_labels[each.key]
  tags          = local.common_tags
}}

module "bucket" {{
  source   = "../../../modules/bucket"
  for_each = local.buckets

  name       = "acme-${{local.name_prefix}}-${{each.key}}"
  versioning = each.key == "checkpoints"
  lifecycle_rules = [{{
    id              = "tiering"
    prefix          = each.value.prefix
    transition_days = each.value.ia
    expiration_days = each.value.expire
  }}]
  tags = local.common_tags
}}

module "logs" {{
  source         = "../../../modules/logs"
  team           = "{p.team}"
  streams        = local.log_streams
  retention_days = var.log_retention_days
  tags           = local.common_tags
}}

resource "aws_instance" "notebook" {{
  count         = local.notebook_count
  ami           = data.aws_ami.dlami.id
  instance_type = "{r.choice(["g5.xlarge", "g4dn.xlarge", "p3.2xlarge"])}"
  subnet_id     = element(var.subnet_ids, count.index)

  root_block_device {{
    volume_size = {r.choice([100, 200, 500, 1000])}
    volume_type = "{r.choice(["gp3", "gp2", "io1"])}"
  }}

  tags = merge(local.common_tags, {{ Name = "nb-${{var.notebook_users[count.index]}}" }})
}}

data "aws_ami" "dlami" {{
  most_recent = true
  owners      = ["amazon"]
  filter {{
    name   = "name"
    values = ["Deep Learning AMI GPU PyTorch 2.* (Ubuntu 22.04) *"]
  }}
}}

variable "subnet_ids" {{
  type    = list(string)
  default = ["subnet-0a1b2c3d", "subnet-4e5f6a7b", "subnet-8c9d0e1f"]
}}
''']
    # Batch and data-processing resources, as real roots accumulate them.
    for j in range(r.randint(50, 100)):
        kind = r.choice(["efs", "fsx", "sg", "ecr", "sagemaker", "batch"])
        out.append(_TF_EXTRA[kind].format(p=p, j=j, gpu=r.choice(AWS_GPU), n=r.randint(1, 64),
                                          days=r.choice([1, 7, 14, 30, 90])))
    return "".join(out)


_TF_EXTRA = {
    "efs": '''
resource "aws_efs_file_system" "shared_{j}" {{
  creation_token   = "${{local.name_prefix}}-shared-{j}"
  performance_mode = "generalPurpose"
  throughput_mode  = "elastic"
  encrypted        = true

  lifecycle_policy {{
    transition_to_ia = "AFTER_{days}_DAYS"
  }}

  tags = merge(local.common_tags, {{ Name = "${{local.name_prefix}}-shared-{j}" }})
}}
''',
    "fsx": '''
resource "aws_fsx_lustre_file_system" "scratch_{j}" {{
  storage_capacity            = {n}00
  subnet_ids                  = [var.subnet_ids[0]]
  deployment_type             = "PERSISTENT_2"
  per_unit_storage_throughput = 250
  data_compression_type       = "LZ4"
  tags                        = local.common_tags
}}
''',
    "sg": '''
resource "aws_security_group" "nccl_{j}" {{
  name        = "${{local.name_prefix}}-nccl-{j}"
  description = "NCCL traffic between training nodes"
  vpc_id      = "vpc-0123456789abcdef0"

  ingress {{
    from_port = 0
    to_port   = 65535
    protocol  = "tcp"
    self      = true
  }}

  egress {{
    from_port   = 0
    to_port     = 0
    protocol    = "-1"
    cidr_blocks = ["0.0.0.0/0"]
  }}

  tags = local.common_tags
}}
''',
    "ecr": '''
resource "aws_ecr_repository" "images_{j}" {{
  name                 = "${{local.name_prefix}}/trainer-{j}"
  image_tag_mutability = "MUTABLE"
  image_scanning_configuration {{
    scan_on_push = true
  }}
  tags = local.common_tags
}}

resource "aws_ecr_lifecycle_policy" "images_{j}" {{
  repository = aws_ecr_repository.images_{j}.name
  policy = jsonencode({{
    rules = [{{
      rulePriority = 1
      description  = "keep the last {n} images"
      selection = {{
        tagStatus   = "any"
        countType   = "imageCountMoreThan"
        countNumber = {n}
      }}
      action = {{ type = "expire" }}
    }}]
  }})
}}
''',
    "sagemaker": '''
resource "aws_sagemaker_notebook_instance" "exp_{j}" {{
  name                   = "${{local.name_prefix}}-exp-{j}"
  role_arn               = "arn:aws:iam::123456789012:role/sagemaker"
  instance_type          = "ml.{gpu}"
  volume_size            = {n}
  lifecycle_config_name  = "auto-stop-idle"
  direct_internet_access = "Disabled"
  tags                   = local.common_tags
}}
''',
    "batch": '''
resource "aws_batch_compute_environment" "gpu_{j}" {{
  compute_environment_name = "${{local.name_prefix}}-gpu-{j}"
  type                     = "MANAGED"

  compute_resources {{
    type                = "{{spot}}"
    max_vcpus           = {n}
    min_vcpus           = 0
    instance_type       = ["{gpu}"]
    subnets             = var.subnet_ids
    security_group_ids  = ["sg-0123456789abcdef0"]
    instance_role       = "arn:aws:iam::123456789012:instance-profile/ecsInstanceRole"
    allocation_strategy = "SPOT_CAPACITY_OPTIMIZED"
    tags                = local.common_tags
  }}
}}
'''.replace("{{spot}}", "SPOT"),
}


def tf_iam(p: Project) -> str:
    r = p.rng
    out = []
    for j in range(r.randint(16, 34)):
        actions = ", ".join(f'"s3:{a}"' for a in r.sample(
            ["GetObject", "PutObject", "ListBucket", "DeleteObject", "GetBucketLocation", "AbortMultipartUpload"], 3))
        out.append(f'''\
data "aws_iam_policy_document" "access_{j}" {{
  statement {{
    sid       = "Bucket{j}"
    effect    = "Allow"
    actions   = [{actions}]
    resources = [
      "arn:aws:s3:::acme-${{local.name_prefix}}-checkpoints",
      "arn:aws:s3:::acme-${{local.name_prefix}}-checkpoints/*",
    ]
    condition {{
      test     = "StringEquals"
      variable = "aws:PrincipalTag/team"
      values   = ["{p.team}"]
    }}
  }}
}}

resource "aws_iam_policy" "access_{j}" {{
  name   = "${{local.name_prefix}}-access-{j}"
  policy = data.aws_iam_policy_document.access_{j}.json
  tags   = local.common_tags
}}

resource "aws_iam_role" "irsa_{j}" {{
  name = "${{local.name_prefix}}-irsa-{j}"
  assume_role_policy = jsonencode({{
    Version = "2012-10-17"
    Statement = [{{
      Effect    = "Allow"
      Principal = {{ Federated = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE" }}
      Action    = "sts:AssumeRoleWithWebIdentity"
      Condition = {{
        StringEquals = {{
          "oidc.eks.us-east-1.amazonaws.com/id/EXAMPLE:sub" = "system:serviceaccount:{p.team}:{p.name}-{j}"
        }}
      }}
    }}]
  }})
}}

''')
    return "".join(out)


def tf_tfvars(p: Project) -> str:
    r = p.rng
    return f'''\
region             = "{REGIONS[(p.index + 1) % len(REGIONS)]}"
log_retention_days = {r.choice([14, 30, 60, 400])}
enable_notebooks   = {r.choice(["true", "false"])}

gpu_pools = {{
  train = {{
    instance_type = "{p.gpu_type}"
    min_size      = {r.choice([0, 1, 2])}
    max_size      = {r.choice([8, 16, 32])}
    spot          = {r.choice(["true", "false"])}
  }}
  eval = {{
    instance_type = "g5.2xlarge"
    min_size      = 0
    max_size      = 2
    spot          = true
  }}
}}
'''


# --------------------------------------------------------------------------
# Kubernetes
# --------------------------------------------------------------------------

def _resources(gpus: int, mem: int) -> str:
    return f'''\
              resources:
                requests:
                  cpu: "{max(gpus * 8, 4)}"
                  memory: {mem}Gi
                  nvidia.com/gpu: {gpus}
                limits:
                  memory: {mem}Gi
                  nvidia.com/gpu: {gpus}'''


def k8s_pytorchjob(p: Project) -> str:
    r = p.rng
    workers = r.choice([1, 2, 4, 8])
    envs = "\n".join(f'''\
                - name: {k}
                  value: "{v}"''' for k, v in [("NCCL_DEBUG", r.choice(["INFO", "WARN"])), ("OMP_NUM_THREADS", "8"),
                                               ("HF_HOME", "/cache/hf"), ("WANDB_PROJECT", p.name),
                                               ("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")])
    docs = []
    for stage in ["sft", "dpo", "rm", "ppo", "pretrain", "distill", "kto", "orpo", "grpo"][: r.randint(4, 9)]:
        docs.append(f'''\
# {stage.upper()} run for {p.name} on the {p.pool} pool.
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: {p.name}-{stage}
  namespace: {p.team}
  labels:
    team: {p.team}
    project: {p.name}
    app.kubernetes.io/managed-by: kustomize
spec:
  runPolicy:
    cleanPodPolicy: {r.choice(["None", "Running", "All"])}
    ttlSecondsAfterFinished: {r.choice([3600, 86400, 604800])}
    backoffLimit: {r.choice([0, 3, 10])}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          labels:
            team: {p.team}
            project: {p.name}
        spec:
          nodeSelector:
            eks.amazonaws.com/nodegroup: {p.pool}
          tolerations:
            - key: nvidia.com/gpu
              operator: Exists
              effect: NoSchedule
          containers:
            - name: pytorch
              image: {IMAGES[p.index % len(IMAGES)]}:2.{p.index % 5}.0
              imagePullPolicy: IfNotPresent
              command:
                - torchrun
                - --nproc_per_node={p.gpus}
                - --nnodes={workers + 1}
                - train.py
                - --config
                - /workspace/configs/{p.team}/{p.name}/trl_sft.yaml
              env:
{envs}
{_resources(p.gpus, p.gpus * 80)}
              volumeMounts:
                - name: checkpoints
                  mountPath: /checkpoints
                - name: dshm
                  mountPath: /dev/shm
          volumes:
            - name: checkpoints
              persistentVolumeClaim:
                claimName: {p.name}-checkpoints
            - name: dshm
              emptyDir:
                medium: Memory
                sizeLimit: 64Gi
    Worker:
      replicas: {workers}
      restartPolicy: OnFailure
      template:
        metadata:
          labels:
            team: {p.team}
            project: {p.name}
        spec:
          nodeSelector:
            eks.amazonaws.com/nodegroup: {p.pool}
          tolerations:
            - key: nvidia.com/gpu
              operator: Exists
              effect: NoSchedule
          containers:
            - name: pytorch
              image: {IMAGES[p.index % len(IMAGES)]}:2.{p.index % 5}.0
              command: ["torchrun", "--nproc_per_node={p.gpus}", "train.py", "--config", "/workspace/configs/{p.team}/{p.name}/trl_sft.yaml"]
              env:
{envs}
{_resources(p.gpus, p.gpus * 80)}
              volumeMounts:
                - name: checkpoints
                  mountPath: /checkpoints
          volumes:
            - name: checkpoints
              persistentVolumeClaim:
                claimName: {p.name}-checkpoints
''')
    docs.append(f'''\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: {p.name}-checkpoints
  namespace: {p.team}
  labels:
    team: {p.team}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: {r.choice(["efs-sc", "gp3", "fsx-lustre"])}
  resources:
    requests:
      storage: {r.choice([100, 500, 1000, 5000])}Gi
''')
    return "---\n".join(docs)


def k8s_volcano(p: Project) -> str:
    r = p.rng
    tasks = []
    for role, n in (("master", 1), ("worker", r.choice([2, 4, 8]))):
        tasks.append(f'''\
    - name: {role}
      replicas: {n}
      policies:
        - event: TaskCompleted
          action: CompleteJob
      template:
        metadata:
          labels:
            team: {p.team}
        spec:
          schedulerName: volcano
          restartPolicy: OnFailure
          containers:
            - name: {role}
              image: {IMAGES[(p.index + 1) % len(IMAGES)]}:latest
              command: ["python", "-m", "train", "--config", "/configs/{p.name}/lightning.yaml"]
              ports:
                - containerPort: 23456
                  name: {role}-port
              resources:
                requests:
                  nvidia.com/gpu: {p.gpus}
                  cpu: "{p.gpus * 6}"
                  memory: {p.gpus * 48}Gi
                limits:
                  nvidia.com/gpu: {p.gpus}
''')
    return f'''\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: {p.name}-volcano
  namespace: {p.team}
spec:
  minAvailable: 3
  schedulerName: volcano
  queue: {p.team}
  maxRetry: {r.choice([1, 3, 5])}
  plugins:
    env: []
    svc: []
    ssh: []
  policies:
    - event: PodEvicted
      action: RestartJob
  tasks:
{"".join(tasks)}'''


def k8s_rayjob(p: Project) -> str:
    r = p.rng
    return f'''\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: {p.name}-tune
  namespace: {p.team}
  labels:
    team: {p.team}
spec:
  entrypoint: python tune.py --num-samples {r.randint(8, 64)}
  shutdownAfterJobFinishes: {r.choice(["true", "false"])}
  ttlSecondsAfterFinished: {r.choice([60, 600, 3600])}
  runtimeEnvYAML: |
    pip:
      - ray[tune]==2.9.0
      - transformers==4.44.0
    env_vars:
      WANDB_PROJECT: {p.name}
  rayClusterSpec:
    rayVersion: "2.9.0"
    headGroupSpec:
      rayStartParams:
        dashboard-host: "0.0.0.0"
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray-ml:2.9.0-gpu
              resources:
                limits:
                  cpu: "8"
                  memory: 32Gi
    workerGroupSpecs:
      - groupName: gpu
        replicas: {r.choice([1, 2, 4])}
        minReplicas: 0
        maxReplicas: {r.choice([4, 8, 16])}
        rayStartParams: {{}}
        template:
          spec:
            nodeSelector:
              node.kubernetes.io/instance-type: {p.gpu_type}
            containers:
              - name: ray-worker
                image: rayproject/ray-ml:2.9.0-gpu
                resources:
                  limits:
                    nvidia.com/gpu: {p.gpus}
                    cpu: "{p.gpus * 8}"
                    memory: {p.gpus * 64}Gi
'''


def k8s_cronjob(p: Project) -> str:
    r = p.rng
    return f'''\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: {p.name}-nightly-eval
  namespace: {p.team}
  labels:
    team: {p.team}
    project: {p.name}
spec:
  schedule: "{r.randint(0, 59)} {r.randint(0, 23)} * * *"
  concurrencyPolicy: {r.choice(["Forbid", "Allow", "Replace"])}
  successfulJobsHistoryLimit: 3
  failedJobsHistoryLimit: {r.choice([1, 5, 10])}
  jobTemplate:
    spec:
      backoffLimit: {r.choice([0, 2, 6])}
      activeDeadlineSeconds: {r.choice([3600, 14400, 86400])}
      template:
        spec:
          restartPolicy: Never
          nodeSelector:
            cloud.google.com/gke-accelerator: nvidia-l4
          containers:
            - name: eval
              image: ghcr.io/acme/eval-harness:{p.index % 7}.1
              args: ["--model", "{p.model}", "--tasks", "mmlu,hellaswag,arc_challenge", "--batch-size", "auto"]
              resources:
                limits:
                  nvidia.com/gpu: 1
                  memory: 64Gi
'''


def k8s_serving(p: Project) -> str:
    r = p.rng
    return "---\n".join(_serving_variant(p, r, v) for v in ["base", "chat", "code", "long", "eval", "canary", "int8", "fp8", "batch", "shadow", "a", "b", "c", "d"][: r.randint(7, 14)])


def _serving_variant(p: Project, r: random.Random, variant: str) -> str:
    name = f"{p.name}-{variant}"
    return f'''\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {p.team}
  labels:
    app: {name}
    team: {p.team}
spec:
  replicas: {r.choice([1, 2, 3, 6])}
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
        team: {p.team}
      annotations:
        prometheus.io/scrape: "true"
        prometheus.io/port: "8000"
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.5.{p.index % 5}
          args:
            - --model
            - {p.model}
            - --tensor-parallel-size
            - "{r.choice([1, 2, 4])}"
            - --max-model-len
            - "{r.choice([4096, 8192, 32768])}"
          ports:
            - containerPort: 8000
          readinessProbe:
            httpGet:
              path: /health
              port: 8000
            initialDelaySeconds: 60
            periodSeconds: 10
          resources:
            limits:
              nvidia.com/gpu: {r.choice([1, 2, 4])}
              memory: 96Gi
---
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: {p.team}
spec:
  selector:
    app: {name}
  ports:
    - port: 80
      targetPort: 8000
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {name}
  namespace: {p.team}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {name}
  minReplicas: {r.choice([0, 1, 2])}
  maxReplicas: {r.choice([4, 8, 20])}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 70
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {name}
  namespace: {p.team}
spec:
  maxUnavailable: 1
  selector:
    matchLabels:
      app: {name}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: {name}
  namespace: {p.team}
  annotations:
    nginx.ingress.kubernetes.io/proxy-body-size: 64m
    nginx.ingress.kubernetes.io/proxy-read-timeout: "600"
spec:
  ingressClassName: nginx
  rules:
    - host: {name}.{p.team}.ml.acme.internal
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: {name}
                port:
                  number: 80
'''


def k8s_configmap(p: Project) -> str:
    def block(text: str) -> str:
        return "\n".join("    " + line if line else "" for line in text.splitlines())

    return f'''\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {p.name}-train-config
  namespace: {p.team}
  labels:
    team: {p.team}
data:
  train.yaml: |
{block(trl_sft(p))}
  accelerate.yaml: |
{block(accelerate(p))}
  ds_zero.json: |
{block(deepspeed(p))}
  torchtune.yaml: |
{block(torchtune(p))}
  lightning.yaml: |
{block(lightning(p))}
  nemo.yaml: |
{block(nemo(p))}
'''


# --------------------------------------------------------------------------
# Training configs, one per framework
# --------------------------------------------------------------------------

def trl_sft(p: Project) -> str:
    r = p.rng
    return f'''\
# TRL SFT recipe for {p.name} (alignment-handbook style)
model_name_or_path: {p.model}
torch_dtype: {r.choice(["bfloat16", "auto", "float32"])}
attn_implementation: {r.choice(["flash_attention_2", "sdpa", "eager"])}
dataset_name: s3://{p.bucket}/tokenized/{p.name}
dataset_num_proc: {r.choice([4, 12, 48])}
output_dir: /checkpoints/{p.name}-sft
deepspeed: configs/{p.team}/{p.name}/ds_zero.json

bf16: {r.choice(["true", "false"])}
num_train_epochs: {r.choice([1, 2, 3])}
per_device_train_batch_size: {r.choice([1, 2, 4, 8, 16])}
per_device_eval_batch_size: {r.choice([4, 8, 16])}
gradient_accumulation_steps: {r.choice([1, 2, 4, 8, 16])}
gradient_checkpointing: {r.choice(["true", "false"])}
learning_rate: {r.choice(["2.0e-05", "1.0e-05", "5.0e-06"])}
lr_scheduler_type: cosine
warmup_ratio: 0.1
max_seq_length: {r.choice([2048, 4096, 8192])}

eval_strategy: {r.choice(["steps", "epoch", "no"])}
eval_steps: {r.choice([50, 200, 1000])}
save_strategy: {r.choice(["steps", "epoch"])}
save_steps: {r.choice([25, 100, 500, 2000])}
save_total_limit: {r.choice(["null", 1, 3])}
logging_steps: {r.choice([1, 10, 50])}
report_to: {r.choice(["all", "wandb", "tensorboard", "none"])}
dataloader_num_workers: {r.choice([0, 4, 8])}
seed: {r.randint(1, 9999)}
push_to_hub: false
'''


def hf_trainer_json(p: Project) -> str:
    r = p.rng
    return json.dumps({
        "model_name_or_path": p.model,
        "output_dir": f"/checkpoints/{p.name}/trainer",
        "do_train": True, "do_eval": True,
        "per_device_train_batch_size": r.choice([2, 4, 8]),
        "gradient_accumulation_steps": r.choice([1, 4, 8]),
        "learning_rate": r.choice([1e-5, 3e-5, 5e-5]),
        "num_train_epochs": r.choice([1, 3, 5]),
        "fp16": r.choice([True, False]),
        "save_steps": r.choice([50, 500, 5000]),
        "save_total_limit": r.choice([None, 2, 5]),
        "logging_steps": r.choice([1, 25, 100]),
        "eval_steps": r.choice([100, 1000]),
        "evaluation_strategy": "steps",
        "dataloader_num_workers": r.choice([0, 2, 8]),
        "report_to": ["wandb"],
        "run_name": f"{p.name}-{r.randint(1, 999)}",
    }, indent=2) + "\n"


def axolotl(p: Project) -> str:
    r = p.rng
    datasets = "\n".join(f'''\
  - path: s3://{p.bucket}/data/{p.name}-{j}.jsonl
    type: {r.choice(["alpaca", "sharegpt", "completion"])}''' for j in range(r.randint(1, 4)))
    return f'''\
base_model: {p.model}
model_type: AutoModelForCausalLM
tokenizer_type: AutoTokenizer
load_in_8bit: false
load_in_4bit: {r.choice(["true", "false"])}
strict: false
adapter: {r.choice(["qlora", "lora", ""])}
lora_r: {r.choice([8, 16, 32, 64])}
lora_alpha: 16
lora_dropout: 0.05
lora_target_linear: true

datasets:
{datasets}
dataset_prepared_path: last_run_prepared
val_set_size: 0.05

sequence_len: {r.choice([2048, 4096, 8192])}
sample_packing: {r.choice(["true", "false"])}
pad_to_sequence_len: true
micro_batch_size: {r.choice([1, 2, 4])}
gradient_accumulation_steps: {r.choice([1, 4, 8])}
num_epochs: {r.choice([1, 2, 4])}
optimizer: {r.choice(["adamw_bnb_8bit", "paged_adamw_32bit", "adamw_torch"])}
lr_scheduler: cosine
learning_rate: 0.0002
bf16: auto
tf32: {r.choice(["true", "false"])}
gradient_checkpointing: true
logging_steps: 1
flash_attention: true
warmup_steps: 10
evals_per_epoch: 4
saves_per_epoch: {r.choice([1, 4, 20])}
save_strategy: {r.choice(['"no"', "steps", "epoch"])}
output_dir: /checkpoints/{p.name}/axolotl
wandb_project: {p.name}
'''


def deepspeed(p: Project) -> str:
    r = p.rng
    stage = r.choice([1, 2, 3])
    cfg = {
        "train_micro_batch_size_per_gpu": r.choice(["auto", 1, 4]),
        "gradient_accumulation_steps": "auto",
        "gradient_clipping": 1.0,
        "steps_per_print": r.choice([1, 10, 100]),
        "wall_clock_breakdown": r.choice([True, False]),
        "bf16": {"enabled": "auto"},
        "zero_optimization": {
            "stage": stage, "overlap_comm": True, "contiguous_gradients": True,
            "reduce_bucket_size": "auto",
        },
    }
    if stage == 3 and r.random() < 0.5:
        cfg["zero_optimization"]["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if r.random() < 0.3:
        cfg["flops_profiler"] = {"enabled": True, "profile_step": 1, "detailed": True}
    return json.dumps(cfg, indent=4) + "\n"


def accelerate(p: Project) -> str:
    r = p.rng
    dist = r.choice(["DEEPSPEED", "FSDP", "MULTI_GPU"])
    extra = ""
    if dist == "DEEPSPEED":
        extra = f"deepspeed_config:\n  deepspeed_config_file: configs/{p.team}/{p.name}/ds_zero.json\n  zero3_init_flag: false\n"
    elif dist == "FSDP":
        extra = ("fsdp_config:\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_sharding_strategy: FULL_SHARD\n"
                 "  fsdp_offload_params: false\n  fsdp_state_dict_type: SHARDED_STATE_DICT\n")
    return f'''\
compute_environment: LOCAL_MACHINE
debug: {r.choice(["true", "false"])}
distributed_type: {dist}
{extra}downcast_bf16: 'no'
machine_rank: 0
main_training_function: main
mixed_precision: {r.choice(["bf16", "fp16", "'no'"])}
num_machines: {r.choice([1, 2, 4])}
num_processes: {r.choice([8, 16, 32])}
rdzv_backend: static
same_network: true
use_cpu: false
'''


def lightning(p: Project) -> str:
    r = p.rng
    return f'''\
seed_everything: {r.randint(1, 9999)}
trainer:
  accelerator: gpu
  devices: {p.gpus}
  num_nodes: {r.choice([1, 2, 4])}
  strategy: {r.choice(["ddp", "fsdp", "deepspeed_stage_2"])}
  precision: {r.choice(["bf16-mixed", "16-mixed", "32"])}
  max_steps: {r.choice([10000, 100000])}
  log_every_n_steps: {r.choice([1, 50])}
  detect_anomaly: {r.choice(["true", "false"])}
  profiler: {r.choice(["simple", "null"])}
  default_root_dir: s3://{p.bucket}/runs/{p.name}
  callbacks:
    - class_path: lightning.pytorch.callbacks.LearningRateMonitor
      init_args:
        logging_interval: step
    - class_path: lightning.pytorch.callbacks.ModelCheckpoint
      init_args:
        dirpath: s3://{p.bucket}/runs/{p.name}/checkpoints
        save_top_k: {r.choice([-1, 1, 3])}
        every_n_train_steps: {r.choice([50, 1000])}
model:
  class_path: acme.{p.team}.models.{p.name.replace("-", "_")}.Task
  init_args:
    backbone: {r.choice(["resnet50", "vit_b_16", "convnext_base"])}
    lr: 0.001
data:
  class_path: acme.{p.team}.data.DataModule
  init_args:
    batch_size: {r.choice([16, 32, 64, 128])}
    num_workers: {r.choice([0, 4, 8, 16])}
'''


def torchtune(p: Project) -> str:
    r = p.rng
    return f'''\
# Config for multi-device LoRA finetuning for {p.name}
output_dir: /checkpoints/{p.name}/torchtune

model:
  _component_: torchtune.models.llama3_1.lora_llama3_1_8b
  lora_attn_modules: ['q_proj', 'v_proj', 'output_proj']
  apply_lora_to_mlp: {r.choice(["True", "False"])}
  lora_rank: {r.choice([8, 16, 64])}
  lora_alpha: 16

tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  path: /models/Meta-Llama-3.1-8B-Instruct/original/tokenizer.model

checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  checkpoint_dir: /models/Meta-Llama-3.1-8B-Instruct/
  checkpoint_files: [model-00001-of-00004.safetensors, model-00002-of-00004.safetensors]
  output_dir: ${{output_dir}}
  model_type: LLAMA3

dataset:
  _component_: torchtune.datasets.alpaca_cleaned_dataset
  source: s3://{p.bucket}/alpaca-cleaned

optimizer:
  _component_: torch.optim.AdamW
  lr: 3e-4
loss:
  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss

epochs: {r.choice([1, 2, 3])}
batch_size: {r.choice([2, 4, 8])}
max_steps_per_epoch: null
gradient_accumulation_steps: {r.choice([1, 8, 32])}

device: cuda
dtype: {r.choice(["bf16", "fp32"])}
enable_activation_checkpointing: {r.choice(["True", "False"])}

metric_logger:
  _component_: torchtune.training.metric_logging.DiskLogger
  log_dir: ${{output_dir}}/logs
log_every_n_steps: {r.choice([1, 10])}

profiler:
  _component_: torchtune.training.setup_torch_profiler
  enabled: {r.choice(["True", "False"])}
  output_dir: ${{output_dir}}/profiling_outputs
'''


def nemo(p: Project) -> str:
    r = p.rng
    return f'''\
name: megatron_gpt_{p.name.replace("-", "_")}
restore_from_path: null

trainer:
  devices: {p.gpus}
  num_nodes: {r.choice([1, 2, 4, 8])}
  accelerator: gpu
  precision: {r.choice(["bf16", "32", "16-mixed"])}
  logger: False
  enable_checkpointing: False
  use_distributed_sampler: False
  max_epochs: -1
  max_steps: {r.choice([100000, 300000])}
  log_every_n_steps: {r.choice([1, 10])}
  val_check_interval: 2000

exp_manager:
  explicit_log_dir: null
  exp_dir: s3://{p.bucket}/nemo/experiments
  name: megatron_gpt
  create_wandb_logger: False
  resume_if_exists: True
  create_checkpoint_callback: True
  checkpoint_callback_params:
    monitor: val_loss
    save_top_k: {r.choice([-1, 3, 10])}
    mode: min
    every_n_train_steps: {r.choice([20, 1000, 5000])}
    filename: 'megatron_gpt--{{val_loss:.2f}}-{{step}}'

model:
  micro_batch_size: {r.choice([1, 2, 4])}
  global_batch_size: {r.choice([256, 512, 1024])}
  tensor_model_parallel_size: {r.choice([1, 2, 4])}
  pipeline_model_parallel_size: 1
  encoder_seq_length: 4096
  num_layers: {r.choice([24, 32, 40])}
  hidden_size: {r.choice([2048, 4096, 5120])}
  data:
    data_prefix: [1.0, s3://{p.bucket}/nemo/data/wiki_text_document]
    num_workers: {r.choice([0, 2, 8])}
  optim:
    name: fused_adam
    lr: 2e-4
'''


# (relative path template, builder). Order fixes the output order.
PROJECT_FILES = [
    ("infra/projects/{team}/{name}/providers.tf", tf_providers),
    ("infra/projects/{team}/{name}/variables.tf", tf_variables),
    ("infra/projects/{team}/{name}/locals.tf", tf_locals),
    ("infra/projects/{team}/{name}/main.tf", tf_main),
    ("infra/projects/{team}/{name}/iam.tf", tf_iam),
    ("infra/projects/{team}/{name}/terraform.tfvars", tf_tfvars),
    ("k8s/{team}/{name}/pytorchjob.yaml", k8s_pytorchjob),
    ("k8s/{team}/{name}/volcano-job.yaml", k8s_volcano),
    ("k8s/{team}/{name}/rayjob.yaml", k8s_rayjob),
    ("k8s/{team}/{name}/nightly-eval.yaml", k8s_cronjob),
    ("k8s/{team}/{name}/serving.yaml", k8s_serving),
    ("k8s/{team}/{name}/train-configmap.yaml", k8s_configmap),
    ("configs/{team}/{name}/trl_sft.yaml", trl_sft),
    ("configs/{team}/{name}/trainer_args.json", hf_trainer_json),
    ("configs/{team}/{name}/axolotl.yml", axolotl),
    ("configs/{team}/{name}/ds_zero.json", deepspeed),
    ("configs/{team}/{name}/accelerate.yaml", accelerate),
    ("configs/{team}/{name}/lightning.yaml", lightning),
    ("configs/{team}/{name}/torchtune.yaml", torchtune),
    ("configs/{team}/{name}/nemo.yaml", nemo),
]


def iter_files(files: int, seed: int = 0):
    """(relative path, text) in a fixed order, ``files`` of them in total."""
    count = 0
    for mod, contents in MODULES.items():
        for fname, text in contents.items():
            if count >= files:
                return
            yield f"infra/modules/{mod}/{fname}", text
            count += 1
    index = 0
    while count < files:
        rng = random.Random(seed * 1_000_003 + index)
        team = TEAMS[index % len(TEAMS)]
        gpu_type = rng.choice(AWS_GPU)
        p = Project(team=team, name=f"{team}-{rng.choice(['llm', 'asr', 'det', 'rank', 'emb', 'gen'])}-{index:04d}",
                    index=index, cloud="aws", model=rng.choice(MODELS), bucket=f"acme-{team}-data",
                    pool=f"ml-{team}-{team}-p{index}-train", gpu_type=gpu_type, gpus=rng.choice([1, 2, 4, 8]),
                    rng=rng)
        for template, build in PROJECT_FILES:
            if count >= files:
                return
            yield template.format(team=team, name=p.name), build(p)
            count += 1
        index += 1


def generate(dest: Path, files: int = 2000, seed: int = 0) -> tuple[int, int]:
    """Write the repository to ``dest`` (emptied first). Returns (files, bytes)."""
    if dest.exists():
        shutil.rmtree(dest)
    n = total = 0
    for rel, text in iter_files(files, seed):
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode()
        path.write_bytes(data)
        n += 1
        total += len(data)
    (dest / ".git").mkdir()  # a project root, so explicit-file runs read the project for context
    return n, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", type=Path)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    n, total = generate(args.dest, args.files, args.seed)
    print(f"wrote {n} files, {total / 1e6:.1f} MB to {args.dest}")


if __name__ == "__main__":
    main()
