package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-agui-bridge/bridge/examples/agents"
)

// TestImageRunsTheBridge builds the image as `make image` does (a static
// bridge binary, then this tool), reads the tarball back with nothing but
// the OCI image-layout spec (index.json → manifest → config and layers,
// every blob checked against its digest), unpacks the root filesystem and
// runs the image's entrypoint as a runtime would: its user, working
// directory, environment and command line, chrooted into the unpacked
// filesystem when the test runs as root (CI does), so the binary sees only
// what the image ships. `check` resolves a demo agent's card, `serve`
// answers a run on the embedded store in the image's volume directory,
// and the image's own HEALTHCHECK command reports it healthy.
func TestImageRunsTheBridge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bridge")
	build := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/bridge")
	build.Dir = moduleRoot(t)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	archive := filepath.Join(dir, "image.tar")
	if err := run([]string{"-bin", bin, "-o", archive, "-tag", "a2a-agui-bridge:test"}); err != nil {
		t.Fatal(err)
	}

	img := readImage(t, archive)
	if img.ref != "a2a-agui-bridge:test" {
		t.Errorf("index names the image %q", img.ref)
	}
	cfg := img.config.Config
	if cfg.User == "" || strings.HasPrefix(cfg.User, "0") || cfg.User == "root" {
		t.Fatalf("the image runs as %q, want a non-root user", cfg.User)
	}
	if len(cfg.Healthcheck.Test) < 2 || cfg.Healthcheck.Test[0] != "CMD" {
		t.Fatalf("healthcheck %q: want an exec-form CMD (the image has no shell)", cfg.Healthcheck.Test)
	}
	rootfs := filepath.Join(dir, "rootfs")
	img.unpack(t, rootfs)
	for _, sh := range []string{"bin/sh", "usr/bin/sh"} {
		if _, err := os.Lstat(filepath.Join(rootfs, sh)); err == nil {
			t.Errorf("the image has a shell at /%s", sh)
		}
	}

	demo, err := agents.Start(t.Context(), "127.0.0.1:0", agents.Options{Delay: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { demo.Close() })
	port := freePort(t)
	// The config a user mounts at the image's config path: a relative
	// store path, which lands in the working directory (the volume).
	yaml := fmt.Sprintf("listen: 127.0.0.1:%s\nstore: {kind: embedded, path: bridge.db}\nagents:\n  - name: streamer\n    url: %q\n",
		port, demo.URL("streamer"))
	cfgFile := filepath.Join(rootfs, filepath.FromSlash(configPath))
	if err := os.WriteFile(cfgFile, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ct := container{t: t, rootfs: rootfs, cfg: cfg}

	// check: the command line the image runs, with "check" for "serve".
	args := slices.Clone(cfg.Cmd)
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("image Cmd %q: want serve …", cfg.Cmd)
	}
	args[0] = "check"
	out, err := ct.command(t.Context(), args...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "streamer") {
		t.Fatalf("check in the image: %v\n%s", err, out)
	}

	srv := ct.command(t.Context(), cfg.Cmd...)
	var serveLog bytes.Buffer
	srv.Stdout, srv.Stderr = &serveLog, &serveLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("serve's log:\n%s", serveLog.String())
		}
	})
	// The image's HEALTHCHECK command, until it passes.
	deadline := time.Now().Add(20 * time.Second)
	for {
		hc := ct.command(t.Context(), cfg.Healthcheck.Test[2:]...)
		hc.Path = cfg.Healthcheck.Test[1]
		if ct.chroot() == "" {
			hc.Path = filepath.Join(rootfs, hc.Path)
		}
		if out, err := hc.CombinedOutput(); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the healthcheck never passed: %v\n%s", err, out)
		}
		select {
		case err := <-exited:
			t.Fatalf("serve exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}

	body := `{"threadId":"th-1","runId":"run-1","messages":[{"id":"m1","role":"user","content":"Hello"}]}`
	resp, err := http.Post("http://127.0.0.1:"+port+"/agents/streamer", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("run: %d %s", resp.StatusCode, stream)
	}
	var text strings.Builder
	var last string
	for line := range strings.Lines(string(stream)) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type  string
			Delta json.RawMessage
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		last = ev.Type
		if ev.Type == "TEXT_MESSAGE_CONTENT" {
			var delta string
			if err := json.Unmarshal(ev.Delta, &delta); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			text.WriteString(delta)
		}
	}
	if last != "RUN_FINISHED" || text.String() != agents.StreamerAnswer("Hello") {
		t.Fatalf("the run through the image: last %s, text %q\n%s", last, text.String(), stream)
	}

	// The store was written by the image's user, in its volume directory.
	st, err := os.Stat(filepath.Join(rootfs, filepath.FromSlash(cfg.WorkingDir), "bridge.db"))
	if err != nil {
		t.Fatalf("the embedded store is not in the volume directory: %v", err)
	}
	if ct.chroot() != "" {
		if owner := st.Sys().(*syscall.Stat_t).Uid; fmt.Sprint(owner) != strings.Split(cfg.User, ":")[0] {
			t.Errorf("the store file belongs to uid %d, want the image's user %s", owner, cfg.User)
		}
	}

	// SIGTERM, as a runtime stops a container: a clean exit.
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	exited <- nil // for the cleanup
}

