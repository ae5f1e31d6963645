# syntax=docker/dockerfile:1
# One image per kevolve service, all from this file:
#   docker build --target controller -t kevolve-controller .
# Targets: retriever (no torch, no Triton), controller (CPU torch, no Triton: its spec probe
# runs a submitted spec's PyTorch reference in the sandbox; its own code imports neither),
# generator, evaluator-cpu, profiler-cpu (CPU torch and Triton) and evaluator-cuda,
# profiler-cuda (CUDA torch; profiler-cuda adds Nsight Compute).
# The mtia-sim pools run the evaluator-cpu / profiler-cpu images with PLATFORM=mtia-sim.
# No image carries kevolve/client (the kevolve command and the bench runner): .dockerignore.
#
# Build args:
#   TORCH_VERSION    torch release installed before the project (any >= 2.11 works)
#   TORCH_INDEX_URL  a PyTorch wheel index for the CPU stages (e.g. the CPU-only index, so
#                    CPU images do not carry several GB of CUDA libraries); empty = the
#                    default index (CUDA build on Linux)
#   CUDA_IMAGE       an NVIDIA CUDA *devel* image; only Nsight Compute is copied from it

ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-devel-ubuntu22.04

# ---- common base: Python, an unprivileged user, the sandbox tool --------------------
FROM ${PYTHON_IMAGE} AS python-base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    TRITON_CACHE_DIR=/tmp/triton \
    HOME=/tmp
# bubblewrap contains generated kernels in the evaluator and profiler. Pinned by the base
# image's Debian release.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 kevolve \
 && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin kevolve
WORKDIR /app

# ---- dependencies without torch or Triton ---------------------------------------------
FROM python-base AS deps-light
COPY pyproject.toml ./
COPY kevolve ./kevolve
COPY services ./services
# Installs the dependencies (pinned in pyproject.toml, hence DL3013 off); the services
# then run from /app (WORKDIR), where templates, migrations and kb/ sit next to the code.
# hadolint ignore=DL3013
RUN pip install .

# ---- dependencies with CPU torch, without Triton (the controller's spec probe) --------
FROM deps-light AS deps-cpu-probe
ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=""
# torch is pinned through TORCH_VERSION; hadolint cannot see through the ${:+} expansion.
# hadolint ignore=DL3013
RUN pip install ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} "torch==${TORCH_VERSION}"

# ---- dependencies with CPU torch and Triton -------------------------------------------
FROM python-base AS deps-cpu
ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=""
# hadolint ignore=DL3013
RUN pip install ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} "torch==${TORCH_VERSION}"
COPY pyproject.toml ./
COPY kevolve ./kevolve
COPY services ./services
# hadolint ignore=DL3013
RUN pip install ".[exec]"

# ---- dependencies with CUDA torch ---------------------------------------------------
FROM python-base AS deps-cuda
ARG TORCH_VERSION=2.13.0
RUN pip install "torch==${TORCH_VERSION}"
COPY pyproject.toml ./
COPY kevolve ./kevolve
COPY services ./services
# hadolint ignore=DL3013
RUN pip install ".[exec]"

# ---- runtimes: code + knowledge base, non-root --------------------------------------
FROM deps-light AS runtime-light
COPY kb ./kb
COPY proto ./proto
USER 10001:10001
ENTRYPOINT ["python"]

FROM deps-cpu-probe AS runtime-cpu-probe
COPY kb ./kb
COPY proto ./proto
USER 10001:10001
ENTRYPOINT ["python"]

FROM deps-cpu AS runtime-cpu
COPY kb ./kb
COPY proto ./proto
USER 10001:10001
ENTRYPOINT ["python"]

FROM deps-cuda AS runtime-cuda
COPY kb ./kb
COPY proto ./proto
USER 10001:10001
ENTRYPOINT ["python"]

# ---- one target per service ----------------------------------------------------------
FROM runtime-cpu-probe AS controller
EXPOSE 50051 9000
CMD ["-m", "services.controller"]

FROM runtime-light AS retriever
EXPOSE 9001
CMD ["-m", "services.retriever"]

FROM runtime-cpu AS generator
EXPOSE 9002
CMD ["-m", "services.generator"]

FROM runtime-cpu AS evaluator-cpu
ENV TRITON_INTERPRET=1
EXPOSE 9003
CMD ["-m", "services.evaluator"]

FROM runtime-cpu AS profiler-cpu
ENV TRITON_INTERPRET=1
EXPOSE 9004
CMD ["-m", "services.profiler"]

FROM runtime-cuda AS evaluator-cuda
EXPOSE 9003
CMD ["-m", "services.evaluator"]

FROM ${CUDA_IMAGE} AS nsight
# Nsight Compute ships inside the CUDA devel image under /opt/nvidia/nsight-compute/<ver>.

FROM runtime-cuda AS profiler-cuda
COPY --from=nsight /opt/nvidia/nsight-compute /opt/nvidia/nsight-compute
USER 0
RUN ln -s "$(find /opt/nvidia/nsight-compute -maxdepth 2 -name ncu -type f -print -quit)" /usr/local/bin/ncu
USER 10001:10001
EXPOSE 9004
CMD ["-m", "services.profiler"]
