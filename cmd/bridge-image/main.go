package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's layout: what docs/http.md (Container image), the Dockerfile and the Kubernetes
// manifests rely on.
const (
	binaryPath = "/bridge"
	configDir  = "/etc/a2a-bridge"
	configPath = configDir + "/bridge.yaml"
	dataDir    = "/var/lib/a2a-bridge" // the embedded store's volume
	caPath     = "/etc/ssl/certs/ca-certificates.crt"
	// The user is distroless's "nonroot" id: high enough to collide with
	// no host account, and what Kubernetes policies expect of a
	// non-root image (runAsNonRoot checks the numeric id).
	uid, gid = 65532, 65532
	user     = "bridge"
	port     = "8080/tcp"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bridge-image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("bridge-image", flag.ContinueOnError)
	opt := options{}
	fs.StringVar(&opt.binary, "bin", "", "the static bridge `binary` (CGO_ENABLED=0 go build ./cmd/bridge) (required)")
	fs.StringVar(&opt.caBundle, "ca", caPath, "CA certificate bundle `file` to ship (Debian's ca-certificates)")
	fs.StringVar(&opt.out, "o", "a2a-agui-bridge.oci.tar", "the OCI image tarball to write")
	fs.StringVar(&opt.ref, "tag", "a2a-agui-bridge:dev", "the image `name:tag` recorded in the tarball")
	fs.StringVar(&opt.version, "version", "dev", "the org.opencontainers.image.version label")
	epoch := fs.Int64("epoch", 0, "Unix `seconds` for every file time and the image's creation time (reproducible digests)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if opt.binary == "" {
		return errors.New("-bin FILE is required")
	}
	opt.created = time.Unix(*epoch, 0).UTC()
	digest, err := build(opt)
	if err != nil {
		return err
	}
	fmt.Printf("%s %s %s\n", opt.out, opt.ref, digest)
	return nil
}

type options struct {
	binary, caBundle, out, ref, version string
	created                             time.Time
}

// build writes the image tarball and returns the image's manifest digest.
func build(opt options) (v1.Hash, error) {
	arch, err := staticLinuxArch(opt.binary)
	if err != nil {
		return v1.Hash{}, err
	}
	layerTar, err := rootfs(opt)
	if err != nil {
		return v1.Hash{}, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return v1.Hash{}, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: opt.created}, CreatedBy: "bridge-image: " + binaryPath + ", " + caPath + ", /etc/passwd",
	}})
	if err != nil {
		return v1.Hash{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: opt.created}
	cf.Config = imageConfig(opt)
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	return digest, writeArchive(img, opt)
}

// imageConfig is how the image runs: the bridge as the non-root user,
// serving the config mounted at configPath, from the store's directory
// (a relative store.path lands on the volume), its health checked by the
// bridge binary itself (there is no shell or curl in the image).
func imageConfig(opt options) v1.Config {
	return v1.Config{
		User:         fmt.Sprintf("%d:%d", uid, gid),
		Entrypoint:   []string{binaryPath},
		Cmd:          []string{"serve", "--config", configPath},
		WorkingDir:   dataDir,
		Env:          []string{"SSL_CERT_FILE=" + caPath},
		ExposedPorts: map[string]struct{}{port: {}},
		Volumes:      map[string]struct{}{dataDir: {}},
		StopSignal:   "SIGTERM",
		Healthcheck: &v1.HealthConfig{
			Test:        []string{"CMD", binaryPath, "health", "--config", configPath},
			Interval:    10 * time.Second,
			Timeout:     5 * time.Second,
			StartPeriod: 10 * time.Second,
			Retries:     3,
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "a2a-agui-bridge",
			"org.opencontainers.image.description": "Remote A2A agents in front of AG-UI frontends",
			"org.opencontainers.image.version":     opt.version,
		},
	}
}

// staticLinuxArch checks that the binary is a Linux executable with no
// dynamic loader (nothing in the image could load one) and returns its
// architecture in the image config's terms.
func staticLinuxArch(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: not a Linux binary: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%s is dynamically linked: build it with CGO_ENABLED=0", path)
		}
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	default:
		return "", fmt.Errorf("%s: unsupported machine %s", path, f.Machine)
	}
}

// rootfs is the image's one layer, as an uncompressed tar.
func rootfs(opt options) ([]byte, error) {
	bin, err := os.ReadFile(opt.binary)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(opt.caBundle)
	if err != nil {
		return nil, fmt.Errorf("%w (install Debian's ca-certificates, or pass -ca)", err)
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:a2a-agui-bridge:%s:/sbin/nologin\n", user, uid, gid, dataDir)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", user, gid)
	type entry struct {
		name     string
		mode     int64
		uid, gid int
		data     []byte // nil: a directory
	}
	entries := []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/ssl/", mode: 0o755},
		{name: "etc/ssl/certs/", mode: 0o755},
		{name: strings.TrimPrefix(caPath, "/"), mode: 0o644, data: ca},
		// The config is mounted here; the bridge only reads it.
		{name: strings.TrimPrefix(configDir, "/") + "/", mode: 0o755},
		{name: "tmp/", mode: 0o1777},
		{name: "var/", mode: 0o755},
		{name: "var/lib/", mode: 0o755},
		// Owned by the bridge's user: a volume mounted here starts with
		// the image's ownership, so the embedded store can be written.
		{name: strings.TrimPrefix(dataDir, "/") + "/", mode: 0o750, uid: uid, gid: gid},
		{name: strings.TrimPrefix(binaryPath, "/"), mode: 0o755, data: bin},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: opt.created, Format: tar.FormatPAX}
		if e.data == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeArchive writes img as an OCI image layout (index.json, oci-layout,
// blobs/) packed into one tar at opt.out, with the reference name both OCI
// tools (org.opencontainers.image.ref.name) and containerd-based Docker
// (io.containerd.image.name) read, plus the manifest.json of `docker
// save`, so Docker's older loader takes the same file.
func writeArchive(img v1.Image, opt options) error {
	dir, err := os.MkdirTemp("", "bridge-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": opt.ref,
		"io.containerd.image.name":          opt.ref,
	})); err != nil {
		return err
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	legacy := []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{{Config: "blobs/sha256/" + cfgName.Hex, RepoTags: []string{opt.ref}}}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		legacy[0].Layers = append(legacy[0].Layers, "blobs/sha256/"+d.Hex)
	}
	manifest, err := json.Marshal(legacy)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o644); err != nil {
		return err
	}
	return packDir(dir, opt.out, opt.created)
}

// packDir writes the files under dir into a tar at out, in a fixed order
// with fixed times and owners.
func packDir(dir, out string, mtime time.Time) error {
	tmp := out + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime, Mode: 0o644, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if d.IsDir() {
			h.Name += "/"
			h.Mode, h.Typeflag = 0o755, tar.TypeDir
			return tw.WriteHeader(h)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		h.Size = int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, out)
}
