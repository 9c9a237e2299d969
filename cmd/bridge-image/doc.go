// Command bridge-image builds the bridge's container image without a
// container daemon: it assembles the image's one layer itself (the static
// bridge binary, an /etc/passwd naming the non-root user the bridge runs
// as, the CA certificates of Debian's ca-certificates package, and the
// directories for the config and the embedded store), writes an OCI image
// layout with go-containerregistry, and packs it into one tarball that
// `docker load`, `podman load`, `skopeo copy oci-archive:…` and `crane push`
// read. `make image` runs it; the Dockerfile at the repository's root
// builds the same image where a daemon and a registry are at hand.
//
// The layer is built from files rather than FROM a base image because no
// base image can be pulled where the bridge is built and tested; a static
// Go binary needs nothing from one but the user database and the CA
// bundle. File times are fixed (-epoch), so the same inputs give the same
// digests.
package main