// container runs commands as the image's config says.
type container struct {
	t      *testing.T
	rootfs string
	cfg    imageRunConfig
}

// chroot is the root the commands run in: the unpacked filesystem when
// the test may chroot (it runs as root), else "" and the commands run on
// the host with the image's absolute paths moved under rootfs.
func (c container) chroot() string {
	if os.Geteuid() == 0 {
		return c.rootfs
	}
	return ""
}

func (c container) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.cfg.Entrypoint[0])
	cmd.Args = append(slices.Clone(c.cfg.Entrypoint), args...)
	cmd.Env = c.cfg.Env
	cmd.Dir = c.cfg.WorkingDir
	cmd.WaitDelay = 10 * time.Second
	if root := c.chroot(); root != "" {
		var uid, gid uint32
		if _, err := fmt.Sscanf(c.cfg.User, "%d:%d", &uid, &gid); err != nil {
			c.t.Fatalf("image user %q: want uid:gid", c.cfg.User)
		}
		cmd.Path = c.cfg.Entrypoint[0]
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		return cmd
	}
	c.t.Log("not root: running the image's entrypoint without chroot or its user")
	inRoot := func(p string) string { return filepath.Join(c.rootfs, filepath.FromSlash(p)) }
	cmd.Path, cmd.Dir = inRoot(cmd.Path), inRoot(cmd.Dir)
	for i, a := range cmd.Args[1:] {
		if strings.HasPrefix(a, "/") {
			cmd.Args[i+1] = inRoot(a)
		}
	}
	return cmd
}

// imageRunConfig is the part of the OCI image config a runtime reads.
type imageRunConfig struct {
	User        string
	Entrypoint  []string
	Cmd         []string
	Env         []string
	WorkingDir  string
	Healthcheck struct{ Test []string }
}

type image struct {
	ref    string
	blobs  map[string][]byte // by digest ("sha256:…"), checked
	layers []string
	config struct {
		OS, Architecture string
		Config           imageRunConfig `json:"config"`
	}
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

// readImage reads an OCI image-layout tarball per the image spec.
func readImage(t *testing.T, archive string) *image {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = b
		}
	}
	var ociLayout struct{ ImageLayoutVersion string }
	if err := json.Unmarshal(files["oci-layout"], &ociLayout); err != nil || ociLayout.ImageLayoutVersion != "1.0.0" {
		t.Fatalf("oci-layout %q: %v", files["oci-layout"], err)
	}
	img := &image{blobs: map[string][]byte{}}
	for name, b := range files {
		hexDigest, ok := strings.CutPrefix(name, "blobs/sha256/")
		if !ok {
			continue
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != hexDigest {
			t.Fatalf("blob %s does not match its digest", name)
		}
		img.blobs["sha256:"+hexDigest] = b
	}
	blob := func(d descriptor, mediaType string) []byte {
		t.Helper()
		b, ok := img.blobs[d.Digest]
		if !ok || int64(len(b)) != d.Size || d.MediaType != mediaType {
			t.Fatalf("descriptor %+v: want a %s blob of that size", d, mediaType)
		}
		return b
	}
	var index struct{ Manifests []descriptor }
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json %s: %v", files["index.json"], err)
	}
	img.ref = index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]
	var manifest struct {
		Config descriptor
		Layers []descriptor
	}
	if err := json.Unmarshal(blob(index.Manifests[0], "application/vnd.oci.image.manifest.v1+json"), &manifest); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(blob(manifest.Config, "application/vnd.oci.image.config.v1+json"), &img.config); err != nil {
		t.Fatal(err)
	}
	if img.config.OS != "linux" {
		t.Fatalf("image os %q", img.config.OS)
	}
	for _, l := range manifest.Layers {
		blob(l, "application/vnd.oci.image.layer.v1.tar+gzip")
		img.layers = append(img.layers, l.Digest)
	}
	return img
}

// unpack extracts the layers into dir, with their modes and (as root)
// their owners.
func (img *image) unpack(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range img.layers {
		zr, err := gzip.NewReader(bytes.NewReader(img.blobs[d]))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(bufio.NewReader(zr))
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			name := path.Clean("/" + h.Name)
			target := filepath.Join(dir, filepath.FromSlash(name))
			mode := os.FileMode(h.Mode).Perm()
			if h.Mode&0o1000 != 0 { // tar's sticky bit (/tmp)
				mode |= os.ModeSticky
			}
			switch h.Typeflag {
			case tar.TypeDir:
				if err := os.MkdirAll(target, 0o755); err != nil {
					t.Fatal(err)
				}
			case tar.TypeReg:
				b, err := io.ReadAll(tr)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(target, b, 0o600); err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatalf("layer entry %s of type %c: the image has only files and directories", h.Name, h.Typeflag)
			}
			if err := os.Chmod(target, mode); err != nil {
				t.Fatal(err)
			}
			if os.Geteuid() == 0 {
				if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}
