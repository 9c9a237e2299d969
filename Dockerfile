# The bridge's image, for machines with a container daemon and a registry:
#   docker build -t a2a-agui-bridge .
# `make image` builds the same image without either (cmd/bridge-image):
# one layer holding the static binary, /etc/passwd with the non-root user
# 65532 ("bridge"), Debian's CA bundle, and the config and store
# directories; the same entrypoint, user, volume and healthcheck.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static: the final image has no libc, no loader and no shell.
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/bridge ./cmd/bridge
RUN mkdir -p /out/etc/a2a-bridge /out/var/lib/a2a-bridge /out/tmp \
 && printf 'root:x:0:0:root:/root:/sbin/nologin\nbridge:x:65532:65532:a2a-agui-bridge:/var/lib/a2a-bridge:/sbin/nologin\n' >/out/etc/passwd \
 && printf 'root:x:0:\nbridge:x:65532:\n' >/out/etc/group \
 && chown 65532:65532 /out/var/lib/a2a-bridge && chmod 0750 /out/var/lib/a2a-bridge && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/ /
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532:65532
WORKDIR /var/lib/a2a-bridge
# The embedded store (store.path: bridge.db, relative to this directory).
VOLUME ["/var/lib/a2a-bridge"]
EXPOSE 8080
STOPSIGNAL SIGTERM
# No shell in the image: the bridge binary asks its own /healthz, at the
# listen address of the config it serves.
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/bridge", "health", "--config", "/etc/a2a-bridge/bridge.yaml"]
ENTRYPOINT ["/bridge"]
CMD ["serve", "--config", "/etc/a2a-bridge/bridge.yaml"]
