# Multi-stage build: a fully static binary (cgo SQLite linked statically) on a distroless base.
# The build command is identical to the one .ci/run runs on the host, since no Docker engine
# runs where this project is developed.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -tags 'sqlite_omit_load_extension netgo osusergo' -ldflags '-s -w -linkmode external -extldflags "-static"' -o /tmp/scalein-ci-static ./cmd/scalein

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /tmp/scalein-ci-static /scalein
# 0.0.0.0: a container is reached by its own address, never by its loopback, so it must listen
# on every interface; whoever can reach the port can then use the app. Publish the port only
# where that is meant, or put an authenticating proxy in front (docs/deploy.md, "Exposure").
# Names the app answers to besides localhost go in SCALEIN_ALLOWED_HOSTS (IP addresses always work).
ENV SCALEIN_ADDR=0.0.0.0:8080 SCALEIN_DB=/data/scalein.db
VOLUME /data
EXPOSE 8080
USER nonroot
ENTRYPOINT ["/scalein"]
