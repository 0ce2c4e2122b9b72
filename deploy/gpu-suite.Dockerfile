# The image that deploy/k8s/gpu-suite-job.yaml runs: opbench's benchmarks built with CUDA and
# the scripts that run the suite and record it. Build it at the commit to measure:
#   docker build -f deploy/gpu-suite.Dockerfile \
#     --build-arg OPBENCH_GIT_COMMIT="$(git rev-parse HEAD)" -t opbench-gpu-suite:latest .
# (Not built in this project's CI: its machines have no container registry access.)
FROM nvidia/cuda:13.0.0-devel-ubuntu24.04 AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl build-essential pkg-config \
    && rm -rf /var/lib/apt/lists/*
RUN curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
ENV PATH=/root/.cargo/bin:/usr/local/cuda/bin:$PATH CUDA_ROOT=/usr/local/cuda CUDA_COMPUTE_CAP=90
WORKDIR /src
COPY . .
RUN cargo build --release --locked --features cuda \
    --bin layernorm_bench --bin gemm_bench --bin llm_bench --bin history

FROM nvidia/cuda:13.0.0-runtime-ubuntu24.04
COPY --from=build /src/target/release/layernorm_bench /src/target/release/gemm_bench \
    /src/target/release/llm_bench /src/target/release/history /opbench/bin/
COPY scripts /opbench/scripts
ARG OPBENCH_GIT_COMMIT
ENV OPBENCH_GIT_COMMIT=${OPBENCH_GIT_COMMIT} OPBENCH_GIT_DIRTY=0 OPBENCH_SUITE_BIN_DIR=/opbench/bin
WORKDIR /opbench
CMD ["bash", "scripts/ci/gpu-suite.sh", "--out", "/runs/full/default", "--artifacts", "/runs"]
