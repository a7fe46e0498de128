# syntax=docker/dockerfile:1
# azolla's production image: the lean binary, the default build, which
# links no Temporal server (`azolla dev` needs the devserver tag, for
# laptops), on a small non-root runtime with git, which PATCH_DIAZOTROPH
# drives. docker-compose.yml builds it.
#
#   docker build -t azolla:local .

ARG GO_VERSION=1.26.8
ARG ALPINE_VERSION=3.24.1

FROM golang:${GO_VERSION}-alpine AS build
WORKDIR /src
COPY . .
# Extra build tags; none for production.
ARG GO_TAGS=""
# No `go mod download` first: it fetches the whole module graph, with the
# Temporal server and the cloud SDKs only the devserver build links. go
# build fetches the modules of the packages it compiles, and no others,
# into the module cache mount, which keeps them across source changes as a
# download layer would (a cache mount is never part of a layer anyway).
# modernc.org/sqlite is pure Go: a static binary, no C toolchain.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -tags "${GO_TAGS}" -ldflags "-s -w" -o /azolla ./cmd/azolla

FROM alpine:${ALPINE_VERSION}
# git and ssh for repositories, ca-certificates for HTTPS (Temporal Cloud,
# generators, git remotes), tzdata for timestamps in local time, bubblewrap
# for the executors' sandbox (it needs user namespaces, which Docker's
# default seccomp profile refuses: executor.sandbox auto then runs them
# unconfined and says so).
RUN apk add --no-cache bubblewrap ca-certificates git openssh-client tzdata \
    && addgroup -S -g 10001 azolla \
    && adduser -S -D -u 10001 -G azolla -h /home/azolla azolla \
    && install -d -o azolla -g azolla -m 0750 /var/lib/azolla
COPY --from=build /azolla /usr/local/bin/azolla
USER azolla:azolla
ENV AZOLLA_DATA_DIR=/var/lib/azolla
WORKDIR /var/lib/azolla
EXPOSE 7350
ENTRYPOINT ["/usr/local/bin/azolla"]
CMD ["--help"]
