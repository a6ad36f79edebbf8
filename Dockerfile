# The tagflow image the Kubernetes manifests run (docs/kubernetes.md):
#   docker build -t REGISTRY/tagflow:TAG . && docker push REGISTRY/tagflow:TAG
#   tagflow k8s configs/kubernetes.yaml -o k8s-cartpole --image REGISTRY/tagflow:TAG
# Stage 1 builds with the project's own set-up (scripts/setup) and the release preset; stage 2
# holds only the two executables and the libraries they load.

FROM debian:12 AS build
WORKDIR /src
COPY . .
RUN bash scripts/setup \
 && cmake --preset release -DTAGFLOW_BUILD_TESTS=OFF \
 && cmake --build --preset release -j"$(nproc)" --target tagflow tagflow-torch

FROM debian:12-slim
# One package per library the executables load (readelf -d: NEEDED); apt brings their own.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libtorch1.13 libopenblas0-pthread \
      libcaf-core0.17 libcaf-io0.17 libcaf-openssl0.17 libssl3 \
      libzmq5 libyaml-cpp0.7 libprometheus-cpp-core1.0 libspdlog1.10 libfmt9 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/release/bin/tagflow /src/build/release/bin/tagflow-torch /usr/local/bin/
# The empty stand-ins for the libraries LibTorch names but never calls (cmake/README.md), where
# tagflow-torch looks first: $ORIGIN/../lib/tagflow.
COPY --from=build /src/build/release/lib/tagflow/ /usr/local/lib/tagflow/
# LibTorch on OpenBLAS's threaded build, as scripts/setup chooses.
RUN update-alternatives --set libblas.so.3-x86_64-linux-gnu \
      /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3
WORKDIR /var/run/tagflow
CMD ["tagflow", "--help"]
